// The backends a problem can be routed to, by name.
#pragma once

#include <optional>
#include <string_view>

namespace kattn {

enum class Backend {
  automatic, // "auto": the preferred backend whose support check passes
  reference, // plain C++, double accumulation: the ground truth
  naive,     // unfused Kokkos attention (materialises the scores): the baseline
  portable,  // tiled online-softmax Kokkos attention
  cudnn,     // cuDNN fused attention through cudnn-frontend
  cuda,      // our hand-written CUDA flash kernels
  hip,       // our HIP kernels for gfx90a / gfx942
};

// The GPU kernel backends: vendor libraries and our own kernels, tens of times faster on a GPU
// than the portable Kokkos kernels. `auto` copies tensors to reach one (kattn::select).
constexpr bool is_device_kernel(Backend b) {
  return b == Backend::cudnn || b == Backend::cuda || b == Backend::hip;
}

std::string_view to_string(Backend b);
// Accepts the names to_string prints ("auto", "reference", ...); nullopt for anything else.
std::optional<Backend> parse_backend(std::string_view name);

} // namespace kattn
