// Which portable kernels run a problem: the one place both the launch (portable_run_impl.hpp)
// and supports()/explain() (portable_backend.cpp) ask.
//
// GPU execution spaces run portable_device_forward_kernel.hpp (per-thread register tiles) up to
// value head dim device_forward_max_hv, and portable_device_backward_kernel.hpp for backward
// problems it serves (head dims up to device_backward_max_hd, fp32 accumulation, no score
// extras, dropout or dbias); host spaces, and the rest, the team-scratch tiles of
// portable_forward_kernel.hpp / portable_backward_kernel.hpp. KOKKOSATTN_PORTABLE_KERNEL=
// tiles|device forces one (A/B runs, debugging), like KOKKOSATTN_CUDA_KERNEL for the cuda
// backend: a forced kernel that cannot run the problem refuses it with its reason instead of
// falling back.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "kokkosattn/problem.hpp"

namespace kattn::portable {

// The widest value head dim the device forward's register accumulators hold.
inline constexpr std::int64_t device_forward_max_hv = 128;
// The widest head dim (query/key and value) the device backward's accumulators hold.
inline constexpr std::int64_t device_backward_max_hd = 128;

struct ForwardChoice {
  bool device = false; // the device kernel (else the team-scratch tiles)
  int hv = 0;          // the device kernel's value head dim instantiation (64 or 128)
  std::string kernel;  // explain()'s name
  std::string why_not; // non-empty: the forced kernel cannot run this problem
};

// The forced kernel ("" when none), or why the variable's value is not one.
inline std::string_view forced_kernel(std::string& why_not) {
  const char* env = std::getenv("KOKKOSATTN_PORTABLE_KERNEL");
  const std::string_view forced = env ? env : "";
  if (!forced.empty() && forced != "tiles" && forced != "device")
    why_not = "portable: KOKKOSATTN_PORTABLE_KERNEL must be device or tiles, got '" +
              std::string(forced) + "'";
  return forced;
}

inline ForwardChoice choose_forward(bool device_space, const Dims& d) {
  ForwardChoice c;
  const std::string_view forced = forced_kernel(c.why_not);
  const bool fits = d.Hv <= device_forward_max_hv;
  if (forced == "device") {
    if (!device_space)
      c.why_not = "portable: KOKKOSATTN_PORTABLE_KERNEL=device, but the device kernel runs on GPU "
                  "execution spaces only";
    else if (!fits)
      c.why_not = "portable: KOKKOSATTN_PORTABLE_KERNEL=device takes value head dims up to " +
                  std::to_string(device_forward_max_hv) + ", got Hv=" + std::to_string(d.Hv);
  }
  c.device = c.why_not.empty() && device_space && fits && forced != "tiles";
  c.hv = d.Hv <= 64 ? 64 : 128;
  if (c.device)
    c.kernel = "portable_device_fwd_hv" + std::to_string(c.hv);
  else
    c.kernel = device_space ? "portable_tiles_fwd" : "portable_host_tiles_fwd";
  return c;
}

struct BackwardChoice {
  bool device = false; // the device kernels (else the team-scratch tiles)
  int hd = 0;          // their head dim instantiation (64 or 128)
  std::string kernel;  // explain()'s name
  std::string why_not; // non-empty: the forced kernel cannot run this problem
};

// plain: no score extras (softcap, bias, boolean mask, ALiBi), no dropout and no dbias;
// fp32_acc: the dtype accumulates in fp32 (all but f64).
inline BackwardChoice choose_backward(bool device_space, const Dims& d, bool plain, bool fp32_acc) {
  BackwardChoice c;
  const std::string_view forced = forced_kernel(c.why_not);
  std::string unfit; // why the device kernels cannot run it
  if (!device_space)
    unfit = "the device backward runs on GPU execution spaces only";
  else if (d.H > device_backward_max_hd || d.Hv > device_backward_max_hd)
    unfit = "the device backward takes head dims up to " + std::to_string(device_backward_max_hd) +
            ", got H=" + std::to_string(d.H) + " Hv=" + std::to_string(d.Hv);
  else if (!fp32_acc)
    unfit = "the device backward accumulates in fp32 (f64 runs the tiles backward)";
  else if (!plain)
    unfit = "the device backward serves no softcap, bias, boolean mask, ALiBi, dropout or dbias";
  if (forced == "device" && !unfit.empty() && c.why_not.empty())
    c.why_not = "portable: KOKKOSATTN_PORTABLE_KERNEL=device, but " + unfit;
  c.device = c.why_not.empty() && unfit.empty() && forced != "tiles";
  c.hd = d.H <= 64 && d.Hv <= 64 ? 64 : 128;
  if (c.device)
    c.kernel = "portable_device_bwd_hd" + std::to_string(c.hd);
  else
    c.kernel = device_space ? "portable_tiles_bwd" : "portable_host_tiles_bwd";
  return c;
}

} // namespace kattn::portable
