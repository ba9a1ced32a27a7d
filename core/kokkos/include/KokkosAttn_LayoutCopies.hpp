// Running a dispatch selection from the Kokkos front end, with layout copies when the selection
// has them (kattn::LayoutCopies): inputs copied to row-major scratch on the context's instance,
// the backend on the copies, outputs copied back, all enqueued in order without a fence. The
// user's outputs are written only after the backend ran. Defined in the library
// (backends/kokkos_common/layout_copies_run.cpp), compiled once per enabled execution space.
#pragma once

#include <cstddef>
#include <memory>

#include "kokkosattn/dispatch.hpp"
#include "kokkosattn/exec_context.hpp"
#include "kokkosattn/problem.hpp"

namespace KokkosAttn::Impl {

// Scratch memory for layout copies, in the memory of the context's execution space. It grows and
// is kept: freeing device memory synchronises the device, so a Plan owns one for its problem and
// sdpa() uses one per (execution space, stream), released at Kokkos::finalize.
class CopyScratch {
public:
  // At least `bytes` for runs on `x`; the returned handle keeps the buffer alive while a run
  // uses it, even if a later call on another thread grows the scratch.
  std::shared_ptr<void> reserve(const kattn::ExecContext& x, std::size_t bytes);

private:
  std::shared_ptr<void> buffer_; // holds a Kokkos::View of the space's memory
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

// Scratch bytes a run of `s` needs (0 without layout copies).
std::size_t copy_scratch_bytes(const kattn::Selection& s, const kattn::ForwardProblem& p);
std::size_t copy_scratch_bytes(const kattn::Selection& s, const kattn::BackwardProblem& p);

// Runs the selected backend. `scratch` may be null: the (space, stream)'s own is used then.
void run_forward(const kattn::Selection& s, const kattn::ForwardProblem& p,
                 const kattn::ExecContext& x, CopyScratch* scratch);
void run_backward(const kattn::Selection& s, const kattn::BackwardProblem& p,
                  const kattn::ExecContext& x, CopyScratch* scratch);

} // namespace KokkosAttn::Impl
