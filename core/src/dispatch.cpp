// Backend choice: validate, honour a forced backend (options or KOKKOSATTN_BACKEND) without ever
// falling back from it, otherwise take the first supporting backend in auto_order (preference_order
// adjusted per shape class, kokkosattn/preference.hpp).
#include "kokkosattn/dispatch.hpp"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <sstream>

#include "kokkosattn/errors.hpp"
#include "kokkosattn/preference.hpp"
#include "kokkosattn/validate.hpp"

namespace kattn {
namespace {

std::string name(Backend b) {
  return std::string(to_string(b));
}

std::string valid_backend_names() {
  std::string s = "auto";
  for (Backend b : preference_order)
    s += ", " + name(b);
  return s;
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

// auto_order, then the first backend that leads() this forward moves to the front (it still
// has to pass supports() when auto walks the order). Backward problems have no leads().
AutoOrder order_for(const Registry& r, const ForwardProblem& p, const Dims& d,
                    const ExecContext& x) {
  AutoOrder a = auto_order(d, false);
  for (auto it = a.order.begin(); it != a.order.end(); ++it) {
    const BackendImpl* impl = r.find(*it);
    if (impl == nullptr)
      continue;
    std::string why = guarded(*impl, "leads()", [&] { return impl->leads(p, d, x); });
    if (why.empty())
      continue;
    std::rotate(a.order.begin(), it, it + 1);
    a.rule = std::move(why);
    break;
  }
  return a;
}
AutoOrder order_for(const Registry&, const BackwardProblem&, const Dims& d, const ExecContext&) {
  return auto_order(d, true);
}

template <class Problem>
Selection select_impl(const Registry& r, const Problem& p, const ExecContext& x) {
  Selection s;
  s.dims = validate(p);
  const Options& o = options_of(p);
  const Backend want = requested_backend(o);
  if (want == Backend::automatic) {
    s.how = "auto";
    const AutoOrder order = order_for(r, p, s.dims, x);
    s.order_rule = order.rule;
    std::string reasons;
    for (Backend b : order.order) {
      const BackendImpl* impl = r.find(b);
      const Support sup = impl ? ask(*impl, p, s.dims, x) : Support::no(not_built_reason(b));
      if (sup.ok) {
        s.impl = impl;
        return s;
      }
      reasons += (reasons.empty() ? "" : "; ") + name(b) + ": " + sup.reason;
    }
    throw Unsupported("no backend can run this problem: " + reasons);
  }
  s.how = o.backend != Backend::automatic ? "forced by options" : "forced by KOKKOSATTN_BACKEND";
  const BackendImpl* impl = r.find(want);
  if (impl == nullptr)
    throw Unsupported("backend " + name(want) + " is " + not_built_reason(want) + ", " + s.how);
  const Support sup = ask(*impl, p, s.dims, x);
  if (!sup.ok)
    throw Unsupported("backend " + name(want) + " cannot run this problem: " + sup.reason + " (" +
                      s.how + ")");
  s.impl = impl;
  return s;
}

template <class Problem>
std::vector<BackendVerdict> explain_impl(const Registry& r, const Problem& p,
                                         const ExecContext& x) {
  const Dims d = validate(p);
  std::vector<BackendVerdict> v;
  for (Backend b : order_for(r, p, d, x).order) {
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
    }
    v.push_back(std::move(verdict));
  }
  return v;
}

} // namespace

Backend requested_backend(const Options& o) {
  if (o.backend != Backend::automatic)
    return o.backend;
  const char* env = std::getenv("KOKKOSATTN_BACKEND");
  if (env == nullptr || *env == '\0')
    return Backend::automatic;
  if (const auto b = parse_backend(env))
    return *b;
  throw InvalidArgument("KOKKOSATTN_BACKEND: expected one of " + valid_backend_names() +
                        ", got \"" + env + "\"");
}

Selection select(const Registry& r, const ForwardProblem& p, const ExecContext& x) {
  return select_impl(r, p, x);
}
Selection select(const Registry& r, const BackwardProblem& p, const ExecContext& x) {
  return select_impl(r, p, x);
}

std::vector<BackendVerdict> explain(const Registry& r, const ForwardProblem& p,
                                    const ExecContext& x) {
  return explain_impl(r, p, x);
}
std::vector<BackendVerdict> explain(const Registry& r, const BackwardProblem& p,
                                    const ExecContext& x) {
  return explain_impl(r, p, x);
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
    std::string details = b.supported ? "ok" : b.reason;
    if (!b.description.empty())
      details += " [" + b.description + "]";
    out += pad(name(b.backend), w0) + pad(b.built ? "yes" : "no", head[1].size()) +
           pad(b.supported ? "yes" : "no", head[2].size()) + details + "\n";
  }
  return out;
}

void log_selection(std::string_view what, const Selection& s, DType dtype, const ExecContext& x) {
  if (!env_flag("KOKKOSATTN_LOG"))
    return;
  const Dims& d = s.dims;
  std::ostringstream os;
  os << "[kokkos-attention] " << what << ": backend=" << to_string(s.impl->id()) << " (" << s.how
     << ") B=" << d.B << " T=" << d.T << " S=" << d.S << " N=" << d.N << " K=" << d.K
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
  if (!s.order_rule.empty())
    os << " order: " << s.order_rule;
  os << '\n';
  std::cerr << os.str(); // one write, so concurrent runs do not interleave mid-line
}

void run_guarded(const BackendImpl& impl, std::string_view what, const std::function<void()>& f) {
  guarded(impl, std::string(what).c_str(), f);
}

void run_forward(const Registry& r, const ForwardProblem& p, const ExecContext& x) {
  const Selection s = select(r, p, x);
  log_selection("forward", s, p.q.dtype, x);
  run_guarded(*s.impl, "forward", [&] { s.impl->forward(p, s.dims, x); });
}

void run_backward(const Registry& r, const BackwardProblem& p, const ExecContext& x) {
  const Selection s = select(r, p, x);
  log_selection("backward", s, p.forward.q.dtype, x);
  run_guarded(*s.impl, "backward", [&] { s.impl->backward(p, s.dims, x); });
}

} // namespace kattn
