#include "kokkosattn/detail/host_access.hpp"

#include <cstring>

#include "kokkosattn/errors.hpp"
#include "kokkosattn/half.hpp"

namespace kattn {

namespace {
template <class T>
T read_raw(const Tensor& t, std::int64_t offset) {
  T v;
  std::memcpy(&v, static_cast<const char*>(t.data) + offset * static_cast<std::int64_t>(sizeof(T)),
              sizeof(T));
  return v;
}
template <class T>
void write_raw(const Tensor& t, std::int64_t offset, T v) {
  std::memcpy(static_cast<char*>(t.data) + offset * static_cast<std::int64_t>(sizeof(T)), &v,
              sizeof(T));
}
} // namespace

double load_double(const Tensor& t, std::int64_t offset) {
  switch (t.dtype) {
  case DType::f64:
    return read_raw<double>(t, offset);
  case DType::f32:
    return read_raw<float>(t, offset);
  case DType::f16:
    return f16_to_float(read_raw<std::uint16_t>(t, offset));
  case DType::bf16:
    return bf16_to_float(read_raw<std::uint16_t>(t, offset));
  case DType::i32:
    return read_raw<std::int32_t>(t, offset);
  case DType::boolean:
    return read_raw<std::uint8_t>(t, offset) != 0 ? 1.0 : 0.0;
  default:
    break;
  }
  throw Unsupported("load_double: dtype " + std::string(to_string(t.dtype)) +
                    " has no host conversion");
}

void store_double(const Tensor& t, std::int64_t offset, double value) {
  switch (t.dtype) {
  case DType::f64:
    write_raw<double>(t, offset, value);
    return;
  case DType::f32:
    write_raw<float>(t, offset, static_cast<float>(value));
    return;
  // double -> float -> 16 bit can double-round; the reference accepts that last-ulp effect.
  case DType::f16:
    write_raw<std::uint16_t>(t, offset, float_to_f16(static_cast<float>(value)));
    return;
  case DType::bf16:
    write_raw<std::uint16_t>(t, offset, float_to_bf16(static_cast<float>(value)));
    return;
  default:
    break;
  }
  throw Unsupported("store_double: dtype " + std::string(to_string(t.dtype)) +
                    " is not a floating output type");
}

std::int64_t load_int(const Tensor& t, std::int64_t offset) {
  switch (t.dtype) {
  case DType::i32:
    return read_raw<std::int32_t>(t, offset);
  case DType::boolean:
    return read_raw<std::uint8_t>(t, offset) != 0 ? 1 : 0;
  default:
    break;
  }
  throw InvalidArgument("load_int: expected an i32 or bool tensor, got " +
                        std::string(to_string(t.dtype)));
}

} // namespace kattn
