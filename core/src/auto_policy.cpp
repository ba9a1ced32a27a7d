// The auto policy (kokkosattn/auto_policy.hpp): the shape rules, the measured leads as data, and
// the forced-backend variable. Every figure names the run it came from.
#include "kokkosattn/auto_policy.hpp"

#include <algorithm>
#include <cstdlib>

#include "kokkosattn/dispatch.hpp"
#include "kokkosattn/errors.hpp"
#include "kokkosattn/registry.hpp"

namespace kattn {
namespace {

// Where the cuda backend's sm90 kernels beat cuDNN 9.19 on the H200 in every one-run benchmark
// since run 4 and, for head dim 128, in 11 repeated runs (run 7 keeps every class ahead;
// docs/performance.md, "auto's order per shape class"). Not claimed: head dim 128 non-causal
// from 4096 to below 8192 keys (run 6's 11 runs a tie, median 1.007; run 7's ahead, median 1.036).
constexpr std::string_view runs = "benchmarks/results/h200-2026-11-30-cuda-run{4,5,6}.json";
constexpr std::string_view repeats = "benchmarks/results/h200-2026-11-30-repeat/";
constexpr MeasuredLead shipped_leads[] = {
    {Backend::cuda, "sm90", 256, false, 4096, "head dim 256: 0.99-1.07x cuDNN at T, S >= 4096",
     runs},
    {Backend::cuda, "sm90", 256, true, 2048,
     "head dim 256 causal: 1.03-1.21x cuDNN at T, S >= 2048", runs},
    {Backend::cuda, "sm90", 128, true, 4096,
     "head dim 128 causal: 1.04-1.11x cuDNN at T, S >= 4096", repeats},
    {Backend::cuda, "sm90", 128, false, 8192,
     "head dim 128 non-causal: 1.001-1.015x cuDNN at T, S >= 8192", repeats},
    {Backend::cuda, "sm90", 64, true, 8192, "head dim 64 causal: 1.09-1.13x cuDNN at T, S >= 8192",
     runs},
    {Backend::cuda, "sm90", 64, false, 8192,
     "head dim 64 non-causal: 1.03-1.09x cuDNN at T, S >= 8192", runs},
};

bool matches(const MeasuredLead& l, const Dims& d) {
  const bool causal = d.window_left == -1 && d.window_right == 0;
  const bool full = d.window_left == -1 && d.window_right == -1;
  return d.H == l.head_dim && d.Hv == l.head_dim && (l.causal ? causal : full) &&
         std::min(d.T, d.S) >= l.min_len;
}

void to_front(AutoOrder& a, Backend b, std::string why) {
  const auto it = std::find(a.order.begin(), a.order.end(), b);
  std::rotate(a.order.begin(), it, it + 1);
  a.rule = std::move(why);
}

} // namespace

std::span<const MeasuredLead> measured_leads() {
  return shipped_leads;
}

AutoOrder auto_order(const Dims& d, bool backward) {
  AutoOrder a;
  // H200, 2026-11-30 (benchmarks/results/h200-2026-11-30-ours-interleaved.json and the codelab
  // demo's sweeps): up to ~2^30 FLOP the forward is bound by per-call cost, where cuda's is lower
  // (7.8 vs 9.4 us back to back; 13.8 vs 14.6 us GPU time at the codelab shape). The backward
  // order is unchanged: cuda's fwd+bwd runs at 0.34-0.47x cuDNN's with the sm80 backward and
  // 0.50-0.57x with the sm90 one's first version (benchmarks/results/
  // h200-2026-12-02-cuda-backward.md, h200-2026-12-03-sm90-backward.md).
  const double flops =
      2.0 * double(d.B) * double(d.N) * double(d.T) * double(d.S) * (double(d.H) + double(d.Hv));
  if (!backward && flops <= small_problem_flops)
    to_front(a, Backend::cuda,
             "cuda before cudnn: a small forward (<= 2^30 FLOP) is bound by "
             "per-call cost, lower in cuda");
  return a;
}

AutoOrder auto_order(const Registry& r, const ForwardProblem& p, const Dims& d,
                     const ExecContext& x, std::span<const MeasuredLead> leads) {
  AutoOrder a = auto_order(d, false);
  for (const MeasuredLead& l : leads) {
    if (!matches(l, d))
      continue;
    const BackendImpl* impl = r.find(l.backend);
    if (impl == nullptr || (d.paged && !impl->serves_paged_kv()))
      continue;
    Support s;
    run_guarded(*impl, "supports()", [&] { s = impl->supports(p, d, x); });
    if (!s.ok || !s.kernel.starts_with(l.kernel))
      continue;
    to_front(a, l.backend,
             std::string(to_string(l.backend)) + " first: its " + std::string(l.kernel) +
                 " kernel measured " + std::string(l.measured) + " on the H200 (" +
                 std::string(l.source) + ")");
    break;
  }
  return a;
}

AutoOrder auto_order(const Registry&, const BackwardProblem&, const Dims& d, const ExecContext&) {
  return auto_order(d, true);
}

Backend requested_backend(const Options& o) {
  if (o.backend != Backend::automatic)
    return o.backend;
  const char* env = std::getenv("KOKKOSATTN_BACKEND");
  if (env == nullptr || *env == '\0')
    return Backend::automatic;
  if (const auto b = parse_backend(env))
    return *b;
  std::string names = "auto";
  for (Backend b : preference_order)
    names += ", " + std::string(to_string(b));
  throw InvalidArgument("KOKKOSATTN_BACKEND: expected one of " + names + ", got \"" + env + "\"");
}

std::string layout_copies_cost() {
  // benchmarks/results/h200-2026-12-02-seq-major.md (kokkosattn_bench_layouts).
  return "on an H200 they cost 3.2-3.9x at the codelab's tiny problem and 1.17x (causal "
         "1.32-1.38x) at 8k tokens with all four copied, 1.04x at 8k with out alone; "
         "docs/performance.md";
}

} // namespace kattn
