// The front end's tests (tests/frontend/frontend_tests.hpp) on Kokkos::OpenMP.
#include <Kokkos_Core.hpp>

#ifdef KOKKOS_ENABLE_OPENMP
#define KATTN_TEST_SPACE Kokkos::OpenMP
#define KATTN_TEST_SPACE_NAME "OpenMP"
#define KATTN_TEST_FAST 0
#include "frontend/frontend_tests.hpp"
#endif
