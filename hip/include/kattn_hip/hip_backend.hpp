// The `hip` registry entry (Backend::hip): our HIP kernels behind kokkos-attention's dispatch.
// Framework-free; this header names no HIP type. Registered only in builds with
// KokkosAttn_ENABLE_HIP_BACKEND (they link libamdhip64; docs/portability.md).
#pragma once

#include <memory>

#include "kokkosattn/registry.hpp"

namespace kattn::hip_kernels {

// Serves forward problems with ExecContext::device == hip and every tensor in hip_device memory,
// within supports() of kattn_hip/flash_fwd.hpp, on a gfx90a/gfx942 device. Backward: refused.
std::unique_ptr<BackendImpl> make_hip_backend();

} // namespace kattn::hip_kernels
