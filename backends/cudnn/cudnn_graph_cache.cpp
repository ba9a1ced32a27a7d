#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "cudnn/cudnn_graph.hpp"
#include "cudnn/cudnn_graph_internal.hpp"
#include "cudnn/cudnn_status.hpp"

// The bounded, thread-safe graph cache: per-device handles, the LRU of entries (good or
// refused), the FP8 default factors, and the entries' device memory.
namespace kattn::cudnn::detail {
namespace graph_internal {

Entry::~Entry() {
  if (workspace == nullptr && rng == nullptr && lengths == nullptr && stats == nullptr)
    return;
  // cudaFree waits for work still using the buffers; restore the caller's device.
  int current = 0;
  if (cudaGetDevice(&current) == cudaSuccess && cudaSetDevice(device) == cudaSuccess) {
    if (workspace)
      (void)cudaFree(workspace);
    if (rng)
      (void)cudaFree(rng);
    if (lengths)
      (void)cudaFree(lengths);
    if (stats)
      (void)cudaFree(stats);
    (void)cudaSetDevice(current);
  }
}

std::shared_ptr<Entry> Cache::get(const GraphSpec& s, cudnnHandle_t* handle_out) {
  const std::string key = s.key();
  cudnnHandle_t h = handle(s.device);
  if (handle_out)
    *handle_out = h;
  if (auto it = map_.find(key); it != map_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second.second);
    return it->second.first;
  }
  std::shared_ptr<Entry> e = build(s, h);
  ++built_;
  lru_.push_front(key);
  map_.emplace(key, std::make_pair(e, lru_.begin()));
  while (map_.size() > graph_cache_capacity) {
    map_.erase(lru_.back());
    lru_.pop_back();
  }
  return e;
}

std::size_t Cache::size() {
  std::lock_guard<std::mutex> lock(mutex_);
  return map_.size();
}

std::size_t Cache::built() {
  std::lock_guard<std::mutex> lock(mutex_);
  return built_;
}

float* Cache::fp8_defaults(int device) {
  if (auto it = fp8_defaults_.find(device); it != fp8_defaults_.end())
    return it->second;
  float host[fp8_default_count] = {1}; // then zeros: the amax scratch
  void* d = nullptr;
  check_cuda(cudaMalloc(&d, sizeof host), "cudaMalloc(fp8 default factors)");
  check_cuda(cudaMemcpy(d, host, sizeof host, cudaMemcpyHostToDevice),
             "cudaMemcpy(fp8 default factors)");
  fp8_defaults_.emplace(device, static_cast<float*>(d));
  return static_cast<float*>(d);
}

cudnnHandle_t Cache::handle(int device) {
  if (auto it = handles_.find(device); it != handles_.end())
    return it->second;
  cudnnHandle_t h = nullptr;
  check_cudnn(cudnnCreate(&h), "cudnnCreate");
  handles_.emplace(device, h);
  return h;
}

// Never destroyed: handles and device memory must not be released during static destruction,
// after the CUDA runtime may already be gone.
Cache& cache() {
  static Cache* c = new Cache;
  return *c;
}

} // namespace graph_internal

Support check_graph(const GraphSpec& spec) {
  graph_internal::Cache& c = graph_internal::cache();
  std::lock_guard<std::mutex> lock(c.mutex_);
  std::shared_ptr<graph_internal::Entry> e = c.get(spec, nullptr);
  if (!e->refusal.empty())
    return Support::no(e->refusal + " [" + spec.describe() + "]");
  return Support::yes();
}

std::size_t graph_cache_size() {
  return graph_internal::cache().size();
}
std::size_t graphs_built() {
  return graph_internal::cache().built();
}

} // namespace kattn::cudnn::detail
