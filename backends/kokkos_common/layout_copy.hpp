// Copying a strided tensor into another of the same dtype and extents but other strides (a
// LayoutLeft View into row-major scratch and back), on the context's execution space instance,
// enqueued without a fence. What the front end's layout copies are made of.
#pragma once

#include "kokkosattn/exec_context.hpp"
#include "kokkosattn/tensor.hpp"

namespace kattn::kokkos_common {

// dst = src element by element. Both in the memory of the context's space, same dtype, rank and
// extents, any strides (non-overlapping dst). Throws InvalidArgument when they do not match.
void copy_tensor(const ExecContext& x, const Tensor& src, const Tensor& dst);

} // namespace kattn::kokkos_common
