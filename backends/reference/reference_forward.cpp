#include <cmath>
#include <limits>
#include <vector>

#include "reference/reference.hpp"
#include "reference/reference_rows.hpp"

namespace kattn::reference {

void forward(const ForwardProblem& p, const Dims& d) {
  using namespace detail;
  const Tensor& lse = p.extras.lse;
  // Rows no sequence covers (padding, tokens past cu_seqlens[B]) keep these values.
  fill_all(p.out, 0.0);
  if (lse.defined())
    fill_all(lse, -std::numeric_limits<double>::infinity());

  Row row;
  std::vector<double> acc(static_cast<std::size_t>(d.Hv));
  for (std::int64_t b = 0; b < d.B; ++b) {
    const Sequence s = sequence(p, d, b);
    const std::int64_t kv_per_q = d.N / d.K;
    for (std::int64_t n = 0; n < d.N; ++n) {
      for (std::int64_t i = 0; i < s.q_len; ++i) {
        compute_row(p, d, s, n, i, row);
        if (lse.defined())
          store_double(
              lse, d.packed ? element_offset(lse, n, s.q_start + i) : element_offset(lse, b, n, i),
              row.lse);
        if (row.empty)
          continue; // out stays 0
        acc.assign(acc.size(), 0.0);
        for (std::int64_t j = 0; j < s.k_len; ++j) {
          const double w =
              row.prob[static_cast<std::size_t>(j)] * row.keep[static_cast<std::size_t>(j)];
          if (w == 0.0)
            continue;
          for (std::int64_t h = 0; h < d.Hv; ++h)
            acc[static_cast<std::size_t>(h)] +=
                w * load_double(p.v, key_offset(p, d, p.v, s, j, n / kv_per_q, h));
        }
        if (std::isnan(row.lse)) // a poisoned row (rule non_finite), also without keys
          acc.assign(acc.size(), row.lse);
        for (std::int64_t h = 0; h < d.Hv; ++h)
          store_double(p.out, token_offset(p.out, d.packed, b, s.q_start, i, n, h),
                       acc[static_cast<std::size_t>(h)]);
      }
    }
  }
}

} // namespace kattn::reference
