// Backend choice: validate, honour a forced backend (options or KOKKOSATTN_BACKEND) without ever
// falling back from it, otherwise take the first supporting backend in the order the auto policy
// gives (kokkosattn/auto_policy.hpp); layout copies where they reach a GPU kernel backend.
#include "kokkosattn/dispatch.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <sstream>
#include <type_traits>

#include "kokkosattn/auto_policy.hpp"
#include "kokkosattn/detail/empty_sides.hpp"
#include "kokkosattn/errors.hpp"
#include "kokkosattn/validate.hpp"

namespace kattn {
namespace {

std::string name(Backend b) {
  return std::string(to_string(b));
}

std::string not_built_reason(Backend b) {
  return "not built into this library (its registry holds no " + name(b) + " backend)";
}

bool env_flag(const char* var) {
  const char* v = std::getenv(var);
  return v != nullptr && *v != '\0' && std::string_view(v) != "0";
}

// Runs a backend's code; exceptions outside our hierarchy become BackendFailure naming it.
template <class F>
auto guarded(const BackendImpl& impl, const char* what, F&& f) {
  try {
    return f();
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw BackendFailure("backend " + name(impl.id()) + " failed in " + what + ": " + e.what());
  } catch (...) {
    throw BackendFailure("backend " + name(impl.id()) + " failed in " + what +
                         ": a non-standard exception");
  }
}

template <class Problem>
Support ask(const BackendImpl& impl, const Problem& p, const Dims& d, const ExecContext& x) {
  if (d.paged && !impl.serves_paged_kv())
    return Support::no(name(impl.id()) +
                       ": a paged KV cache (extras.page_table) is not implemented in this "
                       "backend (served by reference and portable)");
  Support s = guarded(impl, "supports()", [&] { return impl.supports(p, d, x); });
  if (!s.ok && s.reason.empty())
    s.reason = "(the backend gave no reason)";
  return s;
}

const Options& options_of(const ForwardProblem& p) {
  return p.options;
}
const Options& options_of(const BackwardProblem& p) {
  return p.forward.options;
}
DType dtype_of(const ForwardProblem& p) {
  return p.q.dtype;
}
DType dtype_of(const BackwardProblem& p) {
  return p.forward.q.dtype;
}

template <class Problem>
constexpr bool kBackward = std::is_same_v<Problem, BackwardProblem>;

// The fewest copies of the non-row-major tensors `layout` (copy_choices) with which `impl`
// serves the problem: its Support, with those copies in `chosen`; when none serves, the refusal
// of the last choice (every tensor copied).
template <class Problem>
Support ask_with_copies(const BackendImpl& impl, const Problem& p, LayoutCopies layout,
                        const Dims& d, const ExecContext& x, LayoutCopies& chosen) {
  Support s;
  for (LayoutCopies c : copy_choices(layout, kBackward<Problem>)) {
    s = ask(impl, with_copies(p, c), d, x);
    if (s.ok) {
      chosen = c;
      return s;
    }
  }
  return s;
}

bool copies_allowed(const Options& o, LayoutCopy c) {
  return c == LayoutCopy::available && o.allow_layout_copies;
}

// The problem with its floating main tensors in bf16: what a caller's one-line change of the
// View type gives. Returns false when nothing would change (already 16-bit, FP8, ...).
bool as_bf16(ForwardProblem& p) {
  if (p.q.dtype != DType::f32 && p.q.dtype != DType::f64)
    return false;
  for (Tensor* t : {&p.q, &p.k, &p.v, &p.out})
    t->dtype = DType::bf16;
  return true;
}
bool as_bf16(BackwardProblem& p) {
  if (!as_bf16(p.forward))
    return false;
  for (Tensor* t : {&p.dout, &p.dq, &p.dk, &p.dv})
    t->dtype = DType::bf16;
  return true;
}

// When a slow backend was chosen for a GPU context: the first GPU kernel backend that a change
// of the caller's tensors would reach, and which change. Empty when there is none.
template <class Problem>
std::string faster_with_change(const Registry& r, const Problem& p, const Dims& d,
                               const ExecContext& x, const decltype(AutoOrder::order)& order,
                               bool copies_ok, Backend chosen) {
  if (x.device == Device::cpu || is_device_kernel(chosen))
    return {};
  const LayoutCopies layout = copies_for(p);
  const auto reaches = [&](const Problem& q) -> const BackendImpl* {
    for (Backend b : order)
      if (const BackendImpl* impl = r.find(b);
          impl && is_device_kernel(b) && ask(*impl, q, d, x).ok)
        return impl;
    return nullptr;
  };
  if (layout.any() && !copies_ok)
    if (const BackendImpl* impl = reaches(with_copies(p, layout)))
      return name(impl->id()) + " serves this problem with row-major (LayoutRight) " +
             layout.names() + "; " + name(chosen) + " runs the tensors as given (layout copies " +
             "are off or unavailable for this call)";
  Problem half = copies_ok && layout.any() ? with_copies(p, layout) : p;
  if (as_bf16(half))
    if (const BackendImpl* impl = reaches(half))
      return name(impl->id()) + " serves this problem with bf16 or f16 tensors " +
             "(Kokkos::Experimental::bhalf_t / half_t Views); " + name(chosen) + " runs " +
             std::string(to_string(dtype_of(p))) +
             " tensors on the GPU, tens of times slower (docs/performance.md)";
  return {};
}

// What layout copies cost, said wherever they are chosen (measured in docs/performance.md).
std::string copies_note(const LayoutCopies& c) {
  return "layout copies read and write " + c.names() +
         " once more each and add a kernel per tensor: row-major (LayoutRight) Views avoid them (" +
         layout_copies_cost() + ")";
}

std::string how_requested(const Options& o, Backend want) {
  return want == Backend::automatic        ? "auto"
         : o.backend != Backend::automatic ? "forced by options"
                                           : "forced by KOKKOSATTN_BACKEND";
}

// Rule empty: a problem whose outputs have no element is a no-op on every backend.
bool writes_nothing(const ForwardProblem& p) {
  const Fp8Scales& f = p.extras.fp8;
  return !has_elements(p.out) && !has_elements(p.extras.lse) && !has_elements(f.amax_s) &&
         !has_elements(f.amax_o);
}
bool writes_nothing(const BackwardProblem& p) {
  const Fp8BackwardScales& f = p.fp8;
  for (const Tensor* t :
       {&p.dq, &p.dk, &p.dv, &p.dbias, &p.dsinks, &f.amax_dq, &f.amax_dk, &f.amax_dv, &f.amax_dp})
    if (has_elements(*t))
      return false;
  return true;
}

template <class Problem>
Selection select_impl(const Registry& r, const Problem& p, const ExecContext& x, LayoutCopy lc) {
  Selection s;
  s.dims = validate(p);
  const Options& o = options_of(p);
  const Backend want = requested_backend(o);
  s.how = how_requested(o, want);
  if (writes_nothing(p)) {
    s.empty = true;
    return s;
  }
  const bool copies_ok = copies_allowed(o, lc);
  const LayoutCopies layout = copies_ok ? copies_for(p) : LayoutCopies{};
  if (want == Backend::automatic) {
    const AutoOrder order = auto_order(r, p, s.dims, x);
    s.order_rule = order.rule;
    std::string reasons;
    for (Backend b : order.order) {
      const BackendImpl* impl = r.find(b);
      const Support sup = impl ? ask(*impl, p, s.dims, x) : Support::no(not_built_reason(b));
      if (sup.ok) {
        s.impl = impl;
        s.kernel = sup.kernel;
        break;
      }
      reasons += (reasons.empty() ? "" : "; ") + name(b) + ": " + sup.reason;
    }
    // Copies only to reach a GPU kernel backend (they come before the slow ones in every
    // order), in the order for the copied problem: a measured lead (auto_policy.hpp) may hold for
    // row-major tensors that it could not claim for the tensors as given.
    // Fewer copies first (copy_choices), since each costs more than the leads between backends.
    const auto reach_with = [&](LayoutCopies c) {
      const Problem copied = with_copies(p, c);
      const AutoOrder copied_order = auto_order(r, copied, s.dims, x);
      for (Backend b : copied_order.order) {
        const BackendImpl* impl = r.find(b);
        if (!impl || !is_device_kernel(b))
          continue;
        if (const Support sup = ask(*impl, copied, s.dims, x); sup.ok) {
          s.impl = impl;
          s.kernel = sup.kernel;
          s.copies = c;
          s.order_rule = copied_order.rule;
          s.note = copies_note(c);
          return true;
        }
      }
      return false;
    };
    if (layout.any() && !(s.impl && is_device_kernel(s.impl->id())))
      for (LayoutCopies c : copy_choices(layout, kBackward<Problem>))
        if (reach_with(c))
          break;
    if (!s.impl)
      throw Unsupported("no backend can run this problem: " + reasons);
    if (!s.copies.any())
      s.note = faster_with_change(r, p, s.dims, x, order.order, copies_ok, s.impl->id());
    return s;
  }
  const BackendImpl* impl = r.find(want);
  if (impl == nullptr)
    throw Unsupported("backend " + name(want) + " is " + not_built_reason(want) + ", " + s.how);
  const Support sup = ask(*impl, p, s.dims, x);
  if (!sup.ok) {
    std::string why = sup.reason;
    if (layout.any()) {
      LayoutCopies c;
      const Support copied = ask_with_copies(*impl, p, layout, s.dims, x, c);
      if (copied.ok) {
        s.impl = impl;
        s.kernel = copied.kernel;
        s.copies = c;
        s.note = copies_note(c);
        return s;
      }
      if (copied.reason != sup.reason)
        why += "; with row-major copies of " + layout.names() + ": " + copied.reason;
    }
    throw Unsupported("backend " + name(want) + " cannot run this problem: " + why + " (" + s.how +
                      ")");
  }
  s.impl = impl;
  s.kernel = sup.kernel;
  return s;
}

template <class Problem>
std::vector<BackendVerdict> explain_impl(const Registry& r, const Problem& p, const ExecContext& x,
                                         LayoutCopy lc) {
  const Dims d = validate(p);
  const LayoutCopies layout = copies_allowed(options_of(p), lc) ? copies_for(p) : LayoutCopies{};
  std::vector<BackendVerdict> v;
  for (Backend b : auto_order(r, p, d, x).order) {
    BackendVerdict verdict;
    verdict.backend = b;
    const BackendImpl* impl = r.find(b);
    if (impl == nullptr) {
      verdict.reason = not_built_reason(b);
    } else {
      verdict.built = true;
      verdict.description = impl->description();
      const Support sup = ask(*impl, p, d, x);
      verdict.supported = sup.ok;
      verdict.reason = sup.reason;
      verdict.kernel = sup.kernel;
      if (!sup.ok && layout.any()) {
        LayoutCopies c;
        if (const Support copied = ask_with_copies(*impl, p, layout, d, x, c); copied.ok) {
          verdict.supported = true;
          verdict.copies = c;
          verdict.kernel = copied.kernel;
        }
      }
    }
    v.push_back(std::move(verdict));
  }
  return v;
}

} // namespace

Selection select(const Registry& r, const ForwardProblem& p, const ExecContext& x, LayoutCopy c) {
  return select_impl(r, p, x, c);
}
Selection select(const Registry& r, const BackwardProblem& p, const ExecContext& x, LayoutCopy c) {
  return select_impl(r, p, x, c);
}

std::vector<BackendVerdict> explain(const Registry& r, const ForwardProblem& p,
                                    const ExecContext& x, LayoutCopy c) {
  return explain_impl(r, p, x, c);
}
std::vector<BackendVerdict> explain(const Registry& r, const BackwardProblem& p,
                                    const ExecContext& x, LayoutCopy c) {
  return explain_impl(r, p, x, c);
}

std::string format_explain(const std::vector<BackendVerdict>& v) {
  const std::string head[3] = {"backend", "built", "supported"};
  std::size_t w0 = head[0].size();
  for (const BackendVerdict& b : v)
    w0 = std::max(w0, to_string(b.backend).size());
  const auto pad = [](std::string s, std::size_t w) {
    return s + std::string(w - s.size() + 2, ' ');
  };
  std::string out =
      pad(head[0], w0) + pad(head[1], head[1].size()) + pad(head[2], head[2].size()) + "details\n";
  for (const BackendVerdict& b : v) {
    std::string details = !b.supported     ? b.reason
                          : b.copies.any() ? "ok through row-major copies of " + b.copies.names() +
                                                 " (as given: " + b.reason + ")"
                                           : "ok";
    if (b.supported && !b.kernel.empty())
      details += ", kernel " + b.kernel;
    if (!b.description.empty())
      details += " [" + b.description + "]";
    out += pad(name(b.backend), w0) + pad(b.built ? "yes" : "no", head[1].size()) +
           pad(b.supported ? "yes" : "no", head[2].size()) + details + "\n";
  }
  return out;
}

std::string format_selection(const Selection& s) {
  if (s.empty)
    return "backend=none (" + s.how + "): nothing to compute, the problem has no output element " +
           "(B, T or N is 0; docs/semantics.md rule empty)";
  std::string out = "backend=" + name(s.impl->id()) + " (" + s.how + ")";
  if (!s.kernel.empty())
    out += " kernel=" + s.kernel;
  if (s.copies.any())
    out += " through row-major copies of " + s.copies.names();
  if (!s.order_rule.empty())
    out += "\norder: " + s.order_rule;
  if (!s.note.empty())
    out += "\nnote: " + s.note;
  return out;
}

void log_selection(std::string_view what, const Selection& s, DType dtype, const ExecContext& x) {
  if (!env_flag("KOKKOSATTN_LOG"))
    return;
  const Dims& d = s.dims;
  std::ostringstream os;
  os << "[kokkos-attention] " << what << ": backend="
     << (s.empty ? std::string_view("none, empty problem") : to_string(s.impl->id())) << " ("
     << s.how << ")";
  if (!s.kernel.empty())
    os << " kernel=" << s.kernel;
  os << " B=" << d.B << " T=" << d.T << " S=" << d.S << " N=" << d.N << " K=" << d.K
     << " H=" << d.H;
  if (d.Hv != d.H)
    os << " Hv=" << d.Hv;
  os << " dtype=" << to_string(dtype);
  if (d.packed)
    os << " varlen=packed";
  if (d.padded)
    os << " varlen=padded";
  if (!x.kokkos_space.empty())
    os << " space=" << x.kokkos_space;
  if (s.copies.any())
    os << " layout-copies=" << s.copies.names();
  if (!s.order_rule.empty())
    os << " order: " << s.order_rule;
  if (!s.note.empty())
    os << " note: " << s.note;
  os << '\n';
  std::cerr << os.str(); // one write, so concurrent runs do not interleave mid-line
}

void run_guarded(const BackendImpl& impl, std::string_view what, const std::function<void()>& f) {
  guarded(impl, std::string(what).c_str(), f);
}

void run_forward(const Registry& r, const ForwardProblem& p, const ExecContext& x) {
  const Selection s = select(r, p, x);
  log_selection("forward", s, p.q.dtype, x);
  if (s.empty)
    return;
  run_guarded(*s.impl, "forward", [&] { s.impl->forward(p, s.dims, x); });
}

void run_backward(const Registry& r, const BackwardProblem& p, const ExecContext& x) {
  const Selection s = select(r, p, x);
  log_selection("backward", s, p.forward.q.dtype, x);
  if (s.empty)
    return;
  run_guarded(*s.impl, "backward", [&] { s.impl->backward(p, s.dims, x); });
}

void attention_forward(const ForwardProblem& p, const ExecContext& x) {
  run_forward(default_registry(), p, x);
}

void attention_backward(const BackwardProblem& p, const ExecContext& x) {
  run_backward(default_registry(), p, x);
}

} // namespace kattn
