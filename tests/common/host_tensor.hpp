// Test helper: an owning host buffer of any dtype with a kattn::Tensor view onto it, random
// fills (normal, outliers), NaN poisoning and conversion to doubles.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <random>
#include <vector>

#include "kokkosattn/detail/host_access.hpp"
#include "kokkosattn/tensor.hpp"

namespace kattn::test {

class HostTensor {
public:
  HostTensor() = default;
  HostTensor(DType dtype, std::initializer_list<std::int64_t> extents)
      : HostTensor(dtype, std::vector<std::int64_t>(extents)) {}
  HostTensor(DType dtype, const std::vector<std::int64_t>& extents) {
    std::int64_t n = 1;
    for (auto e : extents)
      n *= e;
    bytes_.assign(static_cast<std::size_t>(n) * size_bytes(dtype) + 1, std::byte{0});
    view_.data = bytes_.data();
    view_.dtype = dtype;
    view_.rank = static_cast<int>(extents.size());
    for (std::size_t d = 0; d < extents.size(); ++d)
      view_.extent[d] = extents[d];
    std::int64_t s = 1;
    for (int d = view_.rank - 1; d >= 0; --d) {
      view_.stride[static_cast<std::size_t>(d)] = s;
      s *= view_.extent[static_cast<std::size_t>(d)];
    }
  }

  const Tensor& view() const { return view_; }
  operator const Tensor&() const { return view_; }
  std::int64_t numel() const { return view_.numel(); }

  // Elements are addressed in storage order (the tensor is contiguous row-major).
  double get(std::int64_t i) const { return load_double(view_, i); }
  void set(std::int64_t i, double v) { store_double(view_, i, v); }
  std::int64_t get_int(std::int64_t i) const { return load_int(view_, i); }
  void set_int(std::int64_t i, std::int64_t v) {
    if (view_.dtype == DType::i32) {
      auto x = static_cast<std::int32_t>(v);
      std::memcpy(bytes_.data() + i * 4, &x, 4);
    } else {
      bytes_[static_cast<std::size_t>(i)] = std::byte{static_cast<unsigned char>(v != 0)};
    }
  }

  void fill_normal(std::uint64_t seed, double stddev = 1.0, double mean = 0.0) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> dist(mean, stddev);
    for (std::int64_t i = 0; i < numel(); ++i)
      set(i, dist(rng));
  }
  // N(0,1) + N(0,100)·Bernoulli(0.001): BRIEF.md's outlier inputs.
  void fill_outliers(std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> base(0.0, 1.0), big(0.0, 100.0);
    std::bernoulli_distribution rare(0.001);
    for (std::int64_t i = 0; i < numel(); ++i)
      set(i, base(rng) + (rare(rng) ? big(rng) : 0.0));
  }
  void fill(double v) {
    for (std::int64_t i = 0; i < numel(); ++i)
      set(i, v);
  }
  void poison() { fill(std::numeric_limits<double>::quiet_NaN()); }

  std::vector<double> to_doubles() const {
    std::vector<double> out(static_cast<std::size_t>(numel()));
    for (std::int64_t i = 0; i < numel(); ++i)
      out[static_cast<std::size_t>(i)] = get(i);
    return out;
  }
  std::vector<std::byte> raw() const { return bytes_; }

private:
  std::vector<std::byte> bytes_;
  Tensor view_;
};

// max |a - b| over all elements; NaN anywhere (in either) gives +inf so it can never pass.
inline double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size())
    return std::numeric_limits<double>::infinity();
  double m = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) || std::isnan(b[i]))
      return std::numeric_limits<double>::infinity();
    if (std::isinf(a[i]) || std::isinf(b[i])) {
      if (a[i] != b[i])
        return std::numeric_limits<double>::infinity();
      continue;
    }
    m = std::max(m, std::abs(a[i] - b[i]));
  }
  return m;
}

} // namespace kattn::test
