#include "kokkosattn/dtype.hpp"

namespace kattn {

std::string_view to_string(DType t) {
  switch (t) {
  case DType::f64:
    return "f64";
  case DType::f32:
    return "f32";
  case DType::f16:
    return "f16";
  case DType::bf16:
    return "bf16";
  case DType::f8_e4m3:
    return "f8_e4m3";
  case DType::f8_e5m2:
    return "f8_e5m2";
  case DType::i32:
    return "i32";
  case DType::boolean:
    return "bool";
  }
  return "unknown";
}

std::size_t size_bytes(DType t) {
  switch (t) {
  case DType::f64:
    return 8;
  case DType::f32:
  case DType::i32:
    return 4;
  case DType::f16:
  case DType::bf16:
    return 2;
  case DType::f8_e4m3:
  case DType::f8_e5m2:
  case DType::boolean:
    return 1;
  }
  return 0;
}

bool is_floating(DType t) {
  return t == DType::f64 || t == DType::f32 || t == DType::f16 || t == DType::bf16 ||
         t == DType::f8_e4m3 || t == DType::f8_e5m2;
}

bool is_fp8(DType t) {
  return t == DType::f8_e4m3 || t == DType::f8_e5m2;
}

} // namespace kattn
