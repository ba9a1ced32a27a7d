// The naive backend as a registry entry: what it supports, and which Kokkos execution space
// instantiation runs a problem.
#include <Kokkos_Core.hpp>

#include <string>

#include "kokkosattn/errors.hpp"
#include "naive/naive.hpp"
#include "naive/naive_forward.hpp"

namespace kattn::naive {
namespace {

// Names of the execution spaces this build instantiated the naive forward for.
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

// The memory a Kokkos execution space (by name) reads natively, if this build has that space.
bool memory_of_space(const std::string& space, MemorySpace& memory) {
#ifdef KOKKOS_ENABLE_SERIAL
  if (space == Kokkos::Serial::name()) {
    memory = MemorySpace::host;
    return true;
  }
#endif
#ifdef KOKKOS_ENABLE_OPENMP
  if (space == Kokkos::OpenMP::name()) {
    memory = MemorySpace::host;
    return true;
  }
#endif
#ifdef KOKKOS_ENABLE_CUDA
  if (space == Kokkos::Cuda::name()) {
    memory = MemorySpace::cuda_device;
    return true;
  }
#endif
#ifdef KOKKOS_ENABLE_HIP
  if (space == Kokkos::HIP::name()) {
    memory = MemorySpace::hip_device;
    return true;
  }
#endif
  (void)memory;
  return false;
}

// Where a problem runs: the context's Kokkos space, or for raw-memory calls (no Kokkos space
// named) the default space of the context's device.
struct Target {
  std::string space;
  MemorySpace memory = MemorySpace::host;
  std::string why_not; // empty when usable
};

Target resolve(const ExecContext& x) {
  Target t;
  if (!x.kokkos_space.empty()) {
    t.space = x.kokkos_space;
    if (!memory_of_space(t.space, t.memory))
      t.why_not = "naive: Kokkos execution space " + t.space +
                  " is not enabled in this build (enabled: " + enabled_spaces() + ")";
    return t;
  }
  switch (x.device) {
  case Device::cpu:
    t.space = Kokkos::DefaultHostExecutionSpace::name();
    t.memory = MemorySpace::host;
    return t;
  case Device::cuda:
#ifdef KOKKOS_ENABLE_CUDA
    t.space = Kokkos::Cuda::name();
    t.memory = MemorySpace::cuda_device;
#else
    t.why_not = "naive: the context is a CUDA device, but this build's Kokkos has no Cuda "
                "execution space (enabled: " +
                enabled_spaces() + ")";
#endif
    return t;
  case Device::hip:
#ifdef KOKKOS_ENABLE_HIP
    t.space = Kokkos::HIP::name();
    t.memory = MemorySpace::hip_device;
#else
    t.why_not = "naive: the context is a HIP device, but this build's Kokkos has no HIP "
                "execution space (enabled: " +
                enabled_spaces() + ")";
#endif
    return t;
  }
  t.why_not = "naive: unknown device in the execution context";
  return t;
}

Support check_memory(const Tensor& t, const char* name, const Target& target) {
  if (!t.defined() || t.space == target.memory)
    return Support::yes();
  return Support::no("naive: " + std::string(name) + " is in " + std::string(to_string(t.space)) +
                     " memory, which the " + target.space +
                     " execution space does not read (it "
                     "reads " +
                     std::string(to_string(target.memory)) + " memory)");
}

class NaiveBackend final : public BackendImpl {
public:
  Backend id() const override { return Backend::naive; }

  std::string description() const override {
    return "Kokkos " + std::to_string(KOKKOS_VERSION_MAJOR) + "." +
           std::to_string(KOKKOS_VERSION_MINOR) + "." + std::to_string(KOKKOS_VERSION_PATCH) +
           ", spaces: " + enabled_spaces() + "; materialises [B, N, T, S] scores";
  }

