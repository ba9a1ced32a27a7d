// Smoke test of a KokkosAttn_ENABLE_HIP_BACKEND build: Backend::hip is registered, links against
// libamdhip64, and on a machine without a gfx90a/gfx942 GPU refuses with a reason (never
// crashes). With such a GPU it prints that the device is served. Exit 0 = as expected.
#include <cstdio>
#include <string>

#include "kokkosattn/dispatch.hpp"
#include "kokkosattn/registry.hpp"

int main() {
  const kattn::BackendImpl* hip = kattn::default_registry().find(kattn::Backend::hip);
  if (!hip) {
    std::printf("FAIL: Backend::hip is not registered\n");
    return 1;
  }
  std::printf("hip backend: %s\n", hip->description().c_str());
  kattn::ForwardProblem p; // not validated: supports() must answer before touching tensors
  kattn::Dims d;
  kattn::ExecContext x;
  x.device = kattn::Device::hip;
  const kattn::Support s = hip->supports(p, d, x);
  std::printf("supports(empty problem on Device::hip): %s\n",
              s.ok ? "yes" : ("no: " + s.reason).c_str());
  if (s.ok) {
    std::printf("FAIL: an empty problem must be refused\n");
    return 1;
  }
  x.device = kattn::Device::cpu;
  const kattn::Support c = hip->supports(p, d, x);
  if (c.ok || c.reason.find("HIP execution context") == std::string::npos) {
    std::printf("FAIL: a CPU context must be refused with its reason, got '%s'\n",
                c.reason.c_str());
    return 1;
  }
  return 0;
}
