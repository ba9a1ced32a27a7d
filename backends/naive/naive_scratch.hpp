// The naive forward's working memory: the score matrix and the packed heads, leased per call.
// One buffer per memory space is kept between calls (up to kept_scratch_bytes), because the
// allocation itself is what a small problem costs on a GPU: cudaMalloc + cudaFree synchronise the
// device and took longer than the whole forward at B1 T=S=256 (a Kokkos without
// CUDA_MALLOC_ASYNC, as Spack builds it by default). A lease holds the space's lock for its life,
// so concurrent naive calls in one process take turns; its destructor waits for the lessee's
// execution space instance before the next one may write the buffer. Needs above the kept size
// get a buffer of their own, freed when the lease ends.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <exception>
#include <mutex>
#include <string>

#include "kokkosattn/errors.hpp"

namespace kattn::naive::detail {

// The largest buffer kept between calls, per memory space.
inline constexpr std::size_t kept_scratch_bytes = std::size_t{256} << 20;

// Bytes for `count` elements of `elem` bytes, rounded up to 256 (every part of the buffer starts
// where cuBLAS and vector loads want it).
constexpr std::size_t aligned_bytes(std::size_t count, std::size_t elem) {
  return (count * elem + 255) / 256 * 256;
}

template <class Mem>
using ScratchBytes = Kokkos::View<unsigned char*, Mem>;

template <class Mem>
struct KeptScratch {
  std::mutex mutex;
  ScratchBytes<Mem> buffer;
  bool hooked = false; // the finalize hook that releases `buffer` is registered
};

// The kept buffer of Mem. Released at Kokkos::finalize (a View must not outlive Kokkos).
template <class Mem>
KeptScratch<Mem>& kept_scratch() {
  static KeptScratch<Mem> kept;
  return kept;
}

template <class Mem>
ScratchBytes<Mem> allocate_scratch(std::size_t bytes) {
  try {
    return ScratchBytes<Mem>(
        Kokkos::view_alloc(Kokkos::WithoutInitializing, "KokkosAttn::naive::scratch"), bytes);
  } catch (const std::exception& e) {
    throw BackendFailure("naive: could not allocate " + std::to_string(bytes) +
                         " bytes of working memory (score matrix and packed heads) in " +
                         Mem::name() + ": " + e.what());
  }
}

template <class ExecSpace>
class ScratchLease {
public:
  using Mem = typename ExecSpace::memory_space;

  ScratchLease(const ExecSpace& exec, std::size_t bytes) : exec_(exec) {
    KeptScratch<Mem>& kept = kept_scratch<Mem>();
    lock_ = std::unique_lock<std::mutex>(kept.mutex);
    if (bytes > kept_scratch_bytes) {
      own_ = allocate_scratch<Mem>(bytes);
      base_ = own_.data();
      return;
    }
    if (!kept.hooked) {
      Kokkos::push_finalize_hook([] {
        KeptScratch<Mem>& k = kept_scratch<Mem>();
        std::lock_guard<std::mutex> guard(k.mutex);
        k.buffer = ScratchBytes<Mem>();
        k.hooked = false; // a later Kokkos::initialize registers it again
      });
      kept.hooked = true;
    }
    if (kept.buffer.extent(0) < bytes) {
      kept.buffer = ScratchBytes<Mem>(); // free first: the peak is the new size alone
      kept.buffer = allocate_scratch<Mem>(bytes);
    }
    base_ = kept.buffer.data();
  }

  ScratchLease(const ScratchLease&) = delete;
  ScratchLease& operator=(const ScratchLease&) = delete;

  // The kernels that use the buffer were enqueued on exec_: they finish before it is handed on.
  ~ScratchLease() {
    try {
      exec_.fence("KokkosAttn::naive: release the working memory");
    } catch (...) { // a failed fence is reported by the caller's next Kokkos call
    }
  }

  template <class T>
  T* at(std::size_t offset) const {
    return reinterpret_cast<T*>(base_ + offset);
  }

private:
  ExecSpace exec_;
  std::unique_lock<std::mutex> lock_;
  ScratchBytes<Mem> own_;
  unsigned char* base_ = nullptr;
};

} // namespace kattn::naive::detail
