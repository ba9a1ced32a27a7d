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
  f8_e4m3, // reserved: FP8 forward on Hopper
  f8_e5m2, // reserved
  i32,     // sequence lengths and cu_seqlens offsets
  boolean, // boolean masks, one byte per element, non-zero = attend
};

std::string_view to_string(DType t);
std::size_t size_bytes(DType t);
bool is_floating(DType t);

} // namespace kattn
