// Regression tests of issue 20 (Hardening): inputs that a careless or hostile caller may pass and
// that once crashed, overflowed or were silently misread. Each test is named after its defect.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "common/reference_helpers.hpp"
#include "common/reference_problem.hpp"
#include "kokkosattn/auto_policy.hpp"
#include "kokkosattn/dispatch.hpp"
#include "kokkosattn/errors.hpp"
#include "kokkosattn/validate.hpp"

using namespace kattn;
using namespace kattn::test;

namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

// out and lse of `backend` on `a` with these options (outputs poisoned first).
std::vector<double> run_with(Attn& a, Backend backend, const Options& o) {
  poison(a.out.view);
  poison(a.lse.view());
  ForwardProblem p = a.forward_problem();
  p.options = o;
  p.options.backend = backend;
  run_forward(default_registry(), p, ExecContext{});
  std::vector<double> r = a.out_values();
  const std::vector<double> lse = a.lse_values();
  r.insert(r.end(), lse.begin(), lse.end());
  return r;
}

// The same with the spec's options and these windows.
std::vector<double> run(Attn& a, Backend backend, std::int64_t left, std::int64_t right) {
  Options o = a.forward_problem().options;
  o.window_left = left;
  o.window_right = right;
  return run_with(a, backend, o);
}

bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
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

// Issue 20 item 1: extents and strides whose largest offset or size overflowed int64 passed
// validation, then reference, portable and auto segfaulted (naive asked for a 224 TiB buffer).
TEST_CASE("semantics/strides: extents and strides whose offsets or sizes overflow int64 are "
          "refused, naming the tensor") {
  Attn a(spec_of(2, 4, 4, 1, 1, 8, 8));
  poison(a.out.view);
  const ForwardProblem good = a.forward_problem();
  CHECK(refusal_of(good).empty());

  ForwardProblem p = good; // largest offset (B - 1) * stride wraps
  p.q.stride[0] = kMax / 2 + 1;
  CHECK(refusal_of(p).find("q: expected a tensor whose size and largest element offset fit in "
                           "int64 bytes") != std::string::npos);

  p = good; // the offset fits in elements, not in bytes
  p.out.stride[0] = kMax / 4;
  CHECK(refusal_of(p).find("out: expected a tensor whose size") != std::string::npos);

  p = good; // zero strides: any extent addresses one element, but the size overflows
  p.k.extent[1] = p.v.extent[1] = std::int64_t{1} << 62;
  p.k.stride = {0, 0, 0, 0};
  CHECK(refusal_of(p).find("k: expected a tensor whose size") != std::string::npos);

  p = good; // H = Hv = INT64_MAX: the size of q in bytes
  p.q.extent[3] = p.k.extent[3] = p.v.extent[3] = p.out.extent[3] = kMax;
  CHECK(refusal_of(p).find("q: expected a tensor whose size") != std::string::npos);

  p = good; // an extra tensor too
  p.extras.lse.stride[2] = kMax / 2;
  CHECK(refusal_of(p).find("extras.lse: expected a tensor whose size") != std::string::npos);

  for (Backend b : {Backend::automatic, Backend::reference, Backend::naive, Backend::portable}) {
    p = good;
    p.options.backend = b;
    p.q.stride[0] = kMax / 2 + 1;
    CHECK_THROWS_AS(run_forward(default_registry(), p, ExecContext{}), InvalidArgument);
  }
  const std::vector<double> out = a.out_values(); // nothing written: still the poison
  CHECK(std::all_of(out.begin(), out.end(), [](double x) { return std::isnan(x); }));
}

// Issue 20 item 1: H + Hv overflowed in the auto order (1-byte FP8 tensors with H = INT64_MAX
// elements are addressable): the FLOP count wrapped negative and the problem counted as small.
TEST_CASE("semantics/strides: H = Hv = INT64_MAX does not overflow the auto order's FLOP count") {
  Dims d;
  d.B = d.N = d.K = d.T = d.S = 1;
  d.H = d.Hv = kMax;
  CHECK(auto_order(d, false).rule.empty()); // not "a small forward"
  d.H = d.Hv = 8;
  CHECK(auto_order(d, false).rule.find("small forward") != std::string::npos);
}

