// Element types the descriptor can carry.
#pragma once

#include <cstddef>
#include <string_view>

namespace kattn {

enum class DType {
  f64,
  f32,
  f16,
  bf16,
  f8_e4m3, // FP8 (OCP E4M3FN: max 448, no infinities): q/k/v/out of an FP8 forward
  f8_e5m2, // FP8 (OCP E5M2: max 57344, IEEE-like)
  i32,     // sequence lengths and cu_seqlens offsets
  boolean, // boolean masks, one byte per element, non-zero = attend
};

std::string_view to_string(DType t);
std::size_t size_bytes(DType t);
bool is_floating(DType t);
bool is_fp8(DType t); // f8_e4m3 or f8_e5m2

} // namespace kattn
