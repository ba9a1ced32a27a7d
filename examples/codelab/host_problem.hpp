// Host buffers for one problem (Kokkos host Views holding raw elements of any kattn dtype) and
// the descriptors that point at them.
#pragma once

#include <KokkosAttn.hpp>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "shape.hpp"

namespace codelab {

// A contiguous row-major tensor in a Kokkos host allocation.
class HostTensor {
public:
  HostTensor() = default;
  HostTensor(const std::string& label, kattn::DType dtype,
             std::initializer_list<std::int64_t> extents);

  const kattn::Tensor& tensor() const { return tensor_; }
  bool defined() const { return tensor_.defined(); }
  // Random N(0, 1) values rounded to the dtype.
  void fill_normal(unsigned seed);
  // Every element set to x rounded to the dtype (NaN poisons outputs before a run).
  void fill(float x);
  // The elements widened to float (f32, f16, bf16 and the two FP8 formats).
  std::vector<float> to_float() const;

private:
  Kokkos::View<unsigned char*, Kokkos::HostSpace> bytes_;
  kattn::Tensor tensor_;
};

// q, k, v, out of one shape (random inputs, seeds 1, 2, 3); with_backward adds lse, dout, dq,
// dk, dv for fwd+bwd timings.
struct HostProblem {
  explicit HostProblem(const Shape& shape, bool with_backward = false);

  Shape shape;
  HostTensor q, k, v, out, lse, dout, dq, dk, dv;
};

// max |a - b| over query rows [row_begin, row_end) of [B, T, N, H] outputs (NaN gives +inf);
// row_end < 0 means T.
double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b, const Shape& s,
                    int row_begin = 0, int row_end = -1);
double max_abs(const std::vector<float>& a);

} // namespace codelab
