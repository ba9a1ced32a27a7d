// The portable backend as a registry entry: what it supports, and which Kokkos execution space
// instantiation runs a problem. Execution-context conventions are the naive backend's: a named
// Kokkos space (and instance) when called through the Kokkos front end, else the default space
// of the context's device.
#include <Kokkos_Core.hpp>

#include <string>

#include "kokkos_common/kokkos_target.hpp"
#include "kokkosattn/builtin_backends.hpp"
#include "kokkosattn/errors.hpp"
#include "portable/portable_run.hpp"
#include "portable/portable_tile.hpp"

namespace kattn::portable {
namespace {

namespace kc = kattn::kokkos_common;

class PortableBackend final : public BackendImpl {
public:
  Backend id() const override { return Backend::portable; }

  std::string description() const override {
    using HostFwd = ForwardTiles<float, true>;
    return kc::kokkos_description() + "; FlashAttention-2 tiles " +
           std::to_string(Tiles<float>::Br) + "x" + std::to_string(Tiles<float>::Bc) +
           " (fp32 forward on host spaces: " + std::to_string(HostFwd::Br) + "x" +
           std::to_string(HostFwd::Bc) + "; fp32 accumulation; f64 in f64), deterministic backward";
  }

  Support supports(const ForwardProblem& p, const Dims&, const ExecContext& x) const override {
    return kc::check_runnable("portable", p.q.dtype, kc::named_tensors(p), x);
  }

  Support supports(const BackwardProblem& p, const Dims&, const ExecContext& x) const override {
    return kc::check_runnable("portable", p.forward.q.dtype, kc::named_tensors(p), x);
  }

  void forward(const ForwardProblem& p, const Dims& d, const ExecContext& x) const override {
    // Direct callers skip dispatch's support check; nothing is written unless it passes.
    const Support s = supports(p, d, x);
    if (!s.ok)
      throw Unsupported(s.reason);
    kc::on_target("portable", x, [&](const auto& exec) { forward_on(exec, p, d); });
  }

  void backward(const BackwardProblem& p, const Dims& d, const ExecContext& x) const override {
    const Support s = supports(p, d, x);
    if (!s.ok)
      throw Unsupported(s.reason);
    kc::on_target("portable", x, [&](const auto& exec) { backward_on(exec, p, d); });
  }
};

} // namespace

std::unique_ptr<BackendImpl> make_portable_backend() {
  return std::make_unique<PortableBackend>();
}

} // namespace kattn::portable