  Support supports(const ForwardProblem& p, const Dims& d, const ExecContext& x) const override {
    if (!Kokkos::is_initialized())
      return Support::no("naive: Kokkos is not initialized (create a Kokkos::ScopeGuard or call "
                         "Kokkos::initialize first)");
    if (d.packed)
      return Support::no("naive: packed varlen (cu_seqlens) is not implemented; use padded "
                         "batches (seqlens_q/seqlens_k), reference or portable");
    if (p.options.dropout_p > 0.0)
      return Support::no("naive: dropout is not implemented; use reference or portable");
    const DType t = p.q.dtype;
    if (t != DType::f64 && t != DType::f32 && t != DType::f16 && t != DType::bf16)
      return Support::no("naive: dtype " + std::string(to_string(t)) +
                         " is not supported (f64, f32, f16, bf16)");
    const Target target = resolve(x);
    if (!target.why_not.empty())
      return Support::no(target.why_not);
    const struct {
      const Tensor& t;
      const char* name;
    } tensors[] = {{p.q, "q"},
                   {p.k, "k"},
                   {p.v, "v"},
                   {p.out, "out"},
                   {p.extras.bias, "bias"},
                   {p.extras.mask, "mask"},
                   {p.extras.alibi_slopes, "alibi_slopes"},
                   {p.extras.seqlens_q, "seqlens_q"},
                   {p.extras.seqlens_k, "seqlens_k"},
                   {p.extras.lse, "lse"}};
    for (const auto& e : tensors) {
      const Support s = check_memory(e.t, e.name, target);
      if (!s.ok)
        return s;
    }
    return Support::yes();
  }

  Support supports(const BackwardProblem&, const Dims&, const ExecContext&) const override {
    return Support::no("naive: backward is not implemented; use reference or portable");
  }

  void forward(const ForwardProblem& p, const Dims& d, const ExecContext& x) const override {
    // Direct callers skip dispatch's support check; nothing is written unless it passes.
    const Support s = supports(p, d, x);
    if (!s.ok)
      throw Unsupported(s.reason);
    const Target target = resolve(x);
#ifdef KOKKOS_ENABLE_SERIAL
    if (target.space == Kokkos::Serial::name())
      return run<Kokkos::Serial>(p, d, x);
#endif
#ifdef KOKKOS_ENABLE_OPENMP
    if (target.space == Kokkos::OpenMP::name())
      return run<Kokkos::OpenMP>(p, d, x);
#endif
#ifdef KOKKOS_ENABLE_CUDA
    if (target.space == Kokkos::Cuda::name()) {
      if (x.kokkos_instance == nullptr && x.stream != nullptr)
        return forward_on(Kokkos::Cuda(static_cast<cudaStream_t>(x.stream)), p, d);
      return run<Kokkos::Cuda>(p, d, x);
    }
#endif
#ifdef KOKKOS_ENABLE_HIP
    if (target.space == Kokkos::HIP::name()) {
      if (x.kokkos_instance == nullptr && x.stream != nullptr)
        return forward_on(Kokkos::HIP(static_cast<hipStream_t>(x.stream)), p, d);
      return run<Kokkos::HIP>(p, d, x);
    }
#endif
    throw Unsupported("naive: no instantiation for execution space " + target.space +
                      " (enabled: " + enabled_spaces() + ")");
  }

  void backward(const BackwardProblem&, const Dims&, const ExecContext&) const override {
    throw Unsupported("naive: backward is not implemented; use reference or portable");
  }

private:
  // On the caller's instance when the context carries one (the Kokkos front end), otherwise on
  // the space's default instance.
  template <class ExecSpace>
  static void run(const ForwardProblem& p, const Dims& d, const ExecContext& x) {
    if (x.kokkos_instance != nullptr)
      forward_on(*static_cast<const ExecSpace*>(x.kokkos_instance), p, d);
    else
      forward_on(ExecSpace{}, p, d);
  }
};

} // namespace

std::unique_ptr<BackendImpl> make_naive_backend() {
  return std::make_unique<NaiveBackend>();
}

} // namespace kattn::naive
