// Reading and writing one element of a kattn dtype as float: f32, f16, bf16 (kattn's exact
// conversions) and the FP8 formats (E4M3 with no infinities, max 448; E5M2, the top byte of an
// IEEE half), round to nearest even, saturating E4M3.
#pragma once

#include <kokkosattn/dtype.hpp>

namespace codelab {

float load_element(const void* data, kattn::DType dtype, long index);
void store_element(void* data, kattn::DType dtype, long index, float x);
// Whether load/store know the dtype.
bool convertible(kattn::DType dtype);

} // namespace codelab
