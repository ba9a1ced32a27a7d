// The C API's plans (kokkosattn.h): the forward (or the backward) validated and its backend
// chosen once on one stream, as KokkosAttn::Plan does for Views; each execute swaps in new
// pointers of the planned tensors.
#include "kokkosattn.h"

#include <KokkosAttn_ExecContext.hpp>
#include <KokkosAttn_LayoutCopies.hpp>
#include <KokkosAttn_Plan.hpp>
#include <KokkosAttn_Run.hpp>

#include <functional>
#include <memory>
#include <string>

#include "c_api_exec.hpp"
#include "c_api_problem.hpp"
#include "c_api_status.hpp"
#include "kokkosattn/dispatch.hpp"
#include "kokkosattn/registry.hpp"
#include "kokkosattn/validate.hpp"

using ContextUser = std::function<void(const kattn::ExecContext&)>;

struct kattn_plan_s {
  kattn::BackwardProblem planned; // a forward plan uses planned.forward only
  bool backward = false;
  kattn::Selection selection;
  bool raw = false; // no Kokkos space for the memory: each execute dispatches again
  // Calls its argument with the plan's context: the Kokkos instance on the planned stream lives
  // in this closure (so plans must be destroyed before Kokkos is finalised).
  std::function<void(const ContextUser&)> on_context;
  KokkosAttn::Impl::CopyScratch scratch;
};

namespace {

const void* checked(const void* p, const char* where, const char* name) {
  if (p == nullptr)
    throw kattn::InvalidArgument(std::string(where) + ": " + name +
                                 ": expected a non-null data pointer, got NULL");
  return p;
}

void require_direction(const kattn_plan_s& plan, bool backward, const char* where) {
  if (plan.backward != backward)
    throw kattn::InvalidArgument(
        std::string(where) + ": plan: expected a " + (backward ? "backward" : "forward") +
        " plan, got one made by " +
        (plan.backward ? "kattn_plan_create_backward" : "kattn_plan_create"));
}

// Plans `problem` in the given direction on `stream`: the context, the selection, the scratch.
kattn_plan_t make_plan(kattn_problem_t problem, void* stream, bool backward) {
  auto made = std::make_unique<kattn_plan_s>();
  made->planned = kattn::c_api::problem_of(problem);
  made->backward = backward;
  const auto& r = kattn::default_registry();
  kattn::c_api::on_memory(
      made->planned.forward.q.space, stream,
      [&](const auto& exec) {
        made->on_context = [exec](const ContextUser& f) { f(KokkosAttn::make_exec_context(exec)); };
      },
      [&](const kattn::ExecContext& x) {
        made->raw = true;
        made->on_context = [x](const ContextUser& f) { f(x); };
      });
  made->on_context([&](const kattn::ExecContext& x) {
    const auto copies = made->raw ? kattn::LayoutCopy::unavailable : kattn::LayoutCopy::available;
    const auto plan_for = [&](const auto& planned, const char* what) {
      made->selection = kattn::select(r, planned, x, copies);
      kattn::log_selection(what, made->selection, made->planned.forward.q.dtype, x);
      return made->selection.copies.any()
                 ? KokkosAttn::Impl::copy_scratch_bytes(made->selection, planned)
                 : std::size_t{0};
    };
    const std::size_t bytes = backward ? plan_for(made->planned, "kattn_plan (backward)")
                                       : plan_for(made->planned.forward, "kattn_plan");
    if (bytes > 0) // the scratch allocated now rather than in execute
      (void)made->scratch.reserve(x, bytes);
  });
  return made.release();
}

} // namespace

using kattn::c_api::guarded;

extern "C" {

kattn_status_t kattn_plan_create(kattn_plan_t* plan, kattn_problem_t problem, void* stream) {
  return guarded("kattn_plan_create", [&] {
    kattn::c_api::require(plan, "plan");
    *plan = make_plan(problem, stream, false);
  });
}

kattn_status_t kattn_plan_create_backward(kattn_plan_t* plan, kattn_problem_t problem,
                                          void* stream) {
  return guarded("kattn_plan_create_backward", [&] {
    kattn::c_api::require(plan, "plan");
    *plan = make_plan(problem, stream, true);
  });
}

kattn_status_t kattn_plan_execute(kattn_plan_t plan, const void* q, const void* k, const void* v,
                                  void* out) {
  constexpr const char* where = "kattn_plan_execute";
  return guarded(where, [&] {
    kattn::c_api::require(plan, "plan");
    require_direction(*plan, false, where);
    kattn::c_api::require_kokkos();
    kattn::ForwardProblem p = plan->planned.forward;
    p.q.data = const_cast<void*>(checked(q, where, "q"));
    p.k.data = const_cast<void*>(checked(k, where, "k"));
    p.v.data = const_cast<void*>(checked(v, where, "v"));
    p.out.data = const_cast<void*>(checked(out, where, "out"));
    KokkosAttn::Impl::check_planned_lengths(p, plan->selection.dims, where);
    plan->on_context([&](const kattn::ExecContext& x) {
      if (plan->raw)
        return kattn::run_forward(kattn::default_registry(), p, x);
      KokkosAttn::Impl::run_selected(where, plan->selection, [&] {
        KokkosAttn::Impl::run_forward(plan->selection, p, x, &plan->scratch);
      });
    });
  });
}

kattn_status_t kattn_plan_execute_backward(kattn_plan_t plan, const void* q, const void* k,
                                           const void* v, const void* out, const void* dout,
                                           void* dq, void* dk, void* dv) {
  constexpr const char* where = "kattn_plan_execute_backward";
  return guarded(where, [&] {
    kattn::c_api::require(plan, "plan");
    require_direction(*plan, true, where);
    kattn::c_api::require_kokkos();
    kattn::BackwardProblem p = plan->planned;
    p.forward.q.data = const_cast<void*>(checked(q, where, "q"));
    p.forward.k.data = const_cast<void*>(checked(k, where, "k"));
    p.forward.v.data = const_cast<void*>(checked(v, where, "v"));
    p.forward.out.data = const_cast<void*>(checked(out, where, "out"));
    p.dout.data = const_cast<void*>(checked(dout, where, "dout"));
    p.dq.data = const_cast<void*>(checked(dq, where, "dq"));
    p.dk.data = const_cast<void*>(checked(dk, where, "dk"));
    p.dv.data = const_cast<void*>(checked(dv, where, "dv"));
    // Validated again (microseconds: no tensor data is read but host-resident lengths): new
    // gradient pointers may alias the inputs, and the lengths' contents may have changed.
    KokkosAttn::Impl::check_planned_dims(kattn::validate(p), plan->selection.dims, where);
    plan->on_context([&](const kattn::ExecContext& x) {
      if (plan->raw)
        return kattn::run_backward(kattn::default_registry(), p, x);
      KokkosAttn::Impl::run_selected(where, plan->selection, [&] {
        KokkosAttn::Impl::run_backward(plan->selection, p, x, &plan->scratch);
      });
    });
  });
}

kattn_status_t kattn_plan_backend(kattn_plan_t plan, kattn_backend_t* backend) {
  return guarded("kattn_plan_backend", [&] {
    kattn::c_api::require(plan, "plan");
    kattn::c_api::require(backend, "backend");
    const kattn::Selection& s = plan->selection;
    *backend = s.empty ? KATTN_BACKEND_AUTO : kattn::c_api::c_backend(s.impl->id());
  });
}

kattn_status_t kattn_plan_destroy(kattn_plan_t plan) {
  delete plan;
  return KATTN_OK;
}

} // extern "C"
