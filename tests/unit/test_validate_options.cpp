// Validation of Options: scale, softcap, dropout and its Philox counter limits, windows and
// causal. Each bad value raises InvalidArgument naming the option, the expected range and the
// value that came, before any backend runs; out and lse stay untouched.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "common/validate_fixture.hpp"

using namespace kattn;
using namespace kattn::test;

namespace {
constexpr double nan_v = std::numeric_limits<double>::quiet_NaN();
constexpr double inf_v = std::numeric_limits<double>::infinity();
} // namespace

TEST_CASE("semantics/errors: NaN scale") {
  ForwardFixture f;
  f.p.options.scale = nan_v;
  expect_invalid(f.p, {"options.scale: expected a finite value > 0, got nan"}, f.outputs());
}

TEST_CASE("semantics/errors: negative scale") {
  ForwardFixture f;
  f.p.options.scale = -0.5;
  expect_invalid(f.p, {"options.scale: expected a finite value > 0, got -0.5"}, f.outputs());
}

TEST_CASE("semantics/errors: zero scale") {
  ForwardFixture f;
  f.p.options.scale = 0.0;
  expect_invalid(f.p, {"options.scale: expected a finite value > 0, got 0"}, f.outputs());
}

TEST_CASE("semantics/errors: infinite scale") {
  ForwardFixture f;
  f.p.options.scale = inf_v;
  expect_invalid(f.p, {"options.scale: expected a finite value > 0, got inf"}, f.outputs());
}

TEST_CASE("semantics/errors: NaN softcap") {
  ForwardFixture f;
  f.p.options.softcap = nan_v;
  expect_invalid(f.p, {"options.softcap: expected a finite value >= 0", "got nan"}, f.outputs());
}

TEST_CASE("semantics/errors: negative softcap") {
  ForwardFixture f;
  f.p.options.softcap = -30.0;
  expect_invalid(f.p, {"options.softcap: expected a finite value >= 0", "got -30"}, f.outputs());
}

TEST_CASE("semantics/errors: dropout probability 1") {
  ForwardFixture f;
  f.p.options.dropout_p = 1.0;
  expect_invalid(f.p, {"options.dropout_p: expected a probability in [0, 1), got 1"}, f.outputs());
}

TEST_CASE("semantics/errors: negative dropout probability") {
  ForwardFixture f;
  f.p.options.dropout_p = -0.1;
  expect_invalid(f.p, {"options.dropout_p: expected a probability in [0, 1), got -0.1"},
                 f.outputs());
}

TEST_CASE("semantics/errors: NaN dropout probability") {
  ForwardFixture f;
  f.p.options.dropout_p = nan_v;
  expect_invalid(f.p, {"options.dropout_p: expected a probability in [0, 1), got nan"},
                 f.outputs());
}

TEST_CASE("semantics/errors: dropout offset beyond 32 bits") {
  ForwardFixture f;
  f.p.options.dropout_p = 0.1;
  f.p.options.dropout_offset = std::uint64_t{1} << 32;
  expect_invalid(f.p, {"options.dropout_offset: expected < 2^32", "got 4294967296"}, f.outputs());
}

namespace {
// A problem too large to allocate: validation never reads q/k/v/out, so any non-null pointer
// will do; no backend may ever see it.
ForwardProblem huge_problem(std::int64_t B, std::int64_t T, std::int64_t S, std::int64_t N) {
  // Validated only, never read: fake addresses, out far from the inputs (which may share one).
  void* const in = reinterpret_cast<void*>(64);
  void* const out = reinterpret_cast<void*>(std::uintptr_t{1} << 50);
  ForwardProblem p;
  p.q = Tensor::contiguous(in, DType::f16, {B, T, N, 64});
  p.k = Tensor::contiguous(in, DType::f16, {B, S, 1, 64});
  p.v = Tensor::contiguous(in, DType::f16, {B, S, 1, 64});
  p.out = Tensor::contiguous(out, DType::f16, {B, T, N, 64});
  return p;
}
} // namespace

TEST_CASE("semantics/dropout: limits of the Philox counters hold only with dropout") {
  // The same huge problems as the tests below are valid without dropout, so those tests fail
  // for the dropout limit alone.
  CHECK_NOTHROW((void)validate(huge_problem(std::int64_t{1} << 17, 1, 1, std::int64_t{1} << 15)));
  CHECK_NOTHROW((void)validate(huge_problem(1, std::int64_t{1} << 32, 1, 1)));
  CHECK_NOTHROW((void)validate(huge_problem(1, 1, std::int64_t{1} << 34, 1)));
  ForwardProblem p = huge_problem(1, (std::int64_t{1} << 32) - 1, (std::int64_t{1} << 34) - 1, 1);
  p.options.dropout_p = 0.5;
  CHECK_NOTHROW((void)validate(p));
}

TEST_CASE("semantics/errors: dropout with B*N of 2^32 heads") {
  ForwardProblem p = huge_problem(std::int64_t{1} << 17, 1, 1, std::int64_t{1} << 15);
  p.options.dropout_p = 0.1;
  expect_invalid(p, {"options.dropout_p: expected B*N < 2^32", "got B*N = 131072*32768"}, {});
}

TEST_CASE("semantics/errors: dropout with T of 2^32") {
  ForwardProblem p = huge_problem(1, std::int64_t{1} << 32, 1, 1);
  p.options.dropout_p = 0.1;
  expect_invalid(p, {"options.dropout_p: expected T < 2^32", "got T = 4294967296"}, {});
}

TEST_CASE("semantics/errors: dropout with S of 2^34") {
  ForwardProblem p = huge_problem(1, 1, std::int64_t{1} << 34, 1);
  p.options.dropout_p = 0.1;
  expect_invalid(p, {"options.dropout_p: expected S < 2^34", "got S = 17179869184"}, {});
}

TEST_CASE("semantics/errors: window_left below -1") {
  ForwardFixture f;
  f.p.options.window_left = -3;
  expect_invalid(f.p, {"options.window_left: expected >= -1, got -3"}, f.outputs());
}

TEST_CASE("semantics/errors: window_right below -1") {
  ForwardFixture f;
  f.p.options.window_right = -2;
  expect_invalid(f.p, {"options.window_right: expected >= -1, got -2"}, f.outputs());
}

TEST_CASE("semantics/errors: causal with window_right 3") {
  ForwardFixture f;
  f.p.options.causal = true;
  f.p.options.window_right = 3;
  expect_invalid(f.p,
                 {"options.window_right: expected -1 or 0 with options.causal = true", "got 3"},
                 f.outputs());
}

TEST_CASE("semantics/errors: backend id outside the enum") {
  ForwardFixture f;
  f.p.options.backend = static_cast<Backend>(99);
  expect_invalid(f.p, {"options.backend: expected one of auto", "got value 99"}, f.outputs());
}
