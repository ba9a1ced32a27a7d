// A timeline of the sm90 backward: clock64() at the phases of each step of each consumer
// warpgroup, for the first CTAs of a launch. Compiled in only with
// -DKokkosAttn_CUDA_SM90_BWD_TRACE=ON (the definition KATTN_SM90_BWD_TRACE on the backward's
// instantiation files: the production kernels have no trace code), and recorded only when the
// environment variable KATTN_BWD_TRACE names a file: launch i of the process writes its marks to
// FILE.i (scripts/bwd-trace.py reads one). ncu's stall samples say where warps wait; this says for
// how long each phase runs and how the two warpgroups overlap.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/cuda_check.hpp"

namespace kattn::cuda_kernels::sm90 {

// The marks of one step, in the order a step passes them (bwd_consumer.cuh's step()).
enum BwdMark : int {
  kMarkStart,     // the step begins
  kMarkLoaded,    // its Q and dO have landed: S^T and dP^T are issued
  kMarkScores,    // S^T is ready
  kMarkDvIssued,  // P is computed and dV's product issued
  kMarkDsStored,  // dS is computed and stored in shared memory
  kMarkOwnDq,     // dQ over this warpgroup's keys issued
  kMarkOtherRows, // the other warpgroup's dS^T rows are there (head dim 128)
  kMarkDqReady,   // dQ's product is done
  kMarkReduced,   // dQ staged and its reduction issued
  kMarkDkReady,   // dK's product is done: the step ends
  kMarks
};

// The producer's marks per step (bwd_producer.cuh), recorded after the two consumer warpgroups'
// as a third row with the same number of slots.
enum BwdProducerMark : int {
  kProducerWait,     // waits for the step's Q buffer (the step before last released it)
  kProducerQIssued,  // Q's TMA loads issued
  kProducerDoIssued, // dO's TMA loads issued
};

#ifdef KATTN_SM90_BWD_TRACE // the rest only in trace builds
struct BwdTraceShape {
  static constexpr int kCtas = 16;  // the first CTAs of the grid (x fastest)
  static constexpr int kSteps = 64; // the first steps of each
  static constexpr int kRows = 3;   // consumer warpgroups 0 and 1, the producer
  static constexpr int kProducerRow = 2;
  static constexpr std::size_t kValues = std::size_t{kCtas} * kRows * kSteps * BwdMark::kMarks;
};

// Device side: thread 0 of a consumer warpgroup (row = its index) or the producer thread (row 2)
// records a mark (no-op without a buffer).
__device__ __forceinline__ void bwd_trace_mark(std::uint64_t* trace, int row, int step, int mark) {
  const unsigned cta = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  if (trace != nullptr && threadIdx.x % 128 == 0 && cta < BwdTraceShape::kCtas &&
      step < BwdTraceShape::kSteps) {
    trace[((cta * BwdTraceShape::kRows + row) * BwdTraceShape::kSteps + step) * BwdMark::kMarks +
          mark] = clock64();
  }
}

// Host side: a zeroed device buffer when KATTN_BWD_TRACE is set (nullptr otherwise), and after
// the launch its marks written to KATTN_BWD_TRACE.<launch index>: a line "ctas rows steps marks
// head_dim", then the values as little-endian uint64 (0 where a mark was not reached).
class BwdTraceRecorder {
public:
  explicit BwdTraceRecorder(cudaStream_t stream)
      : stream_(stream), path_(std::getenv("KATTN_BWD_TRACE")) {
    if (path_ == nullptr)
      return;
    static std::uint64_t* buffer = nullptr; // one per process, kept: a debugging build
    if (buffer == nullptr)
      check_cuda(cudaMalloc(&buffer, BwdTraceShape::kValues * sizeof(std::uint64_t)),
                 "sm90 backward trace: cudaMalloc");
    check_cuda(cudaMemsetAsync(buffer, 0, BwdTraceShape::kValues * sizeof(std::uint64_t), stream),
               "sm90 backward trace: cudaMemsetAsync");
    buffer_ = buffer;
  }
  std::uint64_t* buffer() const { return buffer_; }
  void write(int head_dim) const {
    if (buffer_ == nullptr)
      return;
    std::vector<std::uint64_t> host(BwdTraceShape::kValues);
    check_cuda(cudaMemcpyAsync(host.data(), buffer_, host.size() * sizeof(std::uint64_t),
                               cudaMemcpyDeviceToHost, stream_),
               "sm90 backward trace: cudaMemcpyAsync");
    check_cuda(cudaStreamSynchronize(stream_), "sm90 backward trace: cudaStreamSynchronize");
    static int launch = 0; // FILE.0, FILE.1, ...: each backward of the process its own file
    const std::string path = std::string(path_) + "." + std::to_string(launch++);
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr)
      return; // a debugging aid: an unwritable path loses the trace, not the backward
    std::fprintf(f, "%d %d %d %d %d\n", BwdTraceShape::kCtas, BwdTraceShape::kRows,
                 BwdTraceShape::kSteps, static_cast<int>(BwdMark::kMarks), head_dim);
    std::fwrite(host.data(), sizeof(std::uint64_t), host.size(), f);
    std::fclose(f);
  }

private:
  cudaStream_t stream_;
  const char* path_;
  std::uint64_t* buffer_ = nullptr;
};

#endif

} // namespace kattn::cuda_kernels::sm90
