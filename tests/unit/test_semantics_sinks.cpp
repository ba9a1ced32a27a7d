// Semantics rule sinks (docs/semantics.md) on the reference backend, and its refusal by the
// backends that do not serve it yet (portable's on the host: test_portable_backward.cpp). The
// reference is checked against a problem it already computes: a sink of logit s is one more key
// whose score is s (a zero key plus a bias of s) and whose value is 0; its gradient is then that
// key's dbias summed over batch and queries. Tolerances: f64 rearrangements 1e-12; the f32 sinks
// and dsinks 1e-6 relative (2^-24 rounding of the stored value); central differences on an f32
// input as explained below.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "common/oracle_checks.hpp"
#include "common/reference_helpers.hpp"
#include "kokkosattn/registry.hpp"
#include "kokkosattn/validate.hpp"

using namespace kattn;
using namespace kattn::test;

namespace {

constexpr double tight = 1e-12;
// The LSE is stored in f32 (u = 6e-8) at magnitudes of a few units: 8e-6 is ~16 ulps of slack
// for the two paths' different summation orders.
constexpr double f32_lse = 8e-6;

// spec_of with per-head sinks.
Spec sinks_spec(std::int64_t B, std::int64_t T, std::int64_t S, std::int64_t N, std::int64_t K,
                std::int64_t H, std::int64_t Hv) {
  Spec s = spec_of(B, T, S, N, K, H, Hv);
  s.sinks = true;
  return s;
}

// Logical index of (a, b, c, d) in a row-major 4-d tensor of extents e.
std::size_t at4(const std::vector<std::int64_t>& e, std::int64_t a, std::int64_t b, std::int64_t c,
                std::int64_t d) {
  return static_cast<std::size_t>(((a * e[1] + b) * e[2] + c) * e[3] + d);
}

// `plain` (batched, sinks, no bias) and `keyed`: the same problem with S + 1 keys, key S zero
// in k and v, and a bias [B, N, T, S + 1] of 0 except column S = the head's sink.
struct SinkAsKey {
  Spec spec;
  Attn plain, keyed;
  explicit SinkAsKey(const Spec& s) : spec(s), plain(s), keyed(keyed_spec(s)) {
    write_logical(keyed.q.view, read_logical(plain.q.view));
    write_logical(keyed.dout.view, read_logical(plain.dout.view));
    const std::vector<double> sinks = plain.sinks.to_doubles();
    for (const auto& [from, to] : {std::pair{&plain.k, &keyed.k}, std::pair{&plain.v, &keyed.v}}) {
      const std::vector<double> a = read_logical(from->view);
      const std::vector<std::int64_t> ea = extents(from->view), eb = extents(to->view);
      std::vector<double> b(static_cast<std::size_t>(to->view.numel()), 0.0);
      for (std::int64_t x = 0; x < ea[0]; ++x)
        for (std::int64_t j = 0; j < ea[1]; ++j)
          for (std::int64_t h = 0; h < ea[2]; ++h)
            for (std::int64_t f = 0; f < ea[3]; ++f)
              b[at4(eb, x, j, h, f)] = a[at4(ea, x, j, h, f)];
      write_logical(to->view, b);
    }
    std::vector<double> bias(static_cast<std::size_t>(keyed.bias.numel()), 0.0);
    const std::vector<std::int64_t> eb = extents(keyed.bias.view());
    for (std::int64_t b = 0; b < s.B; ++b)
      for (std::int64_t n = 0; n < s.N; ++n)
        for (std::int64_t i = 0; i < s.T; ++i)
          bias[at4(eb, b, n, i, s.S)] = sinks[static_cast<std::size_t>(n)];
    write_logical(keyed.bias.view(), bias);
  }
  static Spec keyed_spec(Spec s) {
    s.S += 1;
    s.sinks = false;
    s.bias = true;
    return s;
  }
  static std::vector<std::int64_t> extents(const Tensor& t) {
    return {t.extent[0], t.extent[1], t.extent[2], t.extent[3]};
  }
};

// The first `keys` keys of a [B, S', K, dim] gradient, in logical order.
std::vector<double> first_keys(const Tensor& t, std::int64_t keys) {
  const std::vector<double> all = read_logical(t);
  std::vector<double> r;
  const std::int64_t row = t.extent[2] * t.extent[3];
  for (std::int64_t b = 0; b < t.extent[0]; ++b)
    for (std::int64_t j = 0; j < keys; ++j)
      for (std::int64_t x = 0; x < row; ++x)
        r.push_back(all[static_cast<std::size_t>((b * t.extent[1] + j) * row + x)]);
  return r;
}

void check_sink_is_a_key(const Spec& s) {
  SinkAsKey c(s);
  c.plain.forward();
  c.keyed.forward();
  CHECK(max_abs_diff(c.plain.out_values(), c.keyed.out_values()) <= tight);
  CHECK(max_abs_diff(c.plain.lse_values(), c.keyed.lse_values()) <= f32_lse);
  c.plain.backward(false);
  c.keyed.backward(true);
  CHECK(max_abs_diff(read_logical(c.plain.dq.view), read_logical(c.keyed.dq.view)) <= tight);
  CHECK(max_abs_diff(read_logical(c.plain.dk.view), first_keys(c.keyed.dk.view, s.S)) <= tight);
  CHECK(max_abs_diff(read_logical(c.plain.dv.view), first_keys(c.keyed.dv.view, s.S)) <= tight);
  const std::vector<double> dbias = c.keyed.dbias.to_doubles(),
                            dsinks = c.plain.dsinks.to_doubles();
  const std::vector<std::int64_t> eb = SinkAsKey::extents(c.keyed.dbias.view());
  double largest = 0.0;
  for (std::int64_t n = 0; n < s.N; ++n) {
    double want = 0.0;
    for (std::int64_t b = 0; b < s.B; ++b)
      for (std::int64_t i = 0; i < s.T; ++i)
        want += dbias[at4(eb, b, n, i, s.S)];
    const double got = dsinks[static_cast<std::size_t>(n)];
    INFO("head ", n, ": dsinks ", got, ", summed dbias of the sink's key ", want);
    CHECK(std::abs(got - want) <= 1e-6 * std::max(1.0, std::abs(want)));
    largest = std::max(largest, std::abs(want));
  }
  CHECK(largest > 1e-3); // the comparison above is not vacuous
}

} // namespace

