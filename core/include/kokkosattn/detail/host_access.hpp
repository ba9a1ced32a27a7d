// Element access to host-resident Tensors of any dtype, for the reference backend and tests.
#pragma once

#include <cstdint>

#include "kokkosattn/tensor.hpp"

namespace kattn {

// Element offset of a multi-index (rank entries used).
inline std::int64_t element_offset(const Tensor& t, std::int64_t i0, std::int64_t i1 = 0,
                                   std::int64_t i2 = 0, std::int64_t i3 = 0) {
  return i0 * t.stride[0] + i1 * t.stride[1] + i2 * t.stride[2] + i3 * t.stride[3];
}

// Reads element `offset` converted to double; the tensor must be in host memory.
double load_double(const Tensor& t, std::int64_t offset);
// Writes `value` rounded to the tensor's dtype (round-to-nearest-even).
void store_double(const Tensor& t, std::int64_t offset, double value);
// Integer and boolean tensors.
std::int64_t load_int(const Tensor& t, std::int64_t offset);

} // namespace kattn
