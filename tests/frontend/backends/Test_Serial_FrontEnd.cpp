// The front end's tests (tests/frontend/frontend_tests.hpp) on Kokkos::Serial.
#include <Kokkos_Core.hpp>

#ifdef KOKKOS_ENABLE_SERIAL
#define KATTN_TEST_SPACE Kokkos::Serial
#define KATTN_TEST_SPACE_NAME "Serial"
#define KATTN_TEST_FAST 0
#include "frontend/frontend_tests.hpp"
#endif
