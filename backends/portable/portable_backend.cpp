// The portable backend as a registry entry: what it supports, and which Kokkos execution space
// instantiation runs a problem. Execution-context conventions are the naive backend's: a named
// Kokkos space (and instance) when called through the Kokkos front end, else the default space
// of the context's device.
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>

#include "kokkos_common/kokkos_target.hpp"
#include "kokkosattn/builtin_backends.hpp"
#include "kokkosattn/detail/float_scale.hpp"
#include "kokkosattn/errors.hpp"
#include "portable/portable_kernel_choice.hpp"
#include "portable/portable_params.hpp"
#include "portable/portable_run.hpp"
#include "portable/portable_tile.hpp"

namespace kattn::portable {
namespace {

namespace kc = kattn::kokkos_common;

class PortableBackend final : public BackendImpl {
public:
  Backend id() const override { return Backend::portable; }
  // Gathered into contiguous scratch before the usual kernels (portable_paged_gather.hpp).
  bool serves_paged_kv() const override { return true; }

  std::string description() const override {
    using HostFwd = ForwardTiles<float, true>;
    return kc::kokkos_description() + "; FlashAttention-2 tiles " +
           std::to_string(Tiles<float>::Br) + "x" + std::to_string(Tiles<float>::Bc) +
           " (fp32 forward on host spaces: " + std::to_string(HostFwd::Br) + "x" +
           std::to_string(HostFwd::Bc) + "; GPU spaces: per-thread register tiles up to value " +
           "head dim " + std::to_string(device_forward_max_hv) + ", backward up to head dim " +
           std::to_string(device_backward_max_hd) + " without score extras, dropout or dbias" +
           "; fp32 accumulation; f64 in f64), deterministic backward";
  }

  Support supports(const ForwardProblem& p, const Dims& d, const ExecContext& x) const override {
    if (const Support s = limits(d, p.q.dtype); !s.ok)
      return s;
    Support s = kc::check_runnable("portable", p.q.dtype, kc::named_tensors(p), x);
    if (!s.ok)
      return s;
    const bool device = kc::resolve(x, "portable").memory != MemorySpace::host;
    const ForwardChoice c = choose_forward(device, d);
    if (!c.why_not.empty())
      return Support::no(c.why_not);
    s.kernel = d.paged ? "paged_gather, then " + c.kernel : c.kernel;
    return s;
  }

  Support supports(const BackwardProblem& p, const Dims& d, const ExecContext& x) const override {
    if (const Support s = limits(d, p.forward.q.dtype); !s.ok)
      return s;
    Support s = kc::check_runnable("portable", p.forward.q.dtype, kc::named_tensors(p), x);
    if (!s.ok)
      return s;
    const bool device = kc::resolve(x, "portable").memory != MemorySpace::host;
    const BackwardChoice c =
        choose_backward(device, d, plain_backward(p, d), p.forward.q.dtype != DType::f64);
    if (!c.why_not.empty())
      return Support::no(c.why_not);
    s.kernel = c.kernel;
    return s;
  }

private:
  // What the tiles can represent: the scale in their accumulator (float unless f64), and head
  // dims (team scratch and register blocks are sized with ints; far below 2^31 a team's rows
  // no longer fit any scratch level).
  static Support limits(const Dims& d, DType dtype) {
    if (dtype != DType::f64)
      if (std::string why = float_scale_limit(d, "portable"); !why.empty())
        return Support::no(why);
    constexpr std::int64_t max_head_dim = 65536;
    if (d.H > max_head_dim || d.Hv > max_head_dim)
      return Support::no("portable: head dims up to " + std::to_string(max_head_dim) +
                         " (team scratch), got H=" + std::to_string(d.H) +
                         " Hv=" + std::to_string(d.Hv));
    return Support::yes();
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
