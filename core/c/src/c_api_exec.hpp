// Where a C API call runs: the execution space for the problem's memory, on the caller's stream.
#pragma once

#include <Kokkos_Core.hpp>

#include <map>
#include <mutex>
#include <string>

#include "kokkosattn.h"
#include "kokkosattn/errors.hpp"
#include "kokkosattn/exec_context.hpp"
#include "kokkosattn/problem.hpp"

namespace kattn::c_api {

// Kokkos must be initialised (kattn_initialize, or the host program's own Kokkos::initialize).
void require_kokkos();

// The execution space instance on a caller's stream, made once per stream and kept until
// Kokkos::finalize: making one costs ~40 us on an H200, four times a whole dispatch at the
// codelab shape (benchmarks/results/h200-2026-12-02-c-overhead.md). It wraps the handle's value,
// so a stream the caller destroyed and one created later at the same address share it.
template <class Space, class Stream>
Space instance_on(Stream stream) {
  static std::mutex mutex;
  static std::map<Stream, Space>* cache = nullptr;
  const std::lock_guard<std::mutex> lock(mutex);
  if (cache == nullptr) {
    cache = new std::map<Stream, Space>();
    Kokkos::push_finalize_hook([] {
      const std::lock_guard<std::mutex> l(mutex);
      delete cache;
      cache = nullptr;
    });
  }
  auto it = cache->find(stream);
  if (it == cache->end())
    it = cache->emplace(stream, Space(stream)).first;
  return it->second;
}

// Calls on_space(exec) with the Kokkos execution space instance for memory `m` on `stream`
// (host memory: the default host space; CUDA/HIP memory: an instance on that stream, the
// default instance for NULL), or on_raw(context) where this Kokkos has no such device space and
// the library's GPU backends take raw pointers.
template <class OnSpace, class OnRaw>
void on_memory(MemorySpace m, void* stream, const OnSpace& on_space, const OnRaw& on_raw) {
  require_kokkos();
  switch (m) {
  case MemorySpace::host:
    return on_space(Kokkos::DefaultHostExecutionSpace{});
  case MemorySpace::cuda_device:
#ifdef KOKKOS_ENABLE_CUDA
    if (stream != nullptr)
      return on_space(instance_on<Kokkos::Cuda>(static_cast<cudaStream_t>(stream)));
    return on_space(Kokkos::Cuda{});
#else
    return on_raw(ExecContext{Device::cuda, stream, {}, nullptr});
#endif
  case MemorySpace::hip_device:
#ifdef KOKKOS_ENABLE_HIP
    if (stream != nullptr)
      return on_space(instance_on<Kokkos::HIP>(static_cast<hipStream_t>(stream)));
    return on_space(Kokkos::HIP{});
#else
    return on_raw(ExecContext{Device::hip, stream, {}, nullptr});
#endif
  }
  throw InvalidArgument("memory space of q: not one of KATTN_MEMORY_HOST/CUDA/HIP");
}

} // namespace kattn::c_api
