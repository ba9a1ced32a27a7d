// Layout copies: the main tensors of a problem that a run reads or writes through dense
// row-major ("LayoutRight") scratch instead of in place, so that a kernel which needs head-dim
// stride 1 (cuda, cudnn, hip) serves Views of any layout (Kokkos' LayoutLeft, LayoutStride).
// dispatch decides (kattn::select with LayoutCopy::available); the Kokkos front end, which owns
// device memory and streams, makes the copies (KokkosAttn_LayoutCopies.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kokkosattn/problem.hpp"

namespace kattn {

// Whether the caller can make layout copies. Raw-memory calls cannot (kattn::run_forward);
// the Kokkos front end can.
enum class LayoutCopy { unavailable, available };

// Which tensors go through a copy. Inputs are copied in before the backend runs, outputs out
// after it (the user's outputs are written only then).
struct LayoutCopies {
  // lse is the forward's output and the backward's input ([B, N, T] f32; Kokkos' default layout
  // on GPUs is LayoutLeft there too).
  enum Role : std::uint8_t { q, k, v, out, lse, dout, dq, dk, dv, count };
  std::uint16_t mask = 0;

  bool any() const { return mask != 0; }
  bool has(Role r) const { return (mask >> r) & 1u; }
  void add(Role r) { mask = static_cast<std::uint16_t>(mask | (1u << r)); }
  static bool is_output(Role r, bool backward) {
    return backward ? (r == dq || r == dk || r == dv) : (r == out || r == lse);
  }
  static const char* name(Role r);
  std::string names() const; // "q, k, v, out"
};

// The main tensors of a problem by role (nullptr where the problem has no such tensor: a
// forward has no gradients). Row-major tests and strides: is_row_major, row_major_like
// (tensor.hpp).
const Tensor* tensor_of(const ForwardProblem& p, LayoutCopies::Role r);
const Tensor* tensor_of(const BackwardProblem& p, LayoutCopies::Role r);
Tensor* tensor_of(ForwardProblem& p, LayoutCopies::Role r);
Tensor* tensor_of(BackwardProblem& p, LayoutCopies::Role r);

// Every main tensor that is not row-major (q, k, v, out, lse; a backward adds dout, dq, dk, dv).
LayoutCopies copies_for(const ForwardProblem& p);
LayoutCopies copies_for(const BackwardProblem& p);

// The copy sets dispatch tries for the non-row-major tensors `all`, fewest first: the outputs
// alone (a kernel may read the inputs as given, e.g. the sm90 family sequence-major q, k, v),
// then all of them. Each copy costs a kernel and a pass over the tensor (docs/performance.md).
std::vector<LayoutCopies> copy_choices(LayoutCopies all, bool backward);

// The problem a backend sees when the tensors in `c` are row-major copies. Their data pointers
// are null here (support checks read no data); the front end points them at its scratch.
ForwardProblem with_copies(const ForwardProblem& p, LayoutCopies c);
BackwardProblem with_copies(const BackwardProblem& p, LayoutCopies c);

} // namespace kattn
