// Choosing a backend, explaining the choice, and running it.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "kokkosattn/registry.hpp"

namespace kattn {

struct BackendVerdict {
  Backend backend;
  bool built = false;     // compiled into this library
  bool supported = false; // built and its support check passed
  std::string reason;     // why not, when !supported
  std::string description;
};

struct Selection {
  const BackendImpl* impl = nullptr;
  Dims dims;
  // Which backend was requested and how: "auto", "forced by options", "forced by
  // KOKKOSATTN_BACKEND".
  std::string how;
  // `auto` only: why its order differed from preference_order for this problem (AutoOrder::rule).
  std::string order_rule;
};

// The backend requested for a run: options.backend unless KOKKOSATTN_BACKEND names one
// (the variable overrides `auto` only; an explicit choice in the options wins).
Backend requested_backend(const Options& o);

// Validates, then picks: the first supporting backend in auto_order() for `auto`, or the
// forced one. Throws InvalidArgument for invalid problems and Unsupported (listing every
// reason) when the forced backend or every backend cannot serve the problem.
Selection select(const Registry& r, const ForwardProblem& p, const ExecContext& x);
Selection select(const Registry& r, const BackwardProblem& p, const ExecContext& x);

// Every backend with its verdict, in the order `auto` tries them for this problem
// (auto_order()); validates first.
std::vector<BackendVerdict> explain(const Registry& r, const ForwardProblem& p,
                                    const ExecContext& x);
std::vector<BackendVerdict> explain(const Registry& r, const BackwardProblem& p,
                                    const ExecContext& x);
std::string format_explain(const std::vector<BackendVerdict>& v);

// One line on stderr naming the backend and the problem when KOKKOSATTN_LOG is set (and not
// "0"); `what` names the entry point ("forward", "sdpa", "plan", ...).
void log_selection(std::string_view what, const Selection& s, DType dtype, const ExecContext& x);
// Runs backend code; exceptions outside kattn::Error become BackendFailure naming the backend.
void run_guarded(const BackendImpl& impl, std::string_view what, const std::function<void()>& f);

// select + run; prints one line naming the backend when KOKKOSATTN_LOG=1.
void run_forward(const Registry& r, const ForwardProblem& p, const ExecContext& x);
void run_backward(const Registry& r, const BackwardProblem& p, const ExecContext& x);

// Convenience: the default registry, host memory, plain CPU context.
void attention_forward(const ForwardProblem& p, const ExecContext& x = {});
void attention_backward(const BackwardProblem& p, const ExecContext& x = {});

} // namespace kattn
