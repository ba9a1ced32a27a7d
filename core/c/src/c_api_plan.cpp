// The C API's plans (kokkosattn.h): the forward validated and its backend chosen once on one
// stream, as KokkosAttn::Plan does for Views; each execute swaps in new q, k, v, out pointers.
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

using ContextUser = std::function<void(const kattn::ExecContext&)>;

struct kattn_plan_s {
  kattn::ForwardProblem planned;
  kattn::Selection selection;
  bool raw = false; // no Kokkos space for the memory: each execute dispatches again
  // Calls its argument with the plan's context: the Kokkos instance on the planned stream lives
  // in this closure (so plans must be destroyed before Kokkos is finalised).
  std::function<void(const ContextUser&)> on_context;
  KokkosAttn::Impl::CopyScratch scratch;
};

namespace {

const void* checked(const void* p, const char* name) {
  if (p == nullptr)
    throw kattn::InvalidArgument(std::string("kattn_plan_execute: ") + name +
                                 ": expected a non-null data pointer, got NULL");
  return p;
}

} // namespace

using kattn::c_api::guarded;

extern "C" {

kattn_status_t kattn_plan_create(kattn_plan_t* plan, kattn_problem_t problem, void* stream) {
  return guarded("kattn_plan_create", [&] {
    kattn::c_api::require(plan, "plan");
    auto made = std::make_unique<kattn_plan_s>();
    made->planned = kattn::c_api::problem_of(problem).forward;
    const auto& r = kattn::default_registry();
    kattn::c_api::on_memory(
        made->planned.q.space, stream,
        [&](const auto& exec) {
          made->on_context = [exec](const ContextUser& f) {
            f(KokkosAttn::make_exec_context(exec));
          };
        },
        [&](const kattn::ExecContext& x) {
          made->raw = true;
          made->on_context = [x](const ContextUser& f) { f(x); };
        });
    made->on_context([&](const kattn::ExecContext& x) {
      made->selection =
          kattn::select(r, made->planned, x,
                        made->raw ? kattn::LayoutCopy::unavailable : kattn::LayoutCopy::available);
      kattn::log_selection("kattn_plan", made->selection, made->planned.q.dtype, x);
      if (made->selection.copies.any()) // the scratch allocated now rather than in execute
        (void)made->scratch.reserve(
            x, KokkosAttn::Impl::copy_scratch_bytes(made->selection, made->planned));
    });
    *plan = made.release();
  });
}

kattn_status_t kattn_plan_execute(kattn_plan_t plan, const void* q, const void* k, const void* v,
                                  void* out) {
  return guarded("kattn_plan_execute", [&] {
    kattn::c_api::require(plan, "plan");
    kattn::c_api::require_kokkos();
    kattn::ForwardProblem p = plan->planned;
    p.q.data = const_cast<void*>(checked(q, "q"));
    p.k.data = const_cast<void*>(checked(k, "k"));
    p.v.data = const_cast<void*>(checked(v, "v"));
    p.out.data = const_cast<void*>(checked(out, "out"));
    KokkosAttn::Impl::check_planned_lengths(p, plan->selection.dims, "kattn_plan_execute");
    plan->on_context([&](const kattn::ExecContext& x) {
      if (plan->raw)
        return kattn::run_forward(kattn::default_registry(), p, x);
      KokkosAttn::Impl::run_selected("kattn_plan_execute", plan->selection, [&] {
        KokkosAttn::Impl::run_forward(plan->selection, p, x, &plan->scratch);
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
