// What the build's Kokkos Kernels hands its GEMMs to (its configuration header), for explain().
#include "naive/naive_backend.hpp"

#include "KokkosAttn_config.hpp"

#if KOKKOSATTN_HAS_KOKKOSKERNELS
#include <KokkosKernels_config.h>
#endif

namespace kattn::naive {

std::string kokkos_kernels_tpls() {
#if !KOKKOSATTN_HAS_KOKKOSKERNELS
  return "";
#else
  std::string tpls;
  [[maybe_unused]] const auto add = [&](const char* name) {
    tpls += tpls.empty() ? name : std::string(", ") + name;
  };
#ifdef KOKKOSKERNELS_ENABLE_TPL_BLAS
  add("BLAS");
#endif
#ifdef KOKKOSKERNELS_ENABLE_TPL_CUBLAS
  add("cuBLAS");
#endif
#ifdef KOKKOSKERNELS_ENABLE_TPL_ROCBLAS
  add("rocBLAS");
#endif
  return tpls.empty() ? "no TPL: Kokkos Kernels' own kernel" : "TPL: " + tpls;
#endif
}

} // namespace kattn::naive