// Issue 20 item 5: naive and portable narrowed the cap to float: softcap = 1e300 became inf, and
// inf * tanh(s / inf) masked every row (portable) or gave NaN (naive).
TEST_CASE("semantics/softcap: a cap beyond float's range is off, on every backend") {
  for (Backend backend : {Backend::reference, Backend::naive, Backend::portable})
    for (DType dt : {DType::f32, DType::f64}) {
      Spec s = spec_of(2, 5, 7, 2, 1, 8, 8);
      s.dtype = dt;
      INFO("backend " << to_string(backend) << " " << to_string(dt));
      Attn a(s);
      Options off, huge, float_max;
      huge.softcap = 1e300;
      float_max.softcap = 2.0 * std::numeric_limits<float>::max(); // the first values that are off
      const std::vector<double> want = run_with(a, backend, off);
      CHECK(all_finite(want));
      CHECK(run_with(a, backend, huge) == want);
      CHECK(run_with(a, backend, float_max) == want);
      ForwardProblem p = a.forward_problem();
      p.options.softcap = std::numeric_limits<float>::max(); // still a cap
      CHECK(validate(p).softcap == std::numeric_limits<float>::max());
    }
}

// Issue 20 item 5: a scale of 1e300 became inf in naive and portable's float accumulators (NaN
// rows, fully masked rows). Float backends refuse it naming options.scale; f64 problems and the
// reference (double) serve it, and auto picks one that can.
TEST_CASE("semantics/scale: a scale beyond float's range is refused by float backends, naming "
          "options.scale") {
  Spec s = spec_of(1, 4, 6, 2, 1, 8, 8);
  s.dtype = DType::f32;
  Attn a(s);
  Options o;
  o.scale = 1e300;
  for (Backend backend : {Backend::naive, Backend::portable}) {
    INFO("backend " << to_string(backend));
    try {
      run_with(a, backend, o);
      FAIL("a float backend must refuse scale 1e300");
    } catch (const Unsupported& e) {
      CHECK(std::string(e.what()).find("options.scale") != std::string::npos);
    }
    const std::vector<double> out = a.out_values(); // untouched: still the poison
    CHECK(std::all_of(out.begin(), out.end(), [](double x) { return std::isnan(x); }));
  }
  // out only: the LSE (~1e300 here) does not fit its fp32 tensor on any backend.
  const auto out_of = [](Attn& x, Backend b, const Options& opt) {
    run_with(x, b, opt);
    return x.out_values();
  };
  const std::vector<double> want = out_of(a, Backend::reference, o);
  CHECK(all_finite(want));
  CHECK(out_of(a, Backend::automatic, o) == want); // auto: the reference serves it
  s.dtype = DType::f64;
  Attn a64(s);
  const std::vector<double> ref64 = out_of(a64, Backend::reference, o);
  CHECK(all_finite(ref64));
  for (Backend backend : {Backend::naive, Backend::portable}) {
    INFO("backend " << to_string(backend) << " f64");
    const std::vector<double> got = out_of(a64, backend, o);
    REQUIRE(got.size() == ref64.size());
    for (std::size_t i = 0; i < got.size(); ++i)
      CHECK(got[i] == doctest::Approx(ref64[i]).epsilon(1e-9)); // double accumulation
  }
}

