// FP8 on the host: exact conversions between double and the two OCP formats (E4M3FN, E5M2),
// and a framework-free delayed-scaling helper that keeps an amax history and derives per-tensor
// scale factors the way TransformerEngine's DelayedScaling recipe does. Header-only, no CUDA.
//
// Delayed scaling, per tensor and per training step:
//   1. the step runs with the current `scale` (quantise: x8 = round(x * scale)) and reports the
//      amax it measured (max|x| before scaling): record(amax) puts it in history slot 0;
//   2. update(): amax = max over the history ("max") or slot 0 ("most_recent");
//      scale = (fp8_max / amax) / 2^margin when amax is finite and > 0, else unchanged;
//      then the history rolls one slot (slot 0 becomes the newest past entry) and slot 0 is
//      cleared for the next step (TransformerEngine: roll(-1) then history[0] = 0).
//   scale_inv() = 1 / scale is the descale factor a consumer multiplies by.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include "kokkosattn/dtype.hpp"

namespace kattn::fp8 {

struct Format {
  int mantissa_bits;
  int exponent_bias;
  double max_finite;
  bool has_infinity; // E5M2 keeps IEEE infinities; E4M3FN has none (only NaN at 0x7f)
};

inline Format format_of(DType t) {
  if (t == DType::f8_e4m3)
    return {3, 7, 448.0, false};
  if (t == DType::f8_e5m2)
    return {2, 15, 57344.0, true};
  throw std::invalid_argument("fp8::format_of: expected f8_e4m3 or f8_e5m2");
}

inline double max_finite(DType t) {
  return format_of(t).max_finite;
}

// The value of one FP8 code.
inline double decode(std::uint8_t code, DType t) {
  const Format f = format_of(t);
  const int exp_bits = 7 - f.mantissa_bits;
  const int e = (code >> f.mantissa_bits) & ((1 << exp_bits) - 1);
  const int m = code & ((1 << f.mantissa_bits) - 1);
  const double sign = (code & 0x80) ? -1.0 : 1.0;
  const int e_max = (1 << exp_bits) - 1;
  if (f.has_infinity && e == e_max)
    return m == 0 ? sign * std::numeric_limits<double>::infinity()
                  : std::numeric_limits<double>::quiet_NaN();
  if (!f.has_infinity && e == e_max && m == (1 << f.mantissa_bits) - 1)
    return std::numeric_limits<double>::quiet_NaN();
  const double frac = static_cast<double>(m) / (1 << f.mantissa_bits);
  if (e == 0)
    return sign * std::ldexp(frac, 1 - f.exponent_bias);
  return sign * std::ldexp(1.0 + frac, e - f.exponent_bias);
}

// Round to nearest, ties to even, saturating to +-max_finite (what CUDA's satfinite conversion
// and cuDNN's FP8 outputs do); NaN stays NaN.
inline std::uint8_t encode(double x, DType t) {
  const Format f = format_of(t);
  const std::uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
  if (std::isnan(x))
    return static_cast<std::uint8_t>(sign | 0x7f);
  double a = std::min(std::abs(x), f.max_finite);
  const int e_min = 1 - f.exponent_bias; // exponent of the smallest normal
  int e = a > 0 ? std::ilogb(a) : e_min;
  e = std::max(e, e_min);
  const double ulp = std::ldexp(1.0, e - f.mantissa_bits);
  a = std::nearbyint(a / ulp) * ulp; // default rounding mode: ties to even
  a = std::min(a, f.max_finite);
  if (a == 0)
    return sign;
  e = std::max(std::ilogb(a), e_min);
  const bool normal = a >= std::ldexp(1.0, e_min);
  const int field = normal ? e + f.exponent_bias : 0;
  const double frac = normal ? a / std::ldexp(1.0, e) - 1.0 : a / std::ldexp(1.0, e_min);
  const int m = static_cast<int>(std::lround(frac * (1 << f.mantissa_bits)));
  return static_cast<std::uint8_t>(sign | (field << f.mantissa_bits) | m);
}

// Round-trips x through the format (the value a quantiser stores).
inline double quantize(double x, DType t) {
  return decode(encode(x, t), t);
}

enum class AmaxAlgo { max, most_recent };

struct DelayedScalingConfig {
  int margin = 0; // scale = fp8_max / amax / 2^margin
  std::size_t amax_history_len = 1024;
  AmaxAlgo amax_compute_algo = AmaxAlgo::max;
};

// One tensor's scaling state (TransformerEngine's DelayedScaling for one FP8 tensor).
class DelayedScaling {
public:
  explicit DelayedScaling(DType format, DelayedScalingConfig config = {})
      : fp8_max_(max_finite(format)), config_(config), history_(config.amax_history_len, 0.0) {
    if (config.amax_history_len == 0)
      throw std::invalid_argument("DelayedScaling: amax_history_len must be >= 1");
    if (config.margin < 0)
      throw std::invalid_argument("DelayedScaling: margin must be >= 0");
  }

  double scale() const { return scale_; }
  double scale_inv() const { return 1.0 / scale_; }
  const std::vector<double>& amax_history() const { return history_; }

  // The amax this step measured (max|x| before scaling).
  void record(double amax) { history_[0] = amax; }

  // Derives the next scale from the history, then rolls the history. Returns the amax used.
  double update() {
    double amax = history_[0];
    if (config_.amax_compute_algo == AmaxAlgo::max)
      for (double h : history_) // NaN propagates (like torch.max), leaving the scale unchanged
        amax = std::isnan(h) || std::isnan(amax) ? std::numeric_limits<double>::quiet_NaN()
                                                 : std::max(amax, h);
    if (std::isfinite(amax) && amax > 0.0)
      scale_ = fp8_max_ / amax / std::ldexp(1.0, config_.margin);
    std::rotate(history_.begin(), history_.begin() + 1, history_.end());
    history_[0] = 0.0;
    return amax;
  }

private:
  double fp8_max_;
  DelayedScalingConfig config_;
  std::vector<double> history_;
  double scale_ = 1.0;
};

} // namespace kattn::fp8
