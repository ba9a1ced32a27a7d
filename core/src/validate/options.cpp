// Option values, and what they resolve to in Dims: the softmax scale, the window with causal
// folded in, and the sizes dropout's Philox counters can address.
#include <cmath>
#include <cstdint>
#include <limits>

#include "checks.hpp"

namespace kattn::validation {

void check_options(const Options& o) {
  if (o.scale && !(std::isfinite(*o.scale) && *o.scale > 0.0))
    fail("options.scale: expected a finite value > 0, got " + str(*o.scale));
  if (!(std::isfinite(o.softcap) && o.softcap >= 0.0))
    fail("options.softcap: expected a finite value >= 0 (0 = off), got " + str(o.softcap));
  if (!(o.dropout_p >= 0.0 && o.dropout_p < 1.0))
    fail("options.dropout_p: expected a probability in [0, 1), got " + str(o.dropout_p));
  if (o.window_left < -1)
    fail("options.window_left: expected >= -1, got " + str(o.window_left));
  if (o.window_right < -1)
    fail("options.window_right: expected >= -1, got " + str(o.window_right));
  if (o.causal && o.window_right != -1 && o.window_right != 0)
    fail("options.window_right: expected -1 or 0 with options.causal = true (causal means "
         "window_right = 0), got " +
         str(o.window_right));
  if (to_string(o.alignment) == "unknown")
    fail("options.alignment: expected top_left or bottom_right, got value " +
         str(static_cast<std::int64_t>(o.alignment)));
  if (to_string(o.backend) != "unknown")
    return;
  fail("options.backend: expected one of auto, cudnn, cuda, hip, portable, naive, reference, got "
       "value " +
       str(static_cast<std::int64_t>(o.backend)));
}

namespace {

// Philox counters are 32-bit words: bh = b*N+n, i, j/4 and offset must each fit one.
void check_dropout_limits(const Options& o, const Dims& d) {
  if (o.dropout_p == 0.0)
    return;
  constexpr std::int64_t two32 = std::int64_t{1} << 32;
  constexpr std::int64_t two34 = std::int64_t{1} << 34;
  if (d.N > 0 && d.B > (two32 - 1) / d.N) // (N = 0: an empty problem, rule empty)
    fail("options.dropout_p: expected B*N < 2^32 with dropout (Philox counter), got B*N = " +
         str(d.B) + "*" + str(d.N));
  if (d.T >= two32)
    fail("options.dropout_p: expected T < 2^32 with dropout (Philox counter), got T = " + str(d.T));
  if (d.S >= two34)
    fail("options.dropout_p: expected S < 2^34 with dropout (Philox counter), got S = " + str(d.S));
  if (o.dropout_offset >= static_cast<std::uint64_t>(two32))
    fail("options.dropout_offset: expected < 2^32 (Philox counter), got " +
         std::to_string(o.dropout_offset));
}

// A window reaching T + S keys or more cuts nothing (no key is that far from any row's diagonal
// position, whatever the alignment and lengths): it is unbounded, so that no backend computes
// with it (INT64_MAX overflowed every mask rule's i + diag - window).
std::int64_t resolved_window(std::int64_t w, const Dims& d) {
  return w < 0 || (w >= d.T && w - d.T >= d.S) ? -1 : w;
}

} // namespace

void resolve_options(const Options& o, Dims& d) {
  d.scale = o.scale ? *o.scale : 1.0 / std::sqrt(static_cast<double>(d.H));
  // c tanh(s / c) = s for every score a float can hold once c is beyond float's range: such a cap
  // is off on every backend (float kernels narrowed it to inf, and inf * tanh(s / inf) is NaN).
  d.softcap = o.softcap > std::numeric_limits<float>::max() ? 0.0 : o.softcap;
  d.window_left = resolved_window(o.window_left, d);
  d.window_right = o.causal ? 0 : resolved_window(o.window_right, d);
  check_dropout_limits(o, d);
}

} // namespace kattn::validation
