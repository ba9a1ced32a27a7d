// Which portable forward kernel runs a problem: the one place both the launch
// (portable_run_impl.hpp) and supports()/explain() (portable_backend.cpp) ask.
//
// GPU execution spaces run portable_device_forward_kernel.hpp (per-thread register tiles) up to
// value head dim device_forward_max_hv; host spaces, and wider heads, the team-scratch tiles of
// portable_forward_kernel.hpp. KOKKOSATTN_PORTABLE_KERNEL=tiles|device forces one (A/B runs,
// debugging), like KOKKOSATTN_CUDA_KERNEL for the cuda backend: a forced kernel that cannot run
// the problem refuses it with its reason instead of falling back.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "kokkosattn/problem.hpp"

namespace kattn::portable {

// The widest value head dim the device kernel's register accumulators hold.
inline constexpr std::int64_t device_forward_max_hv = 128;

struct ForwardChoice {
  bool device = false; // the device kernel (else the team-scratch tiles)
  int hv = 0;          // the device kernel's value head dim instantiation (64 or 128)
  std::string kernel;  // explain()'s name
  std::string why_not; // non-empty: the forced kernel cannot run this problem
};

inline ForwardChoice choose_forward(bool device_space, const Dims& d) {
  const char* env = std::getenv("KOKKOSATTN_PORTABLE_KERNEL");
  const std::string_view forced = env ? env : "";
  ForwardChoice c;
  const bool fits = d.Hv <= device_forward_max_hv;
  if (forced == "device") {
    if (!device_space)
      c.why_not = "portable: KOKKOSATTN_PORTABLE_KERNEL=device, but the device kernel runs on GPU "
                  "execution spaces only";
    else if (!fits)
      c.why_not = "portable: KOKKOSATTN_PORTABLE_KERNEL=device takes value head dims up to " +
                  std::to_string(device_forward_max_hv) + ", got Hv=" + std::to_string(d.Hv);
  } else if (!forced.empty() && forced != "tiles") {
    c.why_not = "portable: KOKKOSATTN_PORTABLE_KERNEL must be device or tiles, got '" +
                std::string(forced) + "'";
  }
  c.device = c.why_not.empty() && device_space && fits && forced != "tiles";
  c.hv = d.Hv <= 64 ? 64 : 128;
  if (c.device)
    c.kernel = "portable_device_fwd_hv" + std::to_string(c.hv);
  else
    c.kernel = device_space ? "portable_tiles_fwd" : "portable_host_tiles_fwd";
  return c;
}

} // namespace kattn::portable
