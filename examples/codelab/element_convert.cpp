#include "element_convert.hpp"

#include <kokkosattn/half.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>

namespace codelab {
namespace {

float e4m3_to_float(std::uint8_t b) {
  const int e = (b >> 3) & 0xf, m = b & 7;
  if (e == 15 && m == 7)
    return std::numeric_limits<float>::quiet_NaN();
  const float mag = e == 0 ? std::ldexp(float(m), -9) : std::ldexp(float(8 + m), e - 10);
  return (b & 0x80) ? -mag : mag;
}

// The 127 finite non-negative E4M3 values in code order (monotonic), for a nearest search.
const std::array<float, 127>& e4m3_values() {
  static const std::array<float, 127> table = [] {
    std::array<float, 127> t{};
    for (int c = 0; c < 127; ++c)
      t[std::size_t(c)] = e4m3_to_float(std::uint8_t(c));
    return t;
  }();
  return table;
}

std::uint8_t float_to_e4m3(float x) {
  if (std::isnan(x))
    return 0x7f;
  const std::uint8_t sign = std::signbit(x) ? 0x80 : 0;
  const float a = std::min(std::fabs(x), 448.0f); // saturate: E4M3 has no infinity
  const auto& t = e4m3_values();
  const auto hi = std::lower_bound(t.begin(), t.end(), a);
  if (hi == t.begin())
    return sign;
  int code = int(hi - t.begin());
  if (hi != t.end()) {
    const float up = *hi - a, down = a - *(hi - 1);
    if (down < up || (down == up && (code - 1) % 2 == 0))
      --code; // nearer below, or a tie resolved to the even code
  } else {
    --code;
  }
  return std::uint8_t(sign | code);
}

std::uint8_t float_to_e5m2(float x) {
  const std::uint16_t h = kattn::float_to_f16(x);
  if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff)) // NaN
    return std::uint8_t((h >> 8) | 0x02);
  const std::uint16_t rounded = std::uint16_t(h + 0x7f + ((h >> 8) & 1)); // RNE on the low byte
  return std::uint8_t(rounded >> 8);
}

} // namespace

bool convertible(kattn::DType dtype) {
  using kattn::DType;
  return dtype == DType::f32 || dtype == DType::f16 || dtype == DType::bf16 ||
         dtype == DType::f8_e4m3 || dtype == DType::f8_e5m2;
}

float load_element(const void* data, kattn::DType dtype, long i) {
  switch (dtype) {
  case kattn::DType::f32:
    return static_cast<const float*>(data)[i];
  case kattn::DType::f16:
    return kattn::f16_to_float(static_cast<const std::uint16_t*>(data)[i]);
  case kattn::DType::bf16:
    return kattn::bf16_to_float(static_cast<const std::uint16_t*>(data)[i]);
  case kattn::DType::f8_e4m3:
    return e4m3_to_float(static_cast<const std::uint8_t*>(data)[i]);
  case kattn::DType::f8_e5m2:
    return kattn::f16_to_float(std::uint16_t(static_cast<const std::uint8_t*>(data)[i] << 8));
  default:
    return std::numeric_limits<float>::quiet_NaN();
  }
}

void store_element(void* data, kattn::DType dtype, long i, float x) {
  switch (dtype) {
  case kattn::DType::f32:
    static_cast<float*>(data)[i] = x;
    break;
  case kattn::DType::f16:
    static_cast<std::uint16_t*>(data)[i] = kattn::float_to_f16(x);
    break;
  case kattn::DType::bf16:
    static_cast<std::uint16_t*>(data)[i] = kattn::float_to_bf16(x);
    break;
  case kattn::DType::f8_e4m3:
    static_cast<std::uint8_t*>(data)[i] = float_to_e4m3(x);
    break;
  case kattn::DType::f8_e5m2:
    static_cast<std::uint8_t*>(data)[i] = float_to_e5m2(x);
    break;
  default:
    break;
  }
}

} // namespace codelab
