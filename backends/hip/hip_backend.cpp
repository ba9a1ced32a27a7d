// The `hip` registry entry: ExecContext + ForwardProblem -> FlashFwdParams -> flash_fwd.
#include "kokkosattn/builtin_backends.hpp"

#include <stdexcept>
#include <string>

#include "hip/hip_params.hpp"
#include "kattn_hip/flash_fwd.hpp"
#include "kokkosattn/errors.hpp"

namespace kattn::hip_kernels {
namespace {

class HipBackend final : public BackendImpl {
public:
  Backend id() const override { return Backend::hip; }
  std::string description() const override { return device_description(); }

  Support supports(const ForwardProblem& p, const Dims& d, const ExecContext& x) const override {
    if (x.device != Device::hip)
      return Support::no("needs a HIP execution context (ExecContext::device == hip)");
    if (const std::string why = device_unsupported_reason(); !why.empty())
      return Support::no(why);
    const FlashParamsResult made = make_flash_fwd_params(p, d, MemorySpace::hip_device);
    return made.ok() ? Support::yes() : Support::no(made.reason);
  }
  Support supports(const BackwardProblem&, const Dims&, const ExecContext&) const override {
    return Support::no("backward not implemented in the hip kernels (forward only)");
  }
  void forward(const ForwardProblem& p, const Dims& d, const ExecContext& x) const override {
    const FlashParamsResult made = make_flash_fwd_params(p, d, MemorySpace::hip_device);
    if (!made.ok())
      throw Unsupported("hip: " + made.reason);
    try {
      flash_fwd(made.params, static_cast<ihipStream_t*>(x.stream));
    } catch (const std::invalid_argument& e) {
      throw Unsupported(e.what());
    } catch (const std::runtime_error& e) {
      throw BackendFailure(e.what());
    }
  }
  void backward(const BackwardProblem&, const Dims&, const ExecContext&) const override {
    throw Unsupported("hip: backward not implemented in the hip kernels (forward only)");
  }
};

} // namespace

std::unique_ptr<BackendImpl> make_hip_backend() {
  return std::make_unique<HipBackend>();
}

} // namespace kattn::hip_kernels
