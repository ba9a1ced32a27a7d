// The conformance tool's judge must pass correct backends and fail incorrect ones; a judge that
// waves everything through would make `make conformance` meaningless.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "conformance/conformance_case.hpp"
#include "conformance/judge.hpp"
#include "conformance/runner.hpp"

using namespace kattn;
using namespace kattn::conformance;

namespace {

Case windowed_case(DType t, std::int64_t window_left, bool backward = false) {
  Case c;
  c.name = "unit";
  c.backward = backward;
  test::Spec& s = c.spec;
  s.dtype = t;
  s.B = 2, s.T = 40, s.S = 37, s.N = 2, s.K = 1, s.H = 64, s.Hv = 64;
  s.opt.window_left = window_left;
  s.opt.window_right = 0;
  s.seed = 11;
  describe(c);
  return c;
}

const Prepared::Output& output(const Prepared& p, const std::string& name) {
  for (const Prepared::Output& o : p.outputs)
    if (o.tensor == name)
      return o;
  FAIL("no output ", name);
  return p.outputs.front();
}

constexpr DType dtypes[] = {DType::f64, DType::f32, DType::f16, DType::bf16};

} // namespace

TEST_CASE("conformance: the built-in CPU backends pass the judge in every dtype") {
  for (DType t : dtypes)
    for (bool bwd : {false, true}) {
      INFO("dtype ", to_string(t), bwd ? " backward" : " forward");
      for (const Result& r :
           run_case(windowed_case(t, 5, bwd),
                    {Backend::reference, Backend::naive, Backend::portable}, {})) {
        INFO("backend ", r.backend, ": ", r.reason);
        CHECK(r.status != Status::fail);
        if (r.backend == "reference" || r.backend == "portable")
          CHECK(r.status == Status::pass); // both serve every option of this case
      }
    }
}

TEST_CASE("conformance: a window off by one fails the judge in every dtype") {
  // The "backend" output is the reference's own, for window_left 6 instead of 5: one key more
  // per row out of at most 6 changes the output by ~1/6 of |v|: every dtype must see it.
  for (DType t : dtypes) {
    INFO("dtype ", to_string(t));
    const Prepared good = prepare(windowed_case(t, 5));
    const Prepared wrong = prepare(windowed_case(t, 6));
    for (const std::string name : {"out", "lse"}) {
      const Prepared::Output& o = output(good, name);
      CHECK(judge(name, o.baseline, o.ref, o.baseline, o.floor).ok);
      CHECK_FALSE(judge(name, output(wrong, name).baseline, o.ref, o.baseline, o.floor).ok);
    }
  }
}

TEST_CASE("conformance: small perturbations and NaN fail the judge") {
  // Relative errors no correct implementation makes in that precision: 1e-3 in f32 (fp32
  // accumulation errs by ~1e-6), 1e-9 in f64, 4 ulps (2^-8 relative) in f16.
  const std::pair<DType, double> perturb[] = {
      {DType::f32, 1e-3}, {DType::f64, 1e-9}, {DType::f16, std::ldexp(1.0, -8)}};
  for (auto [t, rel] : perturb)
    for (bool bwd : {false, true}) {
      INFO("dtype ", to_string(t), bwd ? " backward" : " forward");
      const Prepared p = prepare(windowed_case(t, 5, bwd));
      for (const Prepared::Output& o : p.outputs) {
        INFO("tensor ", o.tensor);
        double big = 0;
        std::size_t at = 0;
        for (std::size_t i = 0; i < o.ref.size(); ++i)
          if (std::isfinite(o.ref[i]) && std::abs(o.ref[i]) > big)
            big = std::abs(o.ref[i]), at = i;
        std::vector<double> got = o.baseline;
        // LSE is fp32 in every dtype: 1e-4 relative is far beyond its rounding.
        got[at] += (o.tensor == "lse" ? 1e-4 : rel) * big;
        CHECK_FALSE(judge(o.tensor, got, o.ref, o.baseline, o.floor).ok);
        got = o.baseline;
        got[at] = std::numeric_limits<double>::quiet_NaN();
        CHECK_FALSE(judge(o.tensor, got, o.ref, o.baseline, o.floor).ok);
      }
    }
}

TEST_CASE("conformance: a random case is a pure function of (seed, index)") {
  CHECK(random_case(5, 57).description == random_case(5, 57).description);
  CHECK(random_case(5, 57).description != random_case(5, 58).description);
  CHECK(random_case(5, 57).description != random_case(6, 57).description);
}

TEST_CASE("conformance: the gpu mix draws only what the GPU kernel backends serve") {
  int multi_tile = 0;
  for (std::int64_t i = 0; i < 2000; ++i) {
    const Case c = random_case(7, i, Mix::gpu);
    const test::Spec& s = c.spec;
    INFO(c.description);
    CHECK((s.dtype == DType::bf16 || s.dtype == DType::f16));
    CHECK((s.H == 64 || s.H == 128 || s.H == 256));
    CHECK((s.Hv == s.H || s.Hv == 64 || s.Hv == 128));
    CHECK_FALSE(s.mask);
    CHECK(s.alibi == 0);
    CHECK(s.opt.dropout_p == 0.0);
    CHECK((!s.bias || s.bias_dtype == s.dtype));
    multi_tile += s.T > 128 || s.S > 128;
  }
  CHECK(multi_tile > 100); // sequences over several of the sm90 kernel's 128-row tiles
  CHECK(random_case(7, 3, Mix::gpu).description == random_case(7, 3, Mix::gpu).description);
}