TEST_CASE("semantics/sinks: a sink is one more key of score `sink` and value 0 (fwd and bwd)") {
  Spec s = sinks_spec(2, 5, 7, 4, 2, 8, 6);
  SUBCASE("plain, GQA") {
    check_sink_is_a_key(s);
  }
  SUBCASE("softcap") {
    s.opt.softcap = 2.0; // the extra key's score is softcap(0) + bias = the sink
    check_sink_is_a_key(s);
  }
  SUBCASE("MQA, one query row") {
    s.K = 1;
    s.T = 1;
    check_sink_is_a_key(s);
  }
  SUBCASE("the sinks dominate small scores") {
    s.seed = 5;
    s.q_mult = 0.1;
    check_sink_is_a_key(s);
  }
}

TEST_CASE("semantics/sinks: dsinks matches central differences of the forward") {
  Spec s = sinks_spec(2, 4, 6, 3, 3, 5, 5);
  s.opt.causal = true;
  s.opt.alignment = Alignment::bottom_right;
  Attn a(s);
  a.backward(false);
  const std::vector<double> g = a.dsinks.to_doubles();
  // The sinks are f32: a step of 2^-10 is exact in them at these magnitudes, truncation error
  // ~h^2 = 1e-6 relative to the third derivative's scale, cancellation ~1e-16 |L| / h ~ 1e-12.
  const double h = std::ldexp(1.0, -10);
  const Tensor t = a.sinks.view();
  for (std::int64_t n = 0; n < s.N; ++n) {
    const double x = load_double(t, n);
    store_double(t, n, x + h);
    const double lp = loss(a);
    store_double(t, n, x - h);
    const double lm = loss(a);
    store_double(t, n, x);
    const double fd = (lp - lm) / (2 * h);
    INFO("head ", n, ": finite difference ", fd, ", dsinks ", g[static_cast<std::size_t>(n)]);
    CHECK(std::abs(fd - g[static_cast<std::size_t>(n)]) <= 1e-5 * std::max(1.0, std::abs(fd)));
    CHECK(std::abs(g[static_cast<std::size_t>(n)]) > 1e-4);
  }
}

TEST_CASE("semantics/sinks: a row without keys gives out 0, LSE = its sink, zero gradients") {
  // Bottom-right causal with T > S: the first T - S rows see no key.
  Spec s = sinks_spec(1, 6, 3, 2, 1, 4, 4);
  s.opt.causal = true;
  s.opt.alignment = Alignment::bottom_right;
  Attn a(s);
  a.forward();
  const std::vector<double> out = a.out_values(), lse = a.lse_values();
  const std::vector<double> sinks = a.sinks.to_doubles();
  for (std::int64_t n = 0; n < s.N; ++n)
    for (std::int64_t i = 0; i < s.T - s.S; ++i) {
      CHECK(lse[static_cast<std::size_t>(n * s.T + i)] == sinks[static_cast<std::size_t>(n)]);
      for (std::int64_t h = 0; h < s.Hv; ++h)
        CHECK(out[static_cast<std::size_t>((i * s.N + n) * s.Hv + h)] == 0.0);
    }
  a.backward(false);
  const std::vector<double> dq = read_logical(a.dq.view);
  for (std::int64_t i = 0; i < s.T - s.S; ++i)
    for (std::int64_t x = 0; x < s.N * s.H; ++x)
      CHECK(dq[static_cast<std::size_t>(i * s.N * s.H + x)] == 0.0);
  CHECK(all_finite(a.dsinks.to_doubles()));
}

