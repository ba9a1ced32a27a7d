// Device input/output sets for the GPU benchmark: several copies of one problem's tensors, so
// that timed calls can rotate through them and no call finds its inputs in L2.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "kokkosattn/problem.hpp"

namespace kattn_bench {

struct Shape {
  std::int64_t B, T, S, N, K, H;
  bool causal;
  bool deterministic = false; // options.deterministic (the backward's fixed reduction order)
  kattn::DType dtype = kattn::DType::bf16; // q, k, v, out and the gradients
  bool tf32 = false; // options.allow_tf32 (f32: TF32 products instead of 3xTF32)
};

// One cudaMalloc'ed buffer (freed on destruction); every CUDA error throws.
class DeviceBuffer {
public:
  explicit DeviceBuffer(std::size_t bytes);
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();
  void* get() const { return ptr_; }

private:
  void* ptr_ = nullptr;
};

// q, k, v, out, lse (and dout, dq, dk, dv when `grads`) of one shape in its dtype, [B, T, N, H].
struct TensorSet {
  std::unique_ptr<DeviceBuffer> q, k, v, out, lse, dout, dq, dk, dv;
  // The inference forward writes no LSE; the training forward (before a backward) does.
  kattn::ForwardProblem forward(const Shape& s, bool with_lse) const;
  kattn::BackwardProblem backward(const Shape& s) const;
};

class SetRing {
public:
  // Enough sets that their inputs together exceed 3x the L2 size (at least 2, at most 64),
  // filled with random values in [-2, 2) of the shape's dtype.
  SetRing(const Shape& s, bool grads, std::size_t l2_bytes);
  const TensorSet& next() { return sets_[i_++ % sets_.size()]; }
  std::size_t size() const { return sets_.size(); }
  std::size_t bytes_per_set() const { return bytes_per_set_; }

private:
  std::vector<TensorSet> sets_;
  std::size_t i_ = 0;
  std::size_t bytes_per_set_ = 0;
};

} // namespace kattn_bench