// Issue 20 item 1: naive allocated its [B, N, T, S] score matrix with a product that could wrap
// (too small a buffer); it now refuses in supports(). Broadcast (zero-stride) inputs make such
// a problem valid without the memory; explain() asks supports() and touches no data.
TEST_CASE("semantics/strides: naive refuses a score matrix beyond 2^63 bytes in supports()") {
  Attn a(spec_of(1, 4, 4, 1, 1, 8, 8));
  ForwardProblem p = a.forward_problem();
  const std::int64_t huge = std::int64_t{1} << 31; // T = S = 2^31: 2^62 scores, 2^65 bytes
  p.q.extent[1] = p.out.extent[1] = huge;
  p.k.extent[1] = p.v.extent[1] = huge;
  p.q.stride = p.k.stride = p.v.stride = {0, 0, 0, 0};
  p.out.stride = {huge * 8, 8, 8, 1};
  // A 2^37-byte out: at a fake address far from the heap (and the inputs), never dereferenced.
  p.out.data = reinterpret_cast<void*>(std::uintptr_t{1} << 52);
  p.extras.lse = Tensor{};
  std::string naive_reason;
  for (const BackendVerdict& v : explain(default_registry(), p, ExecContext{}))
    if (v.backend == Backend::naive)
      naive_reason = v.reason;
  CHECK(naive_reason.find("score matrix exceeds 2^63 bytes") != std::string::npos);
}

// Issue 20 item 3: outputs that aliased themselves, each other or an input were accepted and
// gave silently wrong results on some backends.
TEST_CASE("semantics/errors: outputs that overlap themselves, each other or an input are "
          "refused, naming both") {
  Spec s = spec_of(2, 4, 4, 2, 1, 8, 8);
  s.bias = true;
  Attn a(s);
  const ForwardProblem good = a.forward_problem();
  REQUIRE(refusal_of(good).empty());

  ForwardProblem p = good; // out == q (same shape and dtype: "in place")
  p.out.data = p.q.data;
  CHECK(has(refusal_of(p), "out: expected memory disjoint from input q, got bytes"));

  p = good; // out starting inside k. Both in one buffer of their own: an out placed past the
  // end of the test's k would also meet whatever the allocator put after it (q on some heaps).
  std::vector<double> k_then_out(static_cast<std::size_t>(2 * 4 * 1 * 8 + 2 * 4 * 2 * 8 + 2));
  p.k.data = k_then_out.data();
  p.out.data = k_then_out.data() + 2;
  CHECK(has(refusal_of(p), "out: expected memory disjoint from input k"));

  p = good; // lse inside out
  p.extras.lse.data = p.out.data;
  CHECK(has(refusal_of(p), "out: expected memory disjoint from output extras.lse"));

  p = good; // lse over the bias
  p.extras.lse.data = p.extras.bias.data;
  CHECK(has(refusal_of(p), "extras.lse: expected memory disjoint from input extras.bias"));

  p = good; // strides that make two elements of out share an address (not a zero stride)
  p.out.stride = {32, 8, 8, 1}; // T and N both step 8 elements
  CHECK(has(refusal_of(p), "out: expected strides that give every element its own address"));
  p.out.stride = {0, 16, 8, 1}; // a zero stride on B = 2
  CHECK(has(refusal_of(p), "out: expected strides that give every element its own address"));

  p = good; // inputs may overlap each other (q == k, broadcast strides): still valid
  p.k.data = p.q.data;
  p.v.data = p.q.data;
  CHECK(refusal_of(p).empty());

  BackwardProblem b = a.backward_problem(/*with_dbias=*/true);
  REQUIRE(refusal_of(b).empty());
  BackwardProblem bb = b; // dq over dout
  bb.dq.data = bb.dout.data;
  CHECK(has(refusal_of(bb), "dq: expected memory disjoint from input dout"));
  bb = b; // dk == dv
  bb.dv.data = bb.dk.data;
  CHECK(has(refusal_of(bb), "dk: expected memory disjoint from output dv"));
  bb = b; // dbias over the bias it is the gradient of
  bb.dbias.data = bb.forward.extras.bias.data;
  CHECK(has(refusal_of(bb), "dbias: expected memory disjoint from input extras.bias"));
  bb = b; // dq over the forward's out (an input of the backward)
  bb.dq.data = bb.forward.out.data;
  CHECK(has(refusal_of(bb), "dq: expected memory disjoint from input out"));
}

