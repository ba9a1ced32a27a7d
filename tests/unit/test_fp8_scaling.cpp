// kokkosattn/fp8_scaling.hpp: exact FP8 conversions and the delayed-scaling helper
// (TransformerEngine's DelayedScaling recipe: amax history, max / most_recent, margin).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "kokkosattn/fp8_scaling.hpp"

using kattn::DType;
namespace fp8 = kattn::fp8;

TEST_CASE("fp8/decode: known codes of both formats") {
  CHECK(fp8::decode(0x00, DType::f8_e4m3) == 0.0);
  CHECK(fp8::decode(0x38, DType::f8_e4m3) == 1.0);    // e=7 (bias 7), m=0
  CHECK(fp8::decode(0x7e, DType::f8_e4m3) == 448.0);  // largest finite
  CHECK(fp8::decode(0x01, DType::f8_e4m3) == 0x1p-9); // smallest subnormal
  CHECK(fp8::decode(0xb8, DType::f8_e4m3) == -1.0);
  CHECK(std::isnan(fp8::decode(0x7f, DType::f8_e4m3))); // E4M3FN: the only NaN, no infinity
  CHECK(fp8::decode(0x3c, DType::f8_e5m2) == 1.0);      // e=15 (bias 15), m=0
  CHECK(fp8::decode(0x7b, DType::f8_e5m2) == 57344.0);  // largest finite
  CHECK(fp8::decode(0x01, DType::f8_e5m2) == 0x1p-16);  // smallest subnormal
  CHECK(std::isinf(fp8::decode(0x7c, DType::f8_e5m2)));
  CHECK(std::isnan(fp8::decode(0x7d, DType::f8_e5m2)));
}

TEST_CASE("fp8/encode: every finite code round-trips, ties go to even, overflow saturates") {
  for (DType t : {DType::f8_e4m3, DType::f8_e5m2}) {
    int finite = 0;
    for (int c = 0; c < 256; ++c) {
      const auto code = static_cast<std::uint8_t>(c);
      const double x = fp8::decode(code, t);
      if (!std::isfinite(x))
        continue;
      ++finite;
      CHECK(fp8::encode(x, t) == code); // includes -0 (0x80)
    }
    CHECK(finite == (t == DType::f8_e4m3 ? 254 : 248));
    const double max = fp8::max_finite(t);
    CHECK(fp8::quantize(1e9, t) == max);
    CHECK(fp8::quantize(-1e9, t) == -max);
    CHECK(std::isnan(fp8::quantize(std::numeric_limits<double>::quiet_NaN(), t)));
  }
  // 1 + 1/16 lies halfway between 1 and 1.125 in E4M3: ties to the even mantissa (1.0);
  // 1 + 3/16 between 1.125 and 1.25 goes to 1.25 (even mantissa 2).
  CHECK(fp8::quantize(1.0625, DType::f8_e4m3) == 1.0);
  CHECK(fp8::quantize(1.1875, DType::f8_e4m3) == 1.25);
  CHECK(fp8::quantize(1.07, DType::f8_e4m3) == 1.125);
  // 464 is halfway between 448 and the NaN slot (480): saturates to 448, never NaN.
  CHECK(fp8::quantize(464.0, DType::f8_e4m3) == 448.0);
  // Subnormals: 1.5 * 2^-9 ties to even (2 * 2^-9).
  CHECK(fp8::quantize(1.5 * 0x1p-9, DType::f8_e4m3) == 0x1p-8);
  CHECK(fp8::quantize(0.4 * 0x1p-9, DType::f8_e4m3) == 0.0);
}

TEST_CASE("fp8/delayed_scaling: scale = fp8_max / amax / 2^margin from the history max") {
  fp8::DelayedScalingConfig c;
  c.amax_history_len = 3;
  fp8::DelayedScaling s(DType::f8_e4m3, c);
  CHECK(s.scale() == 1.0); // before any update
  s.record(2.0);
  CHECK(s.update() == 2.0);
  CHECK(s.scale() == doctest::Approx(448.0 / 2.0));
  CHECK(s.scale_inv() == doctest::Approx(2.0 / 448.0));
  CHECK(s.amax_history()[0] == 0.0); // cleared for the next step
  s.record(1.0);
  CHECK(s.update() == 2.0); // 2.0 still in the 3-long window
  s.record(0.5);
  CHECK(s.update() == 2.0);
  s.record(0.25);
  CHECK(s.update() == 1.0); // 2.0 fell out: window = {0.25, 0.5, 1.0}
  CHECK(s.scale() == doctest::Approx(448.0));
}

TEST_CASE("fp8/delayed_scaling: most_recent, margin, and amax 0 / inf / NaN keep the scale") {
  fp8::DelayedScalingConfig c;
  c.amax_history_len = 4;
  c.margin = 2;
  c.amax_compute_algo = fp8::AmaxAlgo::most_recent;
  fp8::DelayedScaling s(DType::f8_e5m2, c);
  s.record(8.0);
  s.update();
  CHECK(s.scale() == doctest::Approx(57344.0 / 8.0 / 4.0));
  s.record(1.0);
  CHECK(s.update() == 1.0); // most recent, not the max 8.0
  CHECK(s.scale() == doctest::Approx(57344.0 / 4.0));
  const double before = s.scale();
  for (double bad :
       {0.0, std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()}) {
    s.record(bad);
    s.update();
    CHECK(s.scale() == before);
  }
  fp8::DelayedScalingConfig empty;
  empty.amax_history_len = 0;
  CHECK_THROWS(fp8::DelayedScaling(DType::f8_e4m3, empty));
  CHECK_THROWS(fp8::format_of(DType::bf16));
}
