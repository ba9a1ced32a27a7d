// The portable backend: FlashAttention-2's tiled online-softmax attention in Kokkos, forward and
// backward (recomputation from the LSE, deterministic, no atomics), O(T) extra memory, every
// option of docs/semantics.md, on any Kokkos execution space this build enables.
#pragma once

#include <memory>

#include "kokkosattn/registry.hpp"

namespace kattn::portable {

std::unique_ptr<BackendImpl> make_portable_backend();

} // namespace kattn::portable
