// The cuda backend's registry entry: the problem as the kernels' params (gpu_common/: nothing
// touches tensor data), then the kernel family's own check (choose_kernel, whose kernel name
// supports() reports), and the forward.
#include "cuda/cuda_backend.hpp"

#include <string>

#include "gpu_common/flash_params.hpp"
#include "kattn_cuda/flash_bwd.hpp"
#include "kattn_cuda/flash_fwd.hpp"
#include "kokkosattn/dispatch.hpp"
#include "kokkosattn/errors.hpp"
#include "kokkosattn/validate.hpp"

namespace kattn::cuda {
namespace {

// The problem as the kernels' params, or why our GPU kernels cannot take it.
FlashParamsResult params_of(const ForwardProblem& p, const Dims& d, const ExecContext& x) {
  if (x.device != Device::cuda) {
    FlashParamsResult r;
    r.reason = "needs a CUDA execution context (ExecContext::device == cuda)";
    return r;
  }
  return make_flash_params(p, d, MemorySpace::cuda_device, "in the cuda backend");
}

FlashBwdParamsResult params_of(const BackwardProblem& p, const Dims& d, const ExecContext& x) {
  if (x.device != Device::cuda) {
    FlashBwdParamsResult r;
    r.reason = "needs a CUDA execution context (ExecContext::device == cuda)";
    return r;
  }
  return make_flash_bwd_params(p, d, MemorySpace::cuda_device, "in the cuda backend");
}

class CudaBackend final : public BackendImpl {
public:
  Backend id() const override { return Backend::cuda; }
  std::string description() const override {
    return "hand-written flash attention, forward and backward: " + cuda_kernels::built_families() +
           "; a split-KV decode kernel (paged KV)";
  }

  // The decode kernel reads paged caches (cuda/decode/); the flash families refuse them.
  bool serves_paged_kv() const override { return true; }
  Support supports(const ForwardProblem& p, const Dims& d, const ExecContext& x) const override {
    const FlashParamsResult made = params_of(p, d, x);
    if (!made.ok())
      return Support::no(made.reason);
    const cuda_kernels::KernelChoice c = cuda_kernels::choose_kernel(made.params);
    if (c.family == cuda_kernels::KernelFamily::none)
      return Support::no(c.reason);
    return Support::yes(c.name);
  }
  Support supports(const BackwardProblem& p, const Dims& d, const ExecContext& x) const override {
    const FlashBwdParamsResult made = params_of(p, d, x);
    if (!made.ok())
      return Support::no(made.reason);
    const cuda_kernels::KernelChoice c = cuda_kernels::choose_bwd_kernel(made.params);
    if (c.family == cuda_kernels::KernelFamily::none)
      return Support::no(c.reason);
    return Support::yes(c.name);
  }
  void forward(const ForwardProblem& p, const Dims& d, const ExecContext& x) const override {
    const FlashParamsResult made = params_of(p, d, x);
    if (!made.ok())
      throw Unsupported("cuda: " + made.reason);
    cuda_kernels::flash_fwd(made.params, static_cast<CUstream_st*>(x.stream));
  }
  void backward(const BackwardProblem& p, const Dims& d, const ExecContext& x) const override {
    const FlashBwdParamsResult made = params_of(p, d, x);
    if (!made.ok())
      throw Unsupported("cuda: " + made.reason);
    cuda_kernels::flash_bwd(made.params, static_cast<CUstream_st*>(x.stream));
  }
};

const Registry& only_cuda() {
  static const Registry r = [] {
    Registry reg;
    reg.add(make_cuda_backend());
    return reg;
  }();
  return r;
}

} // namespace

std::unique_ptr<BackendImpl> make_cuda_backend() {
  return std::make_unique<CudaBackend>();
}

void forward(const ForwardProblem& p, CUstream_st* stream) {
  ForwardProblem forced = p;
  forced.options.backend = Backend::cuda;
  ExecContext x;
  x.device = Device::cuda;
  x.stream = stream;
  run_forward(only_cuda(), forced, x);
}

std::string kernel_for(const ForwardProblem& p, std::string* why) {
  const Dims d = validate(p);
  const FlashParamsResult made =
      make_flash_params(p, d, MemorySpace::cuda_device, "in the cuda backend");
  if (!made.ok()) {
    if (why)
      *why = made.reason;
    return {};
  }
  const cuda_kernels::KernelChoice c = cuda_kernels::choose_kernel(made.params);
  if (why)
    *why = c.reason;
  return c.family == cuda_kernels::KernelFamily::none ? std::string() : c.name;
}

} // namespace kattn::cuda
