// What the Kokkos backends (naive, portable) share about where a problem runs: which execution
// space serves an ExecContext, whether every tensor lives in memory that space reads, and
// calling a backend's kernel template on the right instance.
#pragma once

#include <Kokkos_Core.hpp>

#include <KokkosAttn_StreamInstance.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "kokkosattn/errors.hpp"
#include "kokkosattn/exec_context.hpp"
#include "kokkosattn/problem.hpp"
#include "kokkosattn/registry.hpp"

namespace kattn::kokkos_common {

// The Kokkos space (by name) that serves a context: the context's own when it names one (the
// Kokkos front end), else the default space of its device (raw-memory calls).
struct Target {
  std::string space;
  MemorySpace memory = MemorySpace::host;
  std::string why_not; // empty when usable
};

// "OpenMP, Cuda": the execution spaces this Kokkos build enables.
std::string enabled_spaces();
// "Kokkos 5.2.2, spaces: OpenMP"
std::string kokkos_description();
Target resolve(const ExecContext& x, std::string_view backend);

struct NamedTensor {
  const Tensor* tensor;
  const char* name;
};
std::vector<NamedTensor> named_tensors(const ForwardProblem& p);
std::vector<NamedTensor> named_tensors(const BackwardProblem& p);

// Kokkos initialised, a supported dtype, a usable space, and every given tensor in its memory.
Support check_runnable(std::string_view backend, DType dtype,
                       const std::vector<NamedTensor>& tensors, const ExecContext& x);

// Calls f(instance): the caller's instance when the context carries one, the kept instance on
// the context's stream for raw GPU calls (KokkosAttn_StreamInstance.hpp: one made per call cost
// ~100 us in kokkosattn_bench_gpu's rows), else the space's default instance.
template <class F>
void on_target(std::string_view backend, const ExecContext& x, const F& f) {
  const Target target = resolve(x, backend);
  [[maybe_unused]] const auto on = [&](auto tag) {
    using ExecSpace = decltype(tag);
    if (x.kokkos_instance != nullptr)
      f(*static_cast<const ExecSpace*>(x.kokkos_instance));
    else
      f(ExecSpace{});
  };
#ifdef KOKKOS_ENABLE_SERIAL
  if (target.space == Kokkos::Serial::name())
    return on(Kokkos::Serial{});
#endif
#ifdef KOKKOS_ENABLE_OPENMP
  if (target.space == Kokkos::OpenMP::name())
    return on(Kokkos::OpenMP{});
#endif
#ifdef KOKKOS_ENABLE_CUDA
  if (target.space == Kokkos::Cuda::name()) {
    if (x.kokkos_instance == nullptr && x.stream != nullptr)
      return f(
          KokkosAttn::Impl::instance_on_stream<Kokkos::Cuda>(static_cast<cudaStream_t>(x.stream)));
    return on(Kokkos::Cuda{});
  }
#endif
#ifdef KOKKOS_ENABLE_HIP
  if (target.space == Kokkos::HIP::name()) {
    if (x.kokkos_instance == nullptr && x.stream != nullptr)
      return f(
          KokkosAttn::Impl::instance_on_stream<Kokkos::HIP>(static_cast<hipStream_t>(x.stream)));
    return on(Kokkos::HIP{});
  }
#endif
  throw Unsupported(std::string(backend) + ": no instantiation for execution space " +
                    target.space + " (enabled: " + enabled_spaces() + ")");
}

} // namespace kattn::kokkos_common
