// The front end's runs with layout copies (KokkosAttn_LayoutCopies.hpp): scratch, copies in, the
// backend on the copies, copies out, all on the context's instance in stream order.
#include "KokkosAttn_LayoutCopies.hpp"

#include <Kokkos_Core.hpp>

#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "kokkos_common/kokkos_target.hpp"
#include "kokkos_common/layout_copy.hpp"
#include "kokkosattn/errors.hpp"
#include "kokkosattn/layout_copies.hpp"

namespace KokkosAttn::Impl {
namespace {

using kattn::LayoutCopies;

// Each copy starts on a 256-byte boundary (what cudaMalloc returns; TMA and cuDNN need 16).
constexpr std::size_t align = 256;
std::size_t copy_bytes(const kattn::Tensor& t) {
  const std::size_t n = static_cast<std::size_t>(t.numel()) * kattn::size_bytes(t.dtype);
  return (n + align - 1) / align * align;
}

template <class Problem>
std::size_t bytes_of(const kattn::Selection& s, const Problem& p) {
  std::size_t total = 0;
  for (int r = 0; r < LayoutCopies::count; ++r)
    if (const auto role = static_cast<LayoutCopies::Role>(r); s.copies.has(role))
      total += copy_bytes(*kattn::tensor_of(p, role));
  return total;
}

// One scratch per (execution space, stream) for sdpa() calls without a plan, reserved under a
// lock (threads may share a stream). Released at Kokkos::finalize, before the spaces go away.
std::shared_ptr<void> stream_scratch(const kattn::ExecContext& x, std::size_t bytes) {
  static std::mutex mutex;
  static std::map<std::pair<std::string, void*>, CopyScratch>* scratch = nullptr;
  const std::lock_guard<std::mutex> lock(mutex);
  if (scratch == nullptr) {
    scratch = new std::map<std::pair<std::string, void*>, CopyScratch>();
    Kokkos::push_finalize_hook([] {
      const std::lock_guard<std::mutex> l(mutex);
      delete scratch;
      scratch = nullptr;
    });
  }
  return (*scratch)[{x.kokkos_space, x.stream}].reserve(x, bytes);
}

template <class Problem, class Run>
void run_with_copies(const kattn::Selection& s, const Problem& p, const kattn::ExecContext& x,
                     CopyScratch* scratch, bool backward, const Run& run) {
  const std::size_t bytes = bytes_of(s, p);
  const std::shared_ptr<void> hold =
      scratch != nullptr ? scratch->reserve(x, bytes) : stream_scratch(x, bytes);
  auto* base = static_cast<std::byte*>(hold.get());
  Problem c = kattn::with_copies(p, s.copies);
  std::size_t offset = 0;
  for (int r = 0; r < LayoutCopies::count; ++r)
    if (const auto role = static_cast<LayoutCopies::Role>(r); s.copies.has(role)) {
      kattn::Tensor& t = *kattn::tensor_of(c, role);
      t.data = base + offset;
      offset += copy_bytes(t);
      if (!LayoutCopies::is_output(role, backward))
        kattn::kokkos_common::copy_tensor(x, *kattn::tensor_of(p, role), t);
    }
  run(c);
  for (int r = 0; r < LayoutCopies::count; ++r)
    if (const auto role = static_cast<LayoutCopies::Role>(r);
        s.copies.has(role) && LayoutCopies::is_output(role, backward))
      kattn::kokkos_common::copy_tensor(x, *kattn::tensor_of(c, role), *kattn::tensor_of(p, role));
}

} // namespace

std::shared_ptr<void> CopyScratch::reserve(const kattn::ExecContext& x, std::size_t bytes) {
  if (bytes > bytes_ || !buffer_) {
    kattn::kokkos_common::on_target("layout copies", x, [&](const auto& exec) {
      using Space = std::decay_t<decltype(exec)>;
      using View = Kokkos::View<std::byte*, typename Space::memory_space>;
      // Runs already enqueued on this instance may still read the old buffer; Kokkos frees
      // device memory asynchronously on some backends (HIP), so wait for them first. Growth only.
      if (buffer_)
        exec.fence("KokkosAttn: layout copy scratch grows");
      std::shared_ptr<View> v;
      try {
        v = std::make_shared<View>(
            Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "KokkosAttn::layout_copies"),
            bytes > 0 ? bytes : 1);
      } catch (const std::exception& e) {
        throw kattn::BackendFailure("layout copies: could not allocate " + std::to_string(bytes) +
                                    " bytes of scratch: " + e.what());
      }
      data_ = v->data();
      buffer_ = std::move(v);
      bytes_ = bytes;
    });
  }
  return std::shared_ptr<void>(buffer_, data_);
}

std::size_t copy_scratch_bytes(const kattn::Selection& s, const kattn::ForwardProblem& p) {
  return bytes_of(s, p);
}
std::size_t copy_scratch_bytes(const kattn::Selection& s, const kattn::BackwardProblem& p) {
  return bytes_of(s, p);
}

void run_forward(const kattn::Selection& s, const kattn::ForwardProblem& p,
                 const kattn::ExecContext& x, CopyScratch* scratch) {
  if (!s.copies.any())
    return s.impl->forward(p, s.dims, x);
  run_with_copies(s, p, x, scratch, false,
                  [&](const kattn::ForwardProblem& c) { s.impl->forward(c, s.dims, x); });
}

void run_backward(const kattn::Selection& s, const kattn::BackwardProblem& p,
                  const kattn::ExecContext& x, CopyScratch* scratch) {
  if (!s.copies.any())
    return s.impl->backward(p, s.dims, x);
  run_with_copies(s, p, x, scratch, true,
                  [&](const kattn::BackwardProblem& c) { s.impl->backward(c, s.dims, x); });
}

} // namespace KokkosAttn::Impl
