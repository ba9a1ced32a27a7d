#include "demo.hpp"

#include <algorithm>
#include <set>

#include "terminal.hpp"

namespace codelab {
namespace {

std::string rate_key(const Impl& impl, kattn::DType dtype, bool backward) {
  return impl.name() + "/" + std::string(kattn::to_string(dtype)) + (backward ? "/bwd" : "/fwd");
}

} // namespace

Shape Demo::default_shape(kattn::DType dtype) {
  Shape s;
  s.dtype = dtype;
  return s;
}

std::string Demo::label(const Impl& impl) const {
  const auto it = sweep_dtype.find(impl.name());
  const kattn::DType t = it == sweep_dtype.end() ? kattn::DType::f32 : it->second;
  return impl.name() + " (" + std::string(kattn::to_string(t)) + ")";
}

std::optional<std::string> Demo::skip_reason(const Impl& impl, const Shape& s, bool backward,
                                             double limit_s) const {
  // naive materialises the [B, N, T, S] fp32 scores; beyond 4 GiB it would swap or fail here.
  const double scores = 4.0 * s.B * s.N * double(s.T) * double(s.S);
  if (impl.backend == kattn::Backend::naive && scores > 4.0 * (1u << 30))
    return "skipped: naive would materialise " + format_bytes(scores) + " of scores";
  const auto it = rate.find(rate_key(impl, s.dtype, backward));
  if (it == rate.end() || it->second <= 0)
    return std::nullopt;
  const double est = s.flops(backward) / it->second;
  if (est <= limit_s)
    return std::nullopt;
  return "skipped: ~" + format(est < 10 ? "%.1f" : "%.0f", est) + " s per call estimated (> " +
         format("%g", limit_s) + " s cell limit, --cell-limit)";
}

std::vector<const Impl*> Demo::swept() const {
  std::vector<const Impl*> v;
  for (const Impl& impl : impls)
    if (impl.backend != kattn::Backend::reference && sweep_dtype.count(impl.name()))
      v.push_back(&impl);
  return v;
}

Row Demo::measure(const std::string& exp, const Impl& impl, const Shape& shape, bool backward,
                  bool capped) {
  Row r;
  r.exp = exp;
  r.impl = impl.name();
  r.shape = shape;
  r.pass = backward ? "fwd+bwd" : "fwd";
  const auto why = capped ? skip_reason(impl, shape, backward, cfg.cell_limit_s) : std::nullopt;
  if (why) {
    r.error = *why;
  } else {
    try {
      HostProblem host(shape, backward);
      Placed placed(host, impl);
      std::string why_not;
      if (!placed.supported(&why_not, backward)) {
        r.error = "refused: " + why_not;
      } else {
        const Timing t = time_it(placed, impl.gpu, backward, cfg.policy);
        r.ms = t.ms;
        r.tflops = shape.flops(backward) / (t.ms * 1e-3) / 1e12;
        // The best rate so far: small problems run at lower rates (fixed overheads), so the
        // estimate for a larger cell is a lower bound of its time, not an inflated guess.
        double& best = rate[rate_key(impl, shape.dtype, backward)];
        best = std::max(best, shape.flops(backward) / (t.ms * 1e-3));
      }
    } catch (const std::exception& e) {
      r.error = std::string("failed: ") + e.what();
    }
  }
  report.rows.push_back(r);
  return r;
}

std::string ms_cell(const Row& r) {
  if (r.ms)
    return format(*r.ms < 10 ? "%.3f" : "%.1f", *r.ms);
  return r.error.rfind("skipped", 0) == 0   ? "skip"
         : r.error.rfind("refused", 0) == 0 ? "n/a"
                                            : "fail";
}

void add_missing_notes(Table& t, const std::vector<Row>& rows) {
  std::set<std::string> seen;
  for (const Row& r : rows) {
    if (r.error.empty())
      continue;
    // One note per backend and kind of reason (the estimate differs per cell).
    const std::string kind = r.error.substr(0, r.error.find(' '));
    if (!seen.insert(r.impl + kind).second)
      continue;
    // "skip: naive from B=4 T=512 ... on: ~3.2 s per call estimated (...)"
    const std::size_t colon = r.error.find(": ");
    const std::string why = colon == std::string::npos ? r.error : r.error.substr(colon + 2);
    t.notes.push_back(ms_cell(r) + ": " + r.impl + " from " + r.shape.describe() + " on: " + why);
  }
}

} // namespace codelab
