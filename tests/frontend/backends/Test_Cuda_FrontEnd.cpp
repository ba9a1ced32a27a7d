// The front end's tests (tests/frontend/frontend_tests.hpp) on Kokkos::Cuda.
#include <Kokkos_Core.hpp>

#include "KokkosAttn_config.hpp"

#ifdef KOKKOS_ENABLE_CUDA
#define KATTN_TEST_SPACE Kokkos::Cuda
#define KATTN_TEST_SPACE_NAME "Cuda"
// The cuda and cudnn backends are in the library when this file is built (tests/CMakeLists.txt).
#define KATTN_TEST_FAST 1
// f32 and f64 Views reach the cuda backend's kernel for them (head dims 64 and 128) where it
// is built.
#define KATTN_TEST_WIDE_KERNEL KOKKOSATTN_HAS_CUDA_KERNELS
#include "frontend/frontend_tests.hpp"
#endif
