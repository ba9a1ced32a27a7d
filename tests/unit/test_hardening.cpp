// Regression tests of issue 20 (Hardening): inputs that a careless or hostile caller may pass and
// that once crashed, overflowed or were silently misread. Each test is named after its defect.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "common/reference_helpers.hpp"
#include "common/reference_problem.hpp"
#include "kokkosattn/dispatch.hpp"
#include "kokkosattn/errors.hpp"
#include "kokkosattn/validate.hpp"

using namespace kattn;
using namespace kattn::test;

namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

// out and lse of `backend` on `a`'s inputs with the given windows (outputs poisoned first).
std::vector<double> run(Attn& a, Backend backend, std::int64_t left, std::int64_t right) {
  poison(a.out.view);
  poison(a.lse.view());
  ForwardProblem p = a.forward_problem();
  p.options.backend = backend;
  p.options.window_left = left;
  p.options.window_right = right;
  run_forward(default_registry(), p, ExecContext{});
  std::vector<double> r = a.out_values();
  const std::vector<double> lse = a.lse_values();
  r.insert(r.end(), lse.begin(), lse.end());
  return r;
}

} // namespace

// Issue 20 item 2: INT64_MAX overflowed i + d - L in every mask rule (rows came back 0 / -inf).
TEST_CASE("semantics/window: windows of T + S keys or more, up to INT64_MAX, act as unbounded") {
  for (Backend backend : {Backend::reference, Backend::naive, Backend::portable})
    for (Alignment al : {Alignment::top_left, Alignment::bottom_right})
      for (auto [T, S] : {std::pair<std::int64_t, std::int64_t>{5, 7}, {7, 5}}) {
        Spec s = spec_of(2, T, S, 2, 1, 8, 8);
        s.dtype = DType::f32;
        s.opt.alignment = al;
        INFO("backend " << to_string(backend) << " " << to_string(al) << " T=" << T << " S=" << S);
        Attn a(s);
        const std::vector<double> unbounded = run(a, backend, -1, -1);
        CHECK(run(a, backend, kMax, kMax) == unbounded);
        CHECK(run(a, backend, T + S, kMax - 1) == unbounded);
        CHECK(run(a, backend, kMax, 0) == run(a, backend, -1, 0)); // causal with a huge left
        // T + S - 1 still cuts (bottom-right, T > S: row 0's diagonal is key S - T < 0).
        ForwardProblem p = a.forward_problem();
        p.options.window_left = T + S - 1;
        CHECK(validate(p).window_left == T + S - 1);
        p.options.window_left = T + S;
        CHECK(validate(p).window_left == -1);
      }
}

// Issue 20 item 6: Alignment{7} was read as bottom_right (a bad Backend was already refused).
TEST_CASE("semantics/errors: options.alignment outside the enum is refused, naming it") {
  Attn a(spec_of(1, 4, 4, 1, 1, 8, 8));
  poison(a.out.view);
  ForwardProblem p = a.forward_problem();
  p.options.alignment = static_cast<Alignment>(7);
  try {
    validate(p);
    FAIL("Alignment{7} must be refused");
  } catch (const InvalidArgument& e) {
    CHECK(std::string(e.what()).find("options.alignment: expected top_left or bottom_right, "
                                     "got value 7") != std::string::npos);
  }
  CHECK(to_string(static_cast<Alignment>(7)) == "unknown");
}
