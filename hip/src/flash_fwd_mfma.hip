// The MFMA build of the forward kernel (hipcc, HIP_PLATFORM=amd, --offload-arch gfx90a/gfx942):
// wavefront 64, v_mfma_f32_16x16x16{bf16_1k,f16}. Instantiates bf16/f16 x head dim 64/128.
#include <stdexcept>
#include <string>

#include "fwd_launch.hpp"
#include "kattn_hip/flash_fwd.hpp"

namespace kattn::hip_kernels {

void flash_fwd(const FlashFwdParams& p, ihipStream_t* stream) {
  if (const FlashSupport s = supports(p); !s.ok)
    throw std::invalid_argument("kattn::hip_kernels::flash_fwd: " + s.reason);
  detail::launch_fwd<64, true>(p, stream, "kattn::hip_kernels::flash_fwd (MFMA) launch");
}

namespace {

// The architecture part of gcnArchName ("gfx90a:sramecc+:xnack-" -> "gfx90a").
std::string arch_of(const hipDeviceProp_t& prop) {
  const std::string name = prop.gcnArchName;
  return name.substr(0, name.find(':'));
}

} // namespace

std::string device_unsupported_reason() {
  int count = 0, device = 0;
  const hipError_t e = hipGetDeviceCount(&count);
  if (e != hipSuccess || count == 0)
    return std::string("no HIP device (hipGetDeviceCount: ") +
           (e == hipSuccess ? "0 devices" : hipGetErrorName(e)) + ")";
  hipDeviceProp_t prop{};
  if (hipGetDevice(&device) != hipSuccess || hipGetDeviceProperties(&prop, device) != hipSuccess)
    return "no HIP device (hipGetDeviceProperties failed)";
  const std::string arch = arch_of(prop);
  if (arch != "gfx90a" && arch != "gfx942")
    return "device " + arch + ": the hip kernels are built for gfx90a and gfx942 only";
  return {};
}

std::string device_description() {
  int runtime = 0;
  std::string s = "HIP runtime ";
  s += hipRuntimeGetVersion(&runtime) == hipSuccess ? std::to_string(runtime) : "unavailable";
  const std::string why = device_unsupported_reason();
  if (!why.empty())
    return s + "; " + why;
  int device = 0;
  hipDeviceProp_t prop{};
  if (hipGetDevice(&device) == hipSuccess && hipGetDeviceProperties(&prop, device) == hipSuccess)
    s += ", " + arch_of(prop) + " (" + prop.name + ")";
  return s;
}

} // namespace kattn::hip_kernels
