// The naive forward's working memory: the score matrix and the packed heads, leased per call.
// One buffer per execution space type is kept between calls (up to kept_scratch_bytes), because
// the allocation itself is what a small problem costs on a GPU: cudaMalloc + cudaFree
// synchronise the device and took longer than the whole forward at B1 T=S=256 (a Kokkos without
// CUDA_MALLOC_ASYNC, as Spack builds it by default). A lease holds the lock for its life, so
// concurrent naive calls in one process take turns. Reuse is ordered without waiting on the host:
// calls on the same execution space instance (one stream) are ordered by it, and a lease on
// another instance first waits for the last one's work. (Waiting for each call's own work at the
// end, as before, exposed every call's launch latency: the GPU idled until the host had enqueued
// the next call.) Needs above the kept size get a buffer of their own, released at the lease's
// end after its kernels.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <exception>
#include <mutex>
#include <optional>
#include <string>

#include "kokkosattn/errors.hpp"

namespace kattn::naive::detail {

// The largest buffer kept between calls, per memory space: the codelab's T = 2048 needs 545 MiB
// (its [4, 8, 2048, 2048] fp32 scores and the packed heads), which at the earlier 256 MiB was
// allocated and freed by every call.
inline constexpr std::size_t kept_scratch_bytes = std::size_t{1} << 30;

// Bytes for `count` elements of `elem` bytes, rounded up to 256 (every part of the buffer starts
// where cuBLAS and vector loads want it).
constexpr std::size_t aligned_bytes(std::size_t count, std::size_t elem) {
  return (count * elem + 255) / 256 * 256;
}

template <class Mem>
using ScratchBytes = Kokkos::View<unsigned char*, Mem>;

template <class ExecSpace>
struct KeptScratch {
  std::mutex mutex;
  ScratchBytes<typename ExecSpace::memory_space> buffer;
  std::optional<ExecSpace> last; // the instance whose kernels used `buffer` last
  bool hooked = false;           // the finalize hook that releases `buffer` is registered
};

// The kept buffer of ExecSpace. Released at Kokkos::finalize (neither a View nor an instance may
// outlive Kokkos).
template <class ExecSpace>
KeptScratch<ExecSpace>& kept_scratch() {
  static KeptScratch<ExecSpace> kept;
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
    KeptScratch<ExecSpace>& kept = kept_scratch<ExecSpace>();
    lock_ = std::unique_lock<std::mutex>(kept.mutex);
    if (bytes > kept_scratch_bytes) {
      own_ = allocate_scratch<Mem>(bytes);
      base_ = own_.data();
      return;
    }
    if (!kept.hooked) {
      Kokkos::push_finalize_hook([] {
        KeptScratch<ExecSpace>& k = kept_scratch<ExecSpace>();
        std::lock_guard<std::mutex> guard(k.mutex);
        k.buffer = ScratchBytes<Mem>();
        k.last.reset();
        k.hooked = false; // a later Kokkos::initialize registers it again
      });
      kept.hooked = true;
    }
    // Another instance's kernels may still use the buffer: wait for them (same instance: its
    // stream orders them before ours).
    if (kept.last && !(*kept.last == exec))
      kept.last->fence("KokkosAttn::naive: working memory handed to another instance");
    if (kept.buffer.extent(0) < bytes) {
      exec.fence("KokkosAttn::naive: working memory grows"); // our own earlier calls' kernels
      kept.buffer = ScratchBytes<Mem>(); // free first: the peak is the new size alone
      kept.buffer = allocate_scratch<Mem>(bytes);
    }
    kept.last = exec;
    base_ = kept.buffer.data();
  }

  ScratchLease(const ScratchLease&) = delete;
  ScratchLease& operator=(const ScratchLease&) = delete;

  // A buffer of the lease's own is freed here: its kernels, enqueued on exec_, finish first.
  ~ScratchLease() {
    if (!own_.data())
      return;
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
