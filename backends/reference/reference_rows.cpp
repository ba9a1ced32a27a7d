#include "reference/reference_rows.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "kokkosattn/detail/philox.hpp"

namespace kattn::reference::detail {

Sequence sequence(const ForwardProblem& p, const Dims& d, std::int64_t b) {
  const Extras& e = p.extras;
  Sequence s;
  s.b = b;
  if (d.packed) {
    s.q_start = load_int(e.cu_seqlens_q, element_offset(e.cu_seqlens_q, b));
    s.q_len = load_int(e.cu_seqlens_q, element_offset(e.cu_seqlens_q, b + 1)) - s.q_start;
    s.k_start = load_int(e.cu_seqlens_k, element_offset(e.cu_seqlens_k, b));
    s.k_len = load_int(e.cu_seqlens_k, element_offset(e.cu_seqlens_k, b + 1)) - s.k_start;
    return s;
  }
  s.q_len = e.seqlens_q.defined() ? load_int(e.seqlens_q, element_offset(e.seqlens_q, b)) : d.T;
  s.k_len = e.seqlens_k.defined() ? load_int(e.seqlens_k, element_offset(e.seqlens_k, b)) : d.S;
  return s;
}

Tensor logical_layout(const Tensor& t) {
  Tensor l = t;
  std::int64_t stride = 1;
  for (int dim = t.rank - 1; dim >= 0; --dim) {
    l.stride[static_cast<std::size_t>(dim)] = stride;
    stride *= t.extent[static_cast<std::size_t>(dim)];
  }
  return l;
}

namespace {
// Calls f(strided offset, logical index) for every element of t.
template <class F>
void for_each_element(const Tensor& t, F&& f) {
  std::array<std::int64_t, Tensor::max_rank> ext{1, 1, 1, 1};
  for (int dim = 0; dim < t.rank; ++dim)
    ext[static_cast<std::size_t>(dim)] = t.extent[static_cast<std::size_t>(dim)];
  const Tensor l = logical_layout(t);
  for (std::int64_t a = 0; a < ext[0]; ++a)
    for (std::int64_t b = 0; b < ext[1]; ++b)
      for (std::int64_t c = 0; c < ext[2]; ++c)
        for (std::int64_t e = 0; e < ext[3]; ++e)
          f(element_offset(t, a, b, c, e), element_offset(l, a, b, c, e));
}
} // namespace

void store_all(const Tensor& t, const std::vector<double>& dense) {
  for_each_element(t, [&](std::int64_t off, std::int64_t idx) {
    store_double(t, off, dense[static_cast<std::size_t>(idx)]);
  });
}

void fill_all(const Tensor& t, double v) {
  for_each_element(t, [&](std::int64_t off, std::int64_t) { store_double(t, off, v); });
}

void compute_row(const ForwardProblem& p, const Dims& d, const Sequence& s, std::int64_t n,
                 std::int64_t i, Row& row) {
  const Options& o = p.options;
  const Extras& e = p.extras;
  const double neg_inf = -std::numeric_limits<double>::infinity();
  const std::int64_t kv_head = n / (d.N / d.K);
  const MaskRule rule = make_mask_rule(s.q_len, s.k_len, o.alignment == Alignment::bottom_right,
                                       d.window_left, d.window_right);
  double slope = 0.0;
  if (e.alibi_slopes.defined())
    slope = load_double(e.alibi_slopes, e.alibi_slopes.rank == 1
                                            ? element_offset(e.alibi_slopes, n)
                                            : element_offset(e.alibi_slopes, s.b, n));

  const auto len = static_cast<std::size_t>(s.k_len);
  std::vector<double> score(len, neg_inf);
  row.prob.assign(len, 0.0);
  row.keep.assign(len, 1.0);
  row.dcap.assign(len, 1.0);

  std::vector<double> q(static_cast<std::size_t>(d.H));
  for (std::int64_t h = 0; h < d.H; ++h)
    q[static_cast<std::size_t>(h)] =
        load_double(p.q, token_offset(p.q, d.packed, s.b, s.q_start, i, n, h));

  double max_score = neg_inf;
  // A NaN or +inf score makes the row NaN (docs/semantics.md non_finite): it is noted here, not
  // folded into the max, which a NaN would otherwise skip.
  bool poisoned = false;
  row.seen.assign(len, 0);
  for (std::int64_t j = 0; j < s.k_len; ++j) {
    const auto sj = static_cast<std::size_t>(j);
    if (!rule.visible(i, j))
      continue;
    if (e.mask.defined() && load_int(e.mask, broadcast_offset(e.mask, s.b, n, i, j)) == 0)
      continue;
    row.seen[sj] = 1;
    double dot = 0.0;
    for (std::int64_t h = 0; h < d.H; ++h)
      dot += q[static_cast<std::size_t>(h)] *
             load_double(p.k, key_offset(p, d, p.k, s, j, kv_head, h));
    double x = d.scale * dot;
    if (d.softcap > 0.0) {
      const double t = std::tanh(x / d.softcap);
      x = d.softcap * t;
      row.dcap[sj] = 1.0 - t * t;
    }
    if (e.bias.defined())
      x += load_double(e.bias, broadcast_offset(e.bias, s.b, n, i, j));
    if (e.alibi_slopes.defined())
      x += rule.alibi(slope, i, j);
    score[sj] = x;
    poisoned |= std::isnan(x) || x == -neg_inf;
    if (x > max_score)
      max_score = x;
  }

  // The sink (rule sinks): one more logit in the denominator, none in the numerator; NaN or
  // +inf poisons the row like such a score.
  double sink = neg_inf;
  if (e.sinks.defined()) {
    sink = load_double(e.sinks, element_offset(e.sinks, n));
    poisoned |= std::isnan(sink) || sink == -neg_inf;
  }

  if (poisoned) { // every key the row sees gets weight NaN, so out, LSE and gradients are NaN
    row.empty = false;
    row.lse = std::numeric_limits<double>::quiet_NaN();
    row.sink_prob = row.lse;
    for (std::size_t j = 0; j < len; ++j)
      row.prob[j] = row.seen[j] ? row.lse : 0.0;
    return;
  }
  row.empty = max_score == neg_inf; // no key weight: out 0, zero gradients (a sink or not)
  if (row.empty) {
    row.lse = sink;
    row.sink_prob = sink == neg_inf ? 0.0 : 1.0;
    return;
  }
  const double top = std::max(max_score, sink);
  double sum = sink == neg_inf ? 0.0 : std::exp(sink - top);
  for (std::size_t j = 0; j < len; ++j) {
    row.prob[j] = score[j] == neg_inf ? 0.0 : std::exp(score[j] - top);
    sum += row.prob[j];
  }
  for (double& pj : row.prob)
    pj /= sum;
  row.lse = top + std::log(sum);
  row.sink_prob = sink == neg_inf ? 0.0 : std::exp(sink - row.lse);

  if (o.dropout_p > 0.0) {
    const std::uint32_t threshold = dropout_keep_threshold(o.dropout_p);
    const double kept_scale = 1.0 / (1.0 - o.dropout_p);
    const auto bh = static_cast<std::uint64_t>(s.b * d.N + n);
    for (std::int64_t j = 0; j < s.k_len; ++j)
      row.keep[static_cast<std::size_t>(j)] =
          dropout_keep(o.dropout_seed, o.dropout_offset, bh, static_cast<std::uint64_t>(i),
                       static_cast<std::uint64_t>(j), threshold)
              ? kept_scale
              : 0.0;
  }
}

} // namespace kattn::reference::detail
