#include "kokkos_common/kokkos_target.hpp"

namespace kattn::kokkos_common {
namespace {

// The memory a Kokkos execution space (by name) reads natively, if this build has that space.
bool memory_of_space(const std::string& space, MemorySpace& memory) {
#ifdef KOKKOS_ENABLE_SERIAL
  if (space == Kokkos::Serial::name())
    return memory = MemorySpace::host, true;
#endif
#ifdef KOKKOS_ENABLE_OPENMP
  if (space == Kokkos::OpenMP::name())
    return memory = MemorySpace::host, true;
#endif
#ifdef KOKKOS_ENABLE_CUDA
  if (space == Kokkos::Cuda::name())
    return memory = MemorySpace::cuda_device, true;
#endif
#ifdef KOKKOS_ENABLE_HIP
  if (space == Kokkos::HIP::name())
    return memory = MemorySpace::hip_device, true;
#endif
  (void)memory;
  return false;
}

// The default space of a GPU device kind, when this build has it.
Target gpu_target(std::string_view backend, const char* device, const char* space,
                  MemorySpace memory, bool enabled) {
  Target t;
  if (enabled) {
    t.space = space;
    t.memory = memory;
  } else {
    t.why_not = std::string(backend) + ": the context is a " + device +
                " device, but this build's Kokkos has no " + space +
                " execution space (enabled: " + enabled_spaces() + ")";
  }
  return t;
}

} // namespace

std::string enabled_spaces() {
  std::string s;
  const auto add = [&s](const char* name) { s += (s.empty() ? "" : ", ") + std::string(name); };
#ifdef KOKKOS_ENABLE_SERIAL
  add(Kokkos::Serial::name());
#endif
#ifdef KOKKOS_ENABLE_OPENMP
  add(Kokkos::OpenMP::name());
#endif
#ifdef KOKKOS_ENABLE_CUDA
  add(Kokkos::Cuda::name());
#endif
#ifdef KOKKOS_ENABLE_HIP
  add(Kokkos::HIP::name());
#endif
  return s;
}

std::string kokkos_description() {
  return "Kokkos " + std::to_string(KOKKOS_VERSION_MAJOR) + "." +
         std::to_string(KOKKOS_VERSION_MINOR) + "." + std::to_string(KOKKOS_VERSION_PATCH) +
         ", spaces: " + enabled_spaces();
}

Target resolve(const ExecContext& x, std::string_view backend) {
  if (!x.kokkos_space.empty()) {
    Target t;
    t.space = x.kokkos_space;
    if (!memory_of_space(t.space, t.memory))
      t.why_not = std::string(backend) + ": Kokkos execution space " + t.space +
                  " is not enabled in this build (enabled: " + enabled_spaces() + ")";
    return t;
  }
  switch (x.device) {
  case Device::cpu: {
    Target t;
    t.space = Kokkos::DefaultHostExecutionSpace::name();
    return t;
  }
  case Device::cuda:
#ifdef KOKKOS_ENABLE_CUDA
    return gpu_target(backend, "CUDA", "Cuda", MemorySpace::cuda_device, true);
#else
    return gpu_target(backend, "CUDA", "Cuda", MemorySpace::cuda_device, false);
#endif
  case Device::hip:
#ifdef KOKKOS_ENABLE_HIP
    return gpu_target(backend, "HIP", "HIP", MemorySpace::hip_device, true);
#else
    return gpu_target(backend, "HIP", "HIP", MemorySpace::hip_device, false);
#endif
  }
  Target t;
  t.why_not = std::string(backend) + ": unknown device in the execution context";
  return t;
}

std::vector<NamedTensor> named_tensors(const ForwardProblem& p) {
  const Extras& e = p.extras;
  return {{&p.q, "q"},
          {&p.k, "k"},
          {&p.v, "v"},
          {&p.out, "out"},
          {&e.bias, "bias"},
          {&e.mask, "mask"},
          {&e.alibi_slopes, "alibi_slopes"},
          {&e.sinks, "sinks"},
          {&e.seqlens_q, "seqlens_q"},
          {&e.seqlens_k, "seqlens_k"},
          {&e.cu_seqlens_q, "cu_seqlens_q"},
          {&e.cu_seqlens_k, "cu_seqlens_k"},
          {&e.page_table, "page_table"},
          {&e.lse, "lse"}};
}

std::vector<NamedTensor> named_tensors(const BackwardProblem& p) {
  std::vector<NamedTensor> all = named_tensors(p.forward);
  all.insert(all.end(), {{&p.dout, "dout"},
                         {&p.dq, "dq"},
                         {&p.dk, "dk"},
                         {&p.dv, "dv"},
                         {&p.dbias, "dbias"},
                         {&p.dsinks, "dsinks"}});
  return all;
}

Support check_runnable(std::string_view backend, DType dtype,
                       const std::vector<NamedTensor>& tensors, const ExecContext& x) {
  const std::string name(backend);
  if (!Kokkos::is_initialized())
    return Support::no(name + ": Kokkos is not initialized (create a Kokkos::ScopeGuard or call "
                              "Kokkos::initialize first)");
  if (dtype != DType::f64 && dtype != DType::f32 && dtype != DType::f16 && dtype != DType::bf16)
    return Support::no(name + ": dtype " + std::string(to_string(dtype)) +
                       " is not supported (f64, f32, f16, bf16)");
  const Target target = resolve(x, backend);
  if (!target.why_not.empty())
    return Support::no(target.why_not);
  for (const NamedTensor& n : tensors) {
    if (!n.tensor->defined() || n.tensor->space == target.memory)
      continue;
    return Support::no(name + ": " + n.name + " is in " + std::string(to_string(n.tensor->space)) +
                       " memory, which the " + target.space +
                       " execution space does not read (it reads " +
                       std::string(to_string(target.memory)) + " memory)");
  }
  return Support::yes();
}

} // namespace kattn::kokkos_common
