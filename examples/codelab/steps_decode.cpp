// Step 10: decode. An ML surrogate inside a simulation generates token by token: each step
// appends the new token's key and value to a KV cache and attends with its one query (T = 1) to
// every key held. That is memory-bound, so the measures are tokens/s and K/V bytes read per
// second, for a paged cache (page 16, shuffled pages) and a contiguous one with the same keys.
#include <Kokkos_Timer.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include "decode_problem.hpp"
#include "demo.hpp"
#include "terminal.hpp"

namespace codelab {
namespace {

void show(Demo& d, Table t) {
  print_table(t);
  d.report.tables.push_back(std::move(t));
}

bool on_device() {
  return !Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                     Kokkos::DefaultExecutionSpace::memory_space>::accessible;
}

// The CPU's lengths cost a few seconds on two cores; a GPU reaches the long caches decode is
// about (the library's decode benchmark goes to 64k).
std::vector<int> cache_lengths(const Config& c) {
  if (!c.decode_S.empty())
    return c.decode_S;
  if (on_device())
    return c.quick ? std::vector<int>{256, 1024} : std::vector<int>{1024, 4096, 16384, 65536};
  return c.quick ? std::vector<int>{128, 512} : std::vector<int>{256, 1024, 4096};
}

// Step 2's rule: f32 within 1e-5 of the reference (differences are a few 1e-7); bf16 within one
// bf16 ulp of max|out| (both outputs are rounded to bf16) plus the bf16 rounding of the softmax
// weights that fused GPU kernels make, 2^-7 max|ref| + 2^-8 max|v|.
double tolerance(kattn::DType t, const std::vector<float>& ref, double max_v) {
  if (t == kattn::DType::f32)
    return 1e-5;
  return std::ldexp(max_abs(ref), -7) + std::ldexp(max_v, -8);
}

double max_diff(const std::vector<float>& a, const std::vector<float>& b, const DecodeShape& s) {
  Shape one;
  one.B = s.B;
  one.T = 1;
  one.N = s.N;
  one.H = s.H;
  return max_abs_diff(a, b, one);
}

// bf16 (what decode runs in) where the backends serve a paged bf16 step here, else f32.
kattn::DType pick_dtype(DecodeShape s) {
  s.B = 1;
  s.S = 2 * s.page;
  try {
    const auto p = DecodeProblem::make(s);
    (void)p->served(true);
    (void)p->served(false);
    return s.dtype;
  } catch (const kattn::Unsupported&) {
    return kattn::DType::f32;
  }
}

// Seconds of one loop: `steps` decode steps from S - steps to S keys, enqueued back to back as a
// generation loop does, fenced once at the end (a fence per step would time the launch latency
// of a GPU, not the step).
double loop_seconds(DecodeProblem& p, bool paged) {
  p.restart();
  Kokkos::Timer timer;
  for (int t = 0; t < p.shape().steps; ++t)
    p.step(paged, t);
  p.fence();
  return timer.seconds();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[(v.size() - 1) / 2]; // the lower middle for an even count: a measured value
}

struct Checked {
  double paged_ref = 0, cont_ref = 0, pair = 0, tol = 0;
  bool caches_ok = false;
  std::string caches_why;
  bool close() const { return caches_ok && paged_ref <= tol && cont_ref <= tol && pair <= 2 * tol; }
};

// One loop on both caches, checked after it (and, with `trace`, after every step: the loop
// table). It also warms both paths up.
Checked checked_loop(DecodeProblem& p, Table* trace) {
  const DecodeShape& s = p.shape();
  p.restart();
  Checked c;
  for (int t = 0; t < s.steps; ++t) {
    p.step(true, t);
    p.step(false, t);
    if (!trace && t + 1 < s.steps)
      continue;
    p.fence();
    const std::vector<float> paged = p.output(true), cont = p.output(false), ref = p.reference(t);
    c.tol = std::max(c.tol, tolerance(s.dtype, ref, p.max_abs_v()));
    c.paged_ref = max_diff(paged, ref, s);
    c.cont_ref = max_diff(cont, ref, s);
    c.pair = max_diff(paged, cont, s);
    if (trace)
      trace->rows.push_back({std::to_string(t + 1), std::to_string(s.S - s.steps + t + 1),
                             format("%.2e", c.pair), format("%.2e", c.paged_ref),
                             format("%.2e", c.cont_ref)});
  }
  c.caches_ok = p.caches_complete(&c.caches_why);
  return c;
}

struct Timed {
  double ms_per_step = 0, tokens_per_s = 0, kv_bytes_per_s = 0, flops_per_s = 0;
};

// Median loop time of each cache, the two interleaved so that load changes hit both alike.
std::pair<Timed, Timed> time_both(DecodeProblem& p, const TimePolicy& policy) {
  const DecodeShape& s = p.shape();
  for (int i = 0; i < policy.warmups; ++i)
    for (bool paged : {true, false})
      loop_seconds(p, paged);
  std::vector<double> paged, cont;
  double spent = 0;
  while (int(paged.size()) < std::max(1, policy.repeats) &&
         (paged.empty() || spent < policy.budget_s)) {
    paged.push_back(loop_seconds(p, true));
    cont.push_back(loop_seconds(p, false));
    spent += std::max(paged.back(), cont.back());
  }
  // Keys attended over the loop: S - steps + 1 ... S per sequence; K and V read once each.
  double keys = 0;
  for (int t = 1; t <= s.steps; ++t)
    keys += s.S - s.steps + t;
  const double bytes = 2.0 * s.B * keys * s.K * s.H * double(kattn::size_bytes(s.dtype));
  const double flops = 4.0 * s.B * s.N * keys * s.H;
  const auto timed = [&](double sec) {
    return Timed{sec / s.steps * 1e3, s.B * s.steps / sec, bytes / sec, flops / sec};
  };
  return {timed(median(paged)), timed(median(cont))};
}

Row decode_row(const DecodeShape& s, bool paged, const std::string& backend) {
  Row r;
  r.exp = "decode";
  r.impl = backend;
  r.shape.B = s.B;
  r.shape.T = 1;
  r.shape.S = s.S;
  r.shape.N = s.N;
  r.shape.K = s.K;
  r.shape.H = s.H;
  r.shape.dtype = s.dtype;
  r.shape.causal = true;
  r.more_text = {{"layout", paged ? "paged" : "contiguous"}, {"alignment", "bottom_right"}};
  r.more_numbers = {{"page_size", paged ? s.page : 0}};
  return r;
}

// explain()'s verdicts as a table: which backend and kernel serve the paged step, and why the
// others do not.
Table explain_table(const DecodeServed& served, const DecodeShape& s) {
  Table t{"decode",
          "explain() for the paged decode step at S=" + std::to_string(s.S) + ": " +
              served.selection.substr(0, served.selection.find('\n')),
          {"backend", "serves it", "kernel, or why not"},
          {},
          {}};
  for (const kattn::BackendVerdict& v : served.verdicts)
    t.rows.push_back({std::string(kattn::to_string(v.backend)),
                      !v.built      ? "not built"
                      : v.supported ? "yes"
                                    : "no",
                      v.supported ? (v.kernel.empty() ? "-" : v.kernel) : v.reason});
  std::size_t at = served.selection.find('\n');
  while (at != std::string::npos) { // the policy rule and notes, when there are any
    const std::size_t next = served.selection.find('\n', at + 1);
    t.notes.push_back(served.selection.substr(at + 1, next - at - 1));
    at = next;
  }
  return t;
}

} // namespace

void step_decode(Demo& d) {
  print_heading("10. Decode: a generation loop on a paged and a contiguous KV cache");
  const Kokkos::Timer step_timer;
  DecodeShape base;
  base.B = d.cfg.decode_B;
  base.dtype = pick_dtype(base);
  const std::string dt(kattn::to_string(base.dtype));
  const std::string shape = "B=" + std::to_string(base.B) + " N=" + std::to_string(base.N) +
                            " K=" + std::to_string(base.K) + " (GQA) H=" + std::to_string(base.H) +
                            " " + dt;
  Table loop{"decode",
             "A decode loop, " + shape + ": " + std::to_string(base.steps) +
                 " tokens appended (append_kv) and attended (sdpa, causal bottom-right) one by "
                 "one on both caches",
             {"token", "keys held", "max|paged - contiguous|", "paged vs reference",
              "contiguous vs reference"},
             {},
             {}};
  Table t{"decode",
          "Decode step vs cache length S, " + shape + " (" + Kokkos::DefaultExecutionSpace::name() +
              "): append_kv of one token then sdpa over the S keys held; paged: page " +
              std::to_string(base.page) + ", pages shuffled",
          {"S", "cache", "backend", "ms / step", "tokens/s", "K/V GB/s", "max|diff| vs ref",
           "paged vs contiguous", "tolerance", "close"},
          {},
          {}};
  const std::vector<int> lengths = cache_lengths(d.cfg);
  Progress progress("decode", int(lengths.size()));
  std::optional<DecodeServed> last_paged;
  DecodeShape last = base;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    DecodeShape s = base;
    s.S = lengths[i];
    progress.next("S=" + std::to_string(s.S));
    try {
      const auto p = DecodeProblem::make(s);
      const DecodeServed paged = p->served(true), cont = p->served(false);
      const Checked c = checked_loop(*p, i == 0 ? &loop : nullptr);
      d.all_close = d.all_close && c.close();
      if (i == 0) {
        loop.notes.push_back("tolerance " + format("%.1e", c.tol) + " against the reference, " +
                             format("%.1e", 2 * c.tol) +
                             " between the caches (each is within it of the same exact result)");
        loop.notes.push_back(
            "after the loop: " +
            (c.caches_ok ? std::string("seqlens_k reads S=") + std::to_string(s.S) +
                               " in both, and both caches hold every key and value bit for bit "
                               "where it belongs"
                         : "NOT COMPLETE: " + c.caches_why));
      }
      const auto [tp, tc] = time_both(*p, d.cfg.policy);
      for (const bool is_paged : {true, false}) {
        const Timed& m = is_paged ? tp : tc;
        const DecodeServed& by = is_paged ? paged : cont;
        Row r = decode_row(s, is_paged, by.backend);
        r.ms = m.ms_per_step;
        r.tflops = m.flops_per_s / 1e12;
        r.more_text.emplace_back("kernel", by.kernel);
        r.more_numbers.insert(r.more_numbers.end(),
                              {{"tokens_per_s", m.tokens_per_s},
                               {"gbps", m.kv_bytes_per_s / 1e9},
                               {"max_err", is_paged ? c.paged_ref : c.cont_ref}});
        d.report.rows.push_back(r);
        t.rows.push_back({std::to_string(s.S), is_paged ? "paged" : "contiguous", by.backend,
                          format("%.4f", m.ms_per_step), format("%.0f", m.tokens_per_s),
                          format("%.2f", m.kv_bytes_per_s / 1e9),
                          format("%.2e", is_paged ? c.paged_ref : c.cont_ref),
                          is_paged ? format("%.2e", c.pair) : "-", format("%.1e", c.tol),
                          c.close() ? "yes" : "NO"});
      }
      last_paged = paged;
      last = s;
    } catch (const kattn::Unsupported& e) {
      for (const bool is_paged : {true, false}) {
        Row r = decode_row(s, is_paged, "auto");
        r.error = std::string("refused: ") + e.what();
        d.report.rows.push_back(r);
      }
      t.rows.push_back({std::to_string(s.S), "both", "n/a", "-", "-", "-", "-", "-", "-", "-"});
      t.notes.push_back("n/a at S=" + std::to_string(s.S) + ": " + e.what());
    } catch (const std::exception& e) {
      d.all_close = false;
      for (const bool is_paged : {true, false}) {
        Row r = decode_row(s, is_paged, "auto");
        r.error = std::string("failed: ") + e.what();
        d.report.rows.push_back(r);
      }
      t.rows.push_back({std::to_string(s.S), "both", "fail", "-", "-", "-", "-", "-", "-", "NO"});
      t.notes.push_back("fail at S=" + std::to_string(s.S) + ": " + e.what());
    }
  }
  t.notes.push_back(
      "one step = median over loops of " + std::to_string(base.steps) +
      " steps enqueued back to back (S - " + std::to_string(base.steps) +
      " to S keys), fenced once; tokens/s = B tokens per step / step time; K/V GB/s = the keys "
      "and values attended, read once, per second");
  t.notes.push_back(base.dtype == kattn::DType::f32
                        ? "tolerance (step 2's rule): f32 1e-5 (differences are a few 1e-7)"
                        : "tolerance (step 2's rule): one bf16 ulp of max|out| plus the bf16 "
                          "rounding of the softmax weights (2^-7 max|ref| + 2^-8 max|v|)");
  t.notes.push_back("close: both caches within the tolerance of the reference, within twice it "
                    "of each other (each is within it of the same exact result), and both hold "
                    "every key and value appended");
  if (!loop.rows.empty())
    show(d, std::move(loop));
  show(d, std::move(t));
  if (last_paged)
    show(d, explain_table(*last_paged, last));
  std::printf("\n  the decode step took %.1f s\n", step_timer.seconds());
}

} // namespace codelab
