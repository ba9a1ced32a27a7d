// Private to the cudnn_graph_*.cpp files (the only ones that include cudnn_frontend.h): the
// variant-pack uids, a cached graph entry, the graph cache, and the varlen glue around a run.
#pragma once

#include <cudnn_frontend.h>

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "cudnn/cudnn_spec.hpp"

namespace kattn::cudnn::detail::graph_internal {

namespace fe = cudnn_frontend;

// Tensor uids of the variant pack.
enum : std::int64_t {
  uid_q = 1,
  uid_k,
  uid_v,
  uid_o,
  uid_stats,
  uid_bias,
  uid_do,
  uid_dq,
  uid_dk,
  uid_dv,
  uid_dbias,
  uid_seed,
  uid_offset,
  uid_descale_q, // FP8 factors, in the order of Fp8Scales
  uid_descale_k,
  uid_descale_v,
  uid_descale_s,
  uid_scale_s,
  uid_scale_o,
  uid_amax_s,
  uid_amax_o,
  uid_descale_o, // FP8 backward factors, in the order of Fp8BackwardScales
  uid_descale_do,
  uid_descale_dp,
  uid_scale_dp,
  uid_scale_dq,
  uid_scale_dk,
  uid_scale_dv,
  uid_amax_dq,
  uid_amax_dk,
  uid_amax_dv,
  uid_amax_dp,
  uid_seq_q, // varlen: per-batch lengths, then the ragged offsets (max_ragged of them)
  uid_seq_kv,
  uid_ragged0
};

// FP8 factors the caller left out: one 1.0 that every missing input factor reads, then one
// scratch float per amax output of a graph (written, never read back; the backward has four).
// One buffer per device, made on first use.
constexpr int fp8_amax_scratch = 4;
constexpr int fp8_default_count = 1 + fp8_amax_scratch;

// One cached graph (or cuDNN's reason for refusing it) and the workspace it runs with.
struct Entry {
  std::shared_ptr<fe::graph::Graph> graph;
  std::string refusal; // non-empty: cuDNN cannot run this key
  void* workspace = nullptr;
  std::int64_t workspace_bytes = 0;
  void* rng = nullptr;    // dropout: device seed and offset (two int64), written before each run
  int* lengths = nullptr; // varlen: seq_q [B], seq_kv [B], then n_ragged offset arrays [B+1]
  float* stats = nullptr; // varlen: LSE scratch (packed forward, backward), grown on demand
  std::size_t stats_bytes = 0;
  int device = 0;

  Entry() = default;
  Entry(const Entry&) = delete;
  Entry& operator=(const Entry&) = delete;
  ~Entry();
};

// Builds the graph for `s` (cudnn_graph_build.cpp): a refused graph comes back with `refusal`
// set; device allocations that fail throw.
std::shared_ptr<Entry> build(const GraphSpec& s, cudnnHandle_t handle);

// Process-wide: one cuDNN handle per device and the bounded LRU of graphs, under one mutex
// (graph builds and the handle's set-stream + enqueue are serialised; enqueueing is cheap).
class Cache {
public:
  // Caller holds mutex_.
  std::shared_ptr<Entry> get(const GraphSpec& s, cudnnHandle_t* handle_out);
  std::size_t size();
  std::size_t built();
  // Caller holds mutex_ and has made `device` current.
  float* fp8_defaults(int device);

  std::mutex mutex_;

private:
  std::size_t built_ = 0;
  std::map<int, float*> fp8_defaults_;
  cudnnHandle_t handle(int device);

  std::map<int, cudnnHandle_t> handles_;
  std::list<std::string> lru_; // front = most recently used
  std::unordered_map<std::string,
                     std::pair<std::shared_ptr<Entry>, std::list<std::string>::iterator>>
      map_;
};

Cache& cache();

// Run-time values that are not tensors of the problem.
struct RunValues {
  const Options* options = nullptr; // dropout seed and offset
  const Fp8Scales* fp8 = nullptr;
  const ForwardProblem* forward = nullptr;   // varlen: lengths, offsets, out/lse for the fix-up
  const BackwardProblem* backward = nullptr; // varlen backward: its gradients; FP8: its factors
};

// Varlen glue (cudnn_graph_varlen.cpp; caller holds the cache mutex).
// Lengths and ragged offsets into e.lengths, their uids into the pack; the LSE scratch for packed
// forwards and for backwards (a copy with -inf made +inf).
void varlen_before(const GraphSpec& s, Entry& e, const RunValues& values,
                   std::unordered_map<std::int64_t, void*>& pack, cudaStream_t stream);
// After the graph: the packed forward's LSE copied out of the scratch, then the rows our
// semantics fix (out 0 / LSE -inf; zero gradients).
void varlen_after(const GraphSpec& s, const Entry& e, const RunValues& values, cudaStream_t stream);

} // namespace kattn::cudnn::detail::graph_internal
