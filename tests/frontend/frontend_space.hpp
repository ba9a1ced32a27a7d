// The execution space under test for the Kokkos front end's tests (frontend_tests.hpp): the
// KATTN_TEST_* macros of Test_<Space>_FrontEnd.cpp as types and constants, the test-case macro
// and the helpers every concern's file (frontend_tests_<concern>.hpp) uses.
#pragma once

#include <string>
#include <type_traits>

#include "frontend/frontend_case.hpp"

#define KATTN_FE_TEST(name) TEST_CASE("frontend[" KATTN_TEST_SPACE_NAME "]/" name)

namespace kattn::test::frontend {

using Space = KATTN_TEST_SPACE;
constexpr bool fast_space = KATTN_TEST_FAST;
#ifndef KATTN_TEST_WIDE_KERNEL
#define KATTN_TEST_WIDE_KERNEL 0
#endif
constexpr bool wide_kernel = fast_space && KATTN_TEST_WIDE_KERNEL;

// The 16-bit element types this build's Kokkos has (host-only builds alias them to float).
#if !KOKKOS_HALF_T_IS_FLOAT && !KOKKOS_BHALF_T_IS_FLOAT
constexpr bool have_16bit = true;
using F16 = Kokkos::Experimental::half_t;
using BF16 = Kokkos::Experimental::bhalf_t;
#else
constexpr bool have_16bit = false;
using F16 = float;
using BF16 = float;
#endif
// The element type the fast kernels take where there are any, else f32.
using Fast = std::conditional_t<fast_space && have_16bit, BF16, float>;

inline bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

} // namespace kattn::test::frontend

using namespace kattn;
using namespace kattn::test::frontend;