TEST_CASE("semantics/sinks: -inf sinks change nothing; a NaN sink makes its head's rows NaN") {
  Spec s = sinks_spec(2, 4, 5, 2, 1, 4, 4);
  Attn a(s);
  Spec none = s;
  none.sinks = false;
  Attn b(none);
  const double inf = std::numeric_limits<double>::infinity();
  write_logical(a.sinks.view(), {-inf, -inf});
  a.forward();
  b.forward();
  CHECK(a.out_values() == b.out_values());
  CHECK(a.lse_values() == b.lse_values());
  a.backward(false);
  b.backward(false);
  CHECK(read_logical(a.dq.view) == read_logical(b.dq.view));
  CHECK(read_logical(a.dk.view) == read_logical(b.dk.view));
  CHECK(a.dsinks.to_doubles() == std::vector<double>{0.0, 0.0});

  write_logical(a.sinks.view(), {std::numeric_limits<double>::quiet_NaN(), 0.0});
  a.forward();
  const std::vector<double> out = a.out_values(), lse = a.lse_values();
  for (std::int64_t bb = 0; bb < s.B; ++bb)
    for (std::int64_t i = 0; i < s.T; ++i) {
      CHECK(std::isnan(lse[static_cast<std::size_t>((bb * s.N + 0) * s.T + i)]));
      CHECK(std::isfinite(lse[static_cast<std::size_t>((bb * s.N + 1) * s.T + i)]));
      for (std::int64_t h = 0; h < s.Hv; ++h) {
        const std::size_t row = static_cast<std::size_t>((bb * s.T + i) * s.N);
        CHECK(std::isnan(
            out[(row + 0) * static_cast<std::size_t>(s.Hv) + static_cast<std::size_t>(h)]));
        CHECK(std::isfinite(
            out[(row + 1) * static_cast<std::size_t>(s.Hv) + static_cast<std::size_t>(h)]));
      }
    }
}

TEST_CASE("semantics/sinks: bad sinks and dsinks are refused naming the argument") {
  Spec s = sinks_spec(2, 3, 4, 2, 1, 4, 4);
  Attn a(s);
  CHECK(refusal_of(a.forward_problem()).empty());
  CHECK(refusal_of(a.backward_problem(false)).empty());
  {
    HostTensor wrong(DType::f32, {3});
    ForwardProblem p = a.forward_problem();
    p.extras.sinks = wrong.view();
    CHECK(refusal_of(p).find("extras.sinks: expected shape [N] = [2], got [3]") !=
          std::string::npos);
  }
  {
    HostTensor wrong(DType::f64, {2});
    ForwardProblem p = a.forward_problem();
    p.extras.sinks = wrong.view();
    CHECK(refusal_of(p).find("extras.sinks") != std::string::npos);
    CHECK(refusal_of(p).find("f32") != std::string::npos);
  }
  {
    BackwardProblem p = a.backward_problem(false);
    p.forward.extras.sinks = Tensor{};
    CHECK(refusal_of(p).find("dsinks: expected only with extras.sinks") != std::string::npos);
  }
  {
    HostTensor wrong(DType::f32, {1});
    BackwardProblem p = a.backward_problem(false);
    p.dsinks = wrong.view();
    CHECK(refusal_of(p).find("dsinks") != std::string::npos);
  }
}

TEST_CASE("semantics/sinks: backends that do not serve sinks refuse them instead of ignoring") {
  Spec s = sinks_spec(1, 3, 4, 2, 1, 4, 4);
  Attn a(s);
  const ForwardProblem fp = a.forward_problem();
  const BackwardProblem bp = a.backward_problem(false);
  const Dims d = validate(fp);
  const ExecContext host{};
  for (const BackendImpl* b : default_registry().all()) {
    INFO("backend ", to_string(b->id()));
    const Support f = b->supports(fp, d, host), w = b->supports(bp, d, host);
    if (b->id() == Backend::reference || b->id() == Backend::portable) { // host memory here
      CHECK(f.ok);
      CHECK(w.ok);
      continue;
    }
    CHECK_FALSE(f.ok);
    CHECK_FALSE(w.ok);
    // On the host the forward's reason names the sinks; the GPU kernel backends may refuse the
    // host context first, and the backward may name an earlier limit (naive and hip have none).
    if (!is_device_kernel(b->id()))
      CHECK(f.reason.find("sinks") != std::string::npos);
  }
}