// Issue 20 item 1: portable cast its league size to int (Kokkos takes an int): B * N * query
// blocks above 2^31 - 1 wrapped. Zero-stride inputs and an out at a fake address make such a
// problem valid without the memory; the refusal must come before any tensor is touched (a
// wrong order crashes here).
TEST_CASE("semantics/strides: portable refuses more than 2^31 - 1 teams before touching a "
          "tensor") {
  if (default_registry().find(Backend::portable) == nullptr)
    return;
  Attn a(spec_of(1, 1, 1, 1, 1, 8, 8));
  ForwardProblem p = a.forward_problem();
  const std::int64_t B = std::int64_t{1} << 26, N = 64; // 2^32 (batch, head) pairs, T = 1
  for (Tensor* t : {&p.q, &p.k, &p.v, &p.out}) {
    t->extent = {B, 1, N, 8};
    t->stride = {0, 0, 0, 0};
  }
  p.k.extent[2] = p.v.extent[2] = 1; // K = 1
  p.out.stride = {N * 8, N * 8, 8, 1};
  p.out.data = reinterpret_cast<void*>(std::uintptr_t{1} << 52); // never dereferenced
  p.extras.lse = Tensor{};
  p.options.backend = Backend::portable;
  REQUIRE(refusal_of(p).empty());
  try {
    run_forward(default_registry(), p, ExecContext{});
    FAIL("portable must refuse 2^32 teams");
  } catch (const Unsupported& e) {
    CHECK(has(e.what(), "more than a Kokkos league's 2^31 - 1"));
  }
}

// Found by the fuzzer: a padded query length far below T puts the query blocks past it on an
// empty key range whose lo lies past the keys (bottom-right window 0: row 128 + S - q_len);
// portable walked one key tile from there (K/V rows out of range, a negative tile width,
// Kokkos::clamp's precondition broken, caught in builds with assertions: make test-sanitize, make
// fuzz; release builds got by as every column range came out empty). Rows past q_len are
// 0 / -inf; the rest as the reference
// (f32 against f64 on 8-element dot products and one-key rows: 1e-5; gradients 1e-4).
TEST_CASE("semantics/padded: query blocks past a short padded length walk no key tile") {
  if (default_registry().find(Backend::portable) == nullptr)
    return;
  for (bool backward : {false, true}) {
    Spec s = spec_of(1, 300, 300, 1, 1, 8, 8);
    s.dtype = DType::f32;
    s.q_lens = {1};
    s.opt.alignment = Alignment::bottom_right;
    s.opt.window_left = s.opt.window_right = 0;
    Attn ref(s), got(s);
    ref.forward();
    poison(got.out.view);
    poison(got.lse.view());
    ForwardProblem p = got.forward_problem();
    p.options.backend = Backend::portable;
    run_forward(default_registry(), p, ExecContext{});
    const std::vector<double> o = got.out_values(), r = ref.out_values();
    CHECK(all_finite(o));
    for (std::size_t i = 0; i < o.size(); ++i)
      CHECK(std::abs(o[i] - r[i]) <= 1e-5);
    const std::vector<double> gl = got.lse_values(), rl = ref.lse_values();
    for (std::size_t i = 0; i < gl.size(); ++i) // -inf past q_len; one key before it
      CHECK((gl[i] == rl[i] || std::abs(gl[i] - rl[i]) <= 1e-5 * std::max(1.0, std::abs(rl[i]))));
    if (backward) {
      ref.backward(false);
      poison(got.dq.view);
      poison(got.dk.view);
      poison(got.dv.view);
      BackwardProblem bp = got.backward_problem(false);
      bp.forward.options.backend = Backend::portable;
      run_backward(default_registry(), bp, ExecContext{});
      for (const auto& [g, w] :
           {std::pair{&got.dq, &ref.dq}, {&got.dk, &ref.dk}, {&got.dv, &ref.dv}}) {
        const std::vector<double> gv = read_logical(g->view), wv = read_logical(w->view);
        CHECK(all_finite(gv));
        for (std::size_t i = 0; i < gv.size(); ++i)
          CHECK(std::abs(gv[i] - wv[i]) <= 1e-4);
      }
    }
  }
}
