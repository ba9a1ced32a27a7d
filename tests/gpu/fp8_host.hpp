// Host-side FP8 test data shared by the cudnn FP8 forward and backward tests: quantised
// random tensors with their dequantised values, contiguous views, and f32 [1] device scalars
// (the scale / descale / amax factors of kattn::Fp8Scales and Fp8BackwardScales).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "gpu/device_buffer.hpp"
#include "kokkosattn/fp8_scaling.hpp"
#include "kokkosattn/tensor.hpp"

namespace kattn::test {

inline Tensor contiguous_view(void* data, DType t, const std::vector<std::int64_t>& ext) {
  Tensor v;
  v.data = data;
  v.dtype = t;
  v.rank = static_cast<int>(ext.size());
  std::int64_t s = 1;
  for (int d = v.rank - 1; d >= 0; --d) {
    v.extent[static_cast<std::size_t>(d)] = ext[static_cast<std::size_t>(d)];
    v.stride[static_cast<std::size_t>(d)] = s;
    s *= ext[static_cast<std::size_t>(d)];
  }
  return v;
}

// FP8 codes of a contiguous tensor plus their dequantised values.
struct Fp8Host {
  std::vector<std::uint8_t> codes;
  std::vector<double> real; // code * descale
  Tensor view;
  float descale = 1;
};

// N(0,1) values with rare (p = 0.001) N(0, outlier_sd) outliers added, quantised with
// scale = fp8_max / amax (the delayed-scaling helper fed with this tensor's amax).
inline Fp8Host quantised(DType t, const std::vector<std::int64_t>& ext, std::uint64_t seed,
                         double outlier_sd) {
  std::int64_t n = 1;
  for (auto e : ext)
    n *= e;
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> base(0, 1), big(0, outlier_sd);
  std::bernoulli_distribution rare(0.001);
  std::vector<double> x(static_cast<std::size_t>(n));
  double amax = 0;
  for (double& v : x) {
    v = base(rng) + (rare(rng) ? big(rng) : 0.0);
    amax = std::max(amax, std::abs(v));
  }
  fp8::DelayedScaling s(t);
  s.record(amax);
  s.update();
  Fp8Host h;
  h.descale = static_cast<float>(s.scale_inv());
  const double scale = 1.0 / static_cast<double>(h.descale); // exactly what the device undoes
  for (double v : x) {
    h.codes.push_back(fp8::encode(v * scale, t));
    h.real.push_back(fp8::decode(h.codes.back(), t) * static_cast<double>(h.descale));
  }
  h.view = contiguous_view(h.codes.data(), t, ext);
  return h;
}

// One f32 [1] scalar on the device.
struct Scalar {
  float host = 0;
  Tensor view = contiguous_view(&host, DType::f32, {1});
  DeviceCopy dev;
  explicit Scalar(float v) : host(v), dev(view) {}
  void set(float v) {
    host = v;
    dev.upload();
  }
  float read() {
    dev.download();
    return host;
  }
};

} // namespace kattn::test
