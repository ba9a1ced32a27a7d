// The auto policy: which backend a run goes to, in one place. A forced backend (options or
// KOKKOSATTN_BACKEND) is used or refused; otherwise `auto` tries the backends in preference_order,
// adjusted for the problem by the rules below, and takes the first whose support check passes.
// Every rule is data with the measurement it came from (docs/performance.md, "auto's order per
// shape class"); backends only answer "supported, with kernel X" (Support::kernel).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "kokkosattn/backend.hpp"
#include "kokkosattn/exec_context.hpp"
#include "kokkosattn/problem.hpp"

namespace kattn {

class Registry;

// The order when no rule applies. cudnn before cuda: below the lengths of measured_leads() our
// sm90 kernels measured 0.84-1.02x cuDNN on the H200 (run 7, head dim 64 up to 4096 keys), so
// they serve what cuDNN refuses (softcap, head-dim/stride cases, its fully-masked-row refusals)
// and the shape classes of measured_leads().
inline constexpr std::array<Backend, 6> preference_order = {Backend::cudnn, Backend::cuda,
                                                            Backend::hip,   Backend::portable,
                                                            Backend::naive, Backend::reference};

// Forwards this small are bound by the per-call cost, not by the kernels (4 B N T S H FLOP).
inline constexpr double small_problem_flops = 1073741824.0; // 2^30

// A forward shape class where `backend` running a kernel whose name starts with `kernel` measured
// faster than the backends before it: `auto` tries it first there (it still has to pass its
// support check). Matches problems with head dim `head_dim` (q and v), causal or full (no other
// window), and min(T, S) >= min_len.
struct MeasuredLead {
  Backend backend;
  std::string_view kernel;
  std::int64_t head_dim;
  bool causal;
  std::int64_t min_len;
  std::string_view measured; // the ratio, for explain()
  std::string_view source;   // the result file it came from
};

// The shipped table (core/src/auto_policy.cpp).
std::span<const MeasuredLead> measured_leads();

struct AutoOrder {
  std::array<Backend, preference_order.size()> order = preference_order;
  std::string rule; // why it differs from preference_order; empty when it does not
};

// The shape rules alone (no backend is asked): small forwards try cuda before cudnn. `backward`:
// the order for a backward problem. Validated dims only (Dims from validate()).
AutoOrder auto_order(const Dims& d, bool backward);

// The order for this problem: the shape rules, then the first lead of `leads` that matches the
// problem and whose backend supports it with a matching kernel moves that backend to the front.
// Asks supports() of those backends only. Backward problems have no leads.
AutoOrder auto_order(const Registry& r, const ForwardProblem& p, const Dims& d,
                     const ExecContext& x, std::span<const MeasuredLead> leads = measured_leads());
AutoOrder auto_order(const Registry& r, const BackwardProblem& p, const Dims& d,
                     const ExecContext& x);

// The backend requested for a run: options.backend unless KOKKOSATTN_BACKEND names one (the
// variable overrides `auto` only; an explicit choice in the options wins). Throws InvalidArgument
// for a name it does not know.
Backend requested_backend(const Options& o);

// What layout copies cost, said wherever they are chosen (measured, docs/performance.md).
std::string layout_copies_cost();

} // namespace kattn
