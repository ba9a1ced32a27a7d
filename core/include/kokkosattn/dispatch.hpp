// Choosing a backend, explaining the choice, and running it.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "kokkosattn/auto_policy.hpp"
#include "kokkosattn/layout_copies.hpp"
#include "kokkosattn/registry.hpp"

namespace kattn {

struct BackendVerdict {
  Backend backend;
  bool built = false;     // compiled into this library
  bool supported = false; // built and its support check passed
  // Supported only through row-major copies of `copies` (LayoutCopy::available); `reason` then
  // says why the tensors as given are refused.
  LayoutCopies copies;
  std::string reason; // why not, when !supported
  std::string kernel; // when supported: the kernel that would run (Support::kernel), if named
  std::string description;
};

struct Selection {
  // The backend that runs; null exactly when `empty` is set.
  const BackendImpl* impl = nullptr;
  // The problem writes no element (no output has one: B, T or N is 0; docs/semantics.md rule
  // empty): nothing runs, whichever backend was asked for.
  bool empty = false;
  Dims dims;
  // Which backend was requested and how: "auto", "forced by options", "forced by
  // KOKKOSATTN_BACKEND".
  std::string how;
  // The kernel the backend said would run (Support::kernel), if it names one.
  std::string kernel;
  // `auto` only: the policy rule that changed the order for this problem (AutoOrder::rule).
  std::string order_rule;
  // The tensors the run goes through row-major copies for (empty: the tensors as given). The
  // backend must then be called on with_copies(p, copies) pointed at the copies.
  LayoutCopies copies;
  // Set when the chosen backend is a slow one on a GPU and a one-line change of the caller's
  // tensors (dtype, layout) would reach a GPU kernel backend: what to change, and which backend.
  std::string note;
};

// Validates, then picks: for `auto` the first backend in auto_order() (the auto policy) that serves
// the tensors as given; with LayoutCopy::available (and options.allow_layout_copies), when that
// backend is not a GPU kernel backend (is_device_kernel), the first GPU kernel backend that serves
// row-major copies of the tensors (in the order for the copied problem), with copies. A forced
// backend runs as given, else with copies, else throws. Throws InvalidArgument for invalid problems
// and Unsupported (listing every reason) when the forced backend or every backend cannot serve the
// problem.
Selection select(const Registry& r, const ForwardProblem& p, const ExecContext& x,
                 LayoutCopy c = LayoutCopy::unavailable);
Selection select(const Registry& r, const BackwardProblem& p, const ExecContext& x,
                 LayoutCopy c = LayoutCopy::unavailable);

// Every backend with its verdict, in the order `auto` tries them for this problem
// (auto_order()); validates first.
std::vector<BackendVerdict> explain(const Registry& r, const ForwardProblem& p,
                                    const ExecContext& x, LayoutCopy c = LayoutCopy::unavailable);
std::vector<BackendVerdict> explain(const Registry& r, const BackwardProblem& p,
                                    const ExecContext& x, LayoutCopy c = LayoutCopy::unavailable);
std::string format_explain(const std::vector<BackendVerdict>& v);
// "backend=cuda (auto) through row-major copies of q, k, v, out" plus the note's line, if any.
std::string format_selection(const Selection& s);

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
