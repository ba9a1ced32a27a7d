// The process-wide registry of every backend this build has, and the convenience entry points
// that run on it.
#include "kokkosattn/dispatch.hpp"
#include "kokkosattn/registry.hpp"
#include "naive/naive.hpp"
#include "portable/portable.hpp"
#include "reference/reference.hpp"
#ifdef KOKKOSATTN_HAS_CUDA_KERNELS
#include "cuda_backend.hpp"
#endif
#ifdef KOKKOSATTN_HAS_CUDNN
#include "cudnn/cudnn.hpp"
#endif
#ifdef KOKKOSATTN_HAS_HIP
#include "kattn_hip/hip_backend.hpp"
#endif

namespace kattn {

const Registry& default_registry() {
  // Function-local static: built once, thread-safe since C++11.
  static const Registry registry = [] {
    Registry r;
    r.add(reference::make_reference_backend());
    r.add(naive::make_naive_backend());
#ifdef KOKKOSATTN_HAS_CUDA_KERNELS
    r.add(kattn::cuda::make_cuda_backend());
#endif
#ifdef KOKKOSATTN_HAS_CUDNN
    r.add(cudnn::make_cudnn_backend());
#endif
#ifdef KOKKOSATTN_HAS_HIP
    r.add(hip_kernels::make_hip_backend());
#endif
    r.add(portable::make_portable_backend());
    return r;
  }();
  return registry;
}

void attention_forward(const ForwardProblem& p, const ExecContext& x) {
  run_forward(default_registry(), p, x);
}

void attention_backward(const BackwardProblem& p, const ExecContext& x) {
  run_backward(default_registry(), p, x);
}

} // namespace kattn
