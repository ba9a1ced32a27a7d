// The front end's tests (tests/frontend/frontend_tests.hpp) on Kokkos::Cuda.
#include <Kokkos_Core.hpp>

#ifdef KOKKOS_ENABLE_CUDA
#define KATTN_TEST_SPACE Kokkos::Cuda
#define KATTN_TEST_SPACE_NAME "Cuda"
// The cuda and cudnn backends are in the library when this file is built (tests/CMakeLists.txt).
#define KATTN_TEST_FAST 1
#include "frontend/frontend_tests.hpp"
#endif
