// The backends a problem can be routed to, by name.
#pragma once

#include <array>
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

// Preference order of `auto`: the first supporting backend wins.
inline constexpr std::array<Backend, 6> preference_order = {Backend::cuda,  Backend::cudnn,
                                                            Backend::hip,   Backend::portable,
                                                            Backend::naive, Backend::reference};

std::string_view to_string(Backend b);
// Accepts the names to_string prints ("auto", "reference", ...); nullopt for anything else.
std::optional<Backend> parse_backend(std::string_view name);

} // namespace kattn
