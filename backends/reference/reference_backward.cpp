#include <vector>

#include "reference/reference.hpp"
#include "reference/reference_rows.hpp"

namespace kattn::reference {

// With Z the dropout multipliers (keep/(1-p)) and O = (P∘Z) V:
//   dV = (P∘Z)^T dO,  dP = (dO V^T)∘Z,  dS = P∘(dP - rowsum(P∘dP))  (gradient of the biased
//   score, i.e. dbias), dS_raw = dS∘(1 - tanh²) under softcap,
//   dQ = scale · dS_raw K,  dK = scale · dS_raw^T Q  (summed over the query heads of a KV head);
//   with sinks, dsink_n = -Σ_(b,i) P_sink · rowsum(P∘dP) (the sink's logit is in every P's
//   denominator and in no numerator).
void backward(const BackwardProblem& bp, const Dims& d) {
  using namespace detail;
  const ForwardProblem& p = bp.forward;
  const bool want_dbias = bp.dbias.defined();
  const bool want_dsinks = bp.dsinks.defined();
  std::vector<double> dsinks(want_dsinks ? static_cast<std::size_t>(d.N) : 0, 0.0);
  // Dense logical-order accumulators covering every element, so untouched ones end up 0.
  const Tensor lq = logical_layout(bp.dq), lk = logical_layout(bp.dk), lv = logical_layout(bp.dv);
  std::vector<double> dq(static_cast<std::size_t>(bp.dq.numel()), 0.0);
  std::vector<double> dk(static_cast<std::size_t>(bp.dk.numel()), 0.0);
  std::vector<double> dv(static_cast<std::size_t>(bp.dv.numel()), 0.0);
  Tensor lb;
  std::vector<double> dbias;
  if (want_dbias) {
    lb = logical_layout(bp.dbias);
    dbias.assign(static_cast<std::size_t>(bp.dbias.numel()), 0.0);
  }

  Row row;
  std::vector<double> q(static_cast<std::size_t>(d.H)), dout(static_cast<std::size_t>(d.Hv));
  std::vector<double> ds;
  for (std::int64_t b = 0; b < d.B; ++b) {
    const Sequence s = sequence(p, d, b);
    const auto at = [&](const Tensor& t, std::int64_t start, std::int64_t pos, std::int64_t head,
                        std::int64_t f) {
      return static_cast<std::size_t>(token_offset(t, d.packed, b, start, pos, head, f));
    };
    for (std::int64_t n = 0; n < d.N; ++n) {
      const std::int64_t kvh = n / (d.N / d.K);
      for (std::int64_t i = 0; i < s.q_len; ++i) {
        compute_row(p, d, s, n, i, row);
        if (row.empty)
          continue; // zero gradients
        for (std::int64_t h = 0; h < d.H; ++h)
          q[static_cast<std::size_t>(h)] =
              load_double(p.q, token_offset(p.q, d.packed, b, s.q_start, i, n, h));
        for (std::int64_t h = 0; h < d.Hv; ++h)
          dout[static_cast<std::size_t>(h)] =
              load_double(bp.dout, token_offset(bp.dout, d.packed, b, s.q_start, i, n, h));

        // dP_ij and D_i = sum_j P_ij dP_ij.
        ds.assign(static_cast<std::size_t>(s.k_len), 0.0);
        double rowsum = 0.0;
        for (std::int64_t j = 0; j < s.k_len; ++j) {
          const auto sj = static_cast<std::size_t>(j);
          const double pz = row.prob[sj] * row.keep[sj];
          if (row.prob[sj] == 0.0)
            continue;
          double dp = 0.0;
          for (std::int64_t h = 0; h < d.Hv; ++h) {
            const double vjh =
                load_double(p.v, token_offset(p.v, d.packed, b, s.k_start, j, kvh, h));
            dp += dout[static_cast<std::size_t>(h)] * vjh;
            dv[at(lv, s.k_start, j, kvh, h)] += pz * dout[static_cast<std::size_t>(h)];
          }
          ds[sj] = dp * row.keep[sj];
          rowsum += row.prob[sj] * ds[sj];
        }
        if (want_dsinks)
          dsinks[static_cast<std::size_t>(n)] -= row.sink_prob * rowsum;
        for (std::int64_t j = 0; j < s.k_len; ++j) {
          const auto sj = static_cast<std::size_t>(j);
          if (row.prob[sj] == 0.0)
            continue;
          const double dscore = row.prob[sj] * (ds[sj] - rowsum);
          if (want_dbias)
            dbias[static_cast<std::size_t>(broadcast_offset(lb, b, n, i, j))] += dscore;
          const double draw = d.scale * dscore * row.dcap[sj];
          for (std::int64_t h = 0; h < d.H; ++h) {
            dq[at(lq, s.q_start, i, n, h)] +=
                draw * load_double(p.k, token_offset(p.k, d.packed, b, s.k_start, j, kvh, h));
            dk[at(lk, s.k_start, j, kvh, h)] += draw * q[static_cast<std::size_t>(h)];
          }
        }
      }
    }
  }
  store_all(bp.dq, dq);
  store_all(bp.dk, dk);
  store_all(bp.dv, dv);
  if (want_dbias)
    store_all(bp.dbias, dbias);
  if (want_dsinks)
    store_all(bp.dsinks, dsinks);
}

} // namespace kattn::reference
