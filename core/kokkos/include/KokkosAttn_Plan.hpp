// KokkosAttn::Plan: validate and choose a backend once for a problem shape, then execute it on
// new data many times (as kokkos-fft's plans do).
#pragma once

#include <Kokkos_Core.hpp>

#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "KokkosAttn_ExecContext.hpp"
#include "KokkosAttn_LayoutCopies.hpp"
#include "KokkosAttn_Run.hpp"
#include "KokkosAttn_Tensor.hpp"
#include "KokkosAttn_Types.hpp"
#include "kokkosattn/dispatch.hpp"
#include "kokkosattn/errors.hpp"
#include "kokkosattn/problem.hpp"
#include "kokkosattn/validate.hpp"

namespace KokkosAttn {

namespace Impl {

// The sizes a validation of the problem gave against those it was planned for.
inline void check_planned_dims(const kattn::Dims& d, const kattn::Dims& want, const char* where) {
  if (d.B != want.B || d.T != want.T || d.S != want.S)
    throw kattn::InvalidArgument(
        std::string(where) + ": extras sequence lengths: expected B=" + std::to_string(want.B) +
        " T=" + std::to_string(want.T) + " S=" + std::to_string(want.S) +
        " as planned, got B=" + std::to_string(d.B) + " T=" + std::to_string(d.T) +
        " S=" + std::to_string(d.S) + " (the lengths' contents changed; plan again)");
}

// A plan's extras (length tensors) are reused by reference, so their contents may have changed
// since planning: validate them again (host-resident ones are read; device-resident ones are the
// caller's contract, and the kernels clamp them to T and S), and keep the sizes the backend was
// chosen for. Changed lengths once made reference and portable write past out. Also the C API's
// plans (core/c/src/c_api_plan.cpp).
inline void check_planned_lengths(const kattn::ForwardProblem& p, const kattn::Dims& want,
                                  const char* where) {
  const kattn::Extras& e = p.extras;
  if (!e.cu_seqlens_q.defined() && !e.seqlens_q.defined() && !e.seqlens_k.defined())
    return;
  check_planned_dims(kattn::validate(p), want, where);
}

} // namespace Impl

template <class ExecSpace>
class Plan {
public:
  // Plans the forward for Views shaped like q, k, v, out. `extras` is captured as given: its
  // tensors (bias, mask, lengths, lse) must stay alive and are reused by every execute().
  // Throws InvalidArgument / Unsupported exactly as sdpa would.
  template <class QView, class KView, class VView, class OView>
  Plan(const ExecSpace& exec, const QView& q, const KView& k, const VView& v, const OView& out,
       const Options& options = {}, const Extras& extras = {})
      : exec_(exec), planned_(Impl::forward_problem<ExecSpace>(q, k, v, out, options, extras)) {
    const kattn::ExecContext x = make_exec_context(exec_);
    selection_ =
        kattn::select(kattn::default_registry(), planned_, x, kattn::LayoutCopy::available);
    verdicts_ =
        kattn::explain(kattn::default_registry(), planned_, x, kattn::LayoutCopy::available);
    kattn::log_selection("plan", selection_, planned_.q.dtype, x);
    // Layout copies: the plan's own scratch, allocated now rather than in execute().
    if (selection_.copies.any())
      (void)scratch_->reserve(x, Impl::copy_scratch_bytes(selection_, planned_));
  }

  // The backend that runs; Backend::automatic for an empty problem, where none does
  // (docs/semantics.md rule empty).
  kattn::Backend backend() const {
    return selection_.empty ? kattn::Backend::automatic : selection_.impl->id();
  }
  const kattn::Dims& dims() const { return selection_.dims; }
  const ExecSpace& execution_space() const { return exec_; }

  // The kernel the backend named for this problem (e.g. "sm90_fwd_bf16_h128_n192_tail64"),
  // empty where a backend names none.
  const std::string& kernel() const { return selection_.kernel; }

  // Tensors the plan runs through row-major copies (none when the Views suit the backend).
  const kattn::LayoutCopies& layout_copies() const { return selection_.copies; }

  // The chosen backend and how (with layout copies and notes), then every backend's verdict.
  std::string explain() const {
    return "plan: " + kattn::format_selection(selection_) + "\n" + kattn::format_explain(verdicts_);
  }

  // Runs the planned backend on new Views, which must have the planned dtypes, extents, strides
  // and memory spaces (InvalidArgument otherwise, before anything is written).
  template <class QView, class KView, class VView, class OView>
  void execute(const QView& q, const KView& k, const VView& v, const OView& out) const {
    check_views<QView, KView, VView, OView>(q, k, v, out);
    kattn::ForwardProblem p = planned_;
    p.q = as_planned(as_tensor(q), planned_.q, "q");
    p.k = as_planned(as_tensor(k), planned_.k, "k");
    p.v = as_planned(as_tensor(v), planned_.v, "v");
    p.out = as_planned(as_tensor(out), planned_.out, "out");
    Impl::check_planned_lengths(p, selection_.dims, "Plan::execute");
    const kattn::ExecContext x = make_exec_context(exec_);
    Impl::run_selected("KokkosAttn::Plan::execute", selection_,
                       [&] { Impl::run_forward(selection_, p, x, scratch_.get()); });
  }

private:
  template <class QView, class KView, class VView, class OView>
  static void check_views(const QView& q, const KView& k, const VView& v, const OView& out) {
    Impl::check_view<ExecSpace, QView>();
    Impl::check_view<ExecSpace, KView>();
    Impl::check_view<ExecSpace, VView>();
    Impl::check_view<ExecSpace, OView>();
    static_assert(!std::is_const_v<typename OView::value_type>,
                  "KokkosAttn::Plan: out must be a View of non-const elements");
    Impl::check_rank(static_cast<int>(q.rank()), "q");
    Impl::check_rank(static_cast<int>(k.rank()), "k");
    Impl::check_rank(static_cast<int>(v.rank()), "v");
    Impl::check_rank(static_cast<int>(out.rank()), "out");
  }

  static kattn::Tensor as_planned(const kattn::Tensor& got, const kattn::Tensor& want,
                                  const char* name) {
    const std::string head = std::string("Plan::execute: ") + name + ": expected ";
    if (got.dtype != want.dtype)
      throw kattn::InvalidArgument(head + "dtype " + std::string(kattn::to_string(want.dtype)) +
                                   " as planned, got " + std::string(kattn::to_string(got.dtype)));
    if (got.rank != want.rank || got.extent != want.extent)
      throw kattn::InvalidArgument(head + "extents " + want.shape_string() + " as planned, got " +
                                   got.shape_string());
    if (got.stride != want.stride)
      throw kattn::InvalidArgument(head + "strides " + want.stride_string() + " as planned, got " +
                                   got.stride_string());
    if (got.space != want.space)
      throw kattn::InvalidArgument(head + "memory space " +
                                   std::string(kattn::to_string(want.space)) + " as planned, got " +
                                   std::string(kattn::to_string(got.space)));
    if (got.data == nullptr)
      throw kattn::InvalidArgument(head + "a non-null data pointer, got nullptr");
    return got;
  }

  ExecSpace exec_;
  kattn::ForwardProblem planned_;
  kattn::Selection selection_;
  std::vector<kattn::BackendVerdict> verdicts_;
  // Shared by copies of the plan (which run on the same instance, in stream order).
  std::shared_ptr<Impl::CopyScratch> scratch_ = std::make_shared<Impl::CopyScratch>();
};

} // namespace KokkosAttn
