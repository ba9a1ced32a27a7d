// The C API (kokkosattn.h) over the Kokkos front end's raw-tensor entry points: runs go through
// KokkosAttn::sdpa(exec, problem), so dispatch, layout copies, logging and Kokkos Tools regions
// are those of the C++ API. Problems: c_api_problem.cpp; plans: c_api_plan.cpp.
#include "kokkosattn.h"

#include <KokkosAttn_KvAppend.hpp>
#include <KokkosAttn_Sdpa.hpp>

#include <algorithm>
#include <cstring>
#include <string>

#include "c_api_exec.hpp"
#include "c_api_problem.hpp"
#include "c_api_status.hpp"
#include "kokkosattn/dispatch.hpp"
#include "kokkosattn/registry.hpp"

namespace kattn::c_api {

void require_kokkos() {
  if (!Kokkos::is_initialized() || Kokkos::is_finalized())
    throw NotInitialized();
}

namespace {

bool we_initialized_kokkos = false; // finalised by kattn_finalize only then

std::string explain_text(const BackwardProblem& p, bool backward, void* stream) {
  std::string text;
  const auto& r = default_registry();
  const auto describe = [&](const ExecContext& x, LayoutCopy c) {
    if (backward)
      text = "backward: " + format_selection(select(r, p, x, c)) + "\n" +
             format_explain(explain(r, p, x, c));
    else
      text = "forward: " + format_selection(select(r, p.forward, x, c)) + "\n" +
             format_explain(explain(r, p.forward, x, c));
  };
  on_memory(
      p.forward.q.space, stream,
      [&](const auto& exec) {
        describe(KokkosAttn::make_exec_context(exec), LayoutCopy::available);
      },
      [&](const ExecContext& x) { describe(x, LayoutCopy::unavailable); });
  return text;
}

} // namespace
} // namespace kattn::c_api

using kattn::c_api::guarded;
using kattn::c_api::problem_of;

extern "C" {

kattn_status_t kattn_initialize(void) {
  return guarded("kattn_initialize", [] {
    if (Kokkos::is_finalized())
      throw kattn::InvalidArgument("Kokkos: expected it not finalised (it cannot be initialised "
                                   "again in this process), got finalised");
    if (!Kokkos::is_initialized()) {
      Kokkos::initialize();
      kattn::c_api::we_initialized_kokkos = true;
    }
  });
}

kattn_status_t kattn_finalize(void) {
  return guarded("kattn_finalize", [] {
    if (kattn::c_api::we_initialized_kokkos && Kokkos::is_initialized() &&
        !Kokkos::is_finalized()) {
      Kokkos::finalize();
      kattn::c_api::we_initialized_kokkos = false;
    }
  });
}

const char* kattn_last_error(void) {
  return kattn::c_api::last_error().c_str();
}

const char* kattn_version(void) {
  return "0.1.0";
}

kattn_status_t kattn_forward(kattn_problem_t problem, void* stream) {
  return guarded("kattn_forward", [&] {
    const kattn::ForwardProblem& p = problem_of(problem).forward;
    kattn::c_api::on_memory(
        p.q.space, stream, [&](const auto& exec) { KokkosAttn::sdpa(exec, p); },
        [&](const kattn::ExecContext& x) { kattn::run_forward(kattn::default_registry(), p, x); });
  });
}

kattn_status_t kattn_append_kv(kattn_problem_t problem, void* stream) {
  return guarded("kattn_append_kv", [&] {
    const kattn::KvAppend a = kattn::c_api::handle_of(problem).kv_append();
    kattn::c_api::on_memory(
        a.k_cache.space, stream, [&](const auto& exec) { KokkosAttn::append_kv(exec, a); },
        [&](const kattn::ExecContext&) {
          throw kattn::Unsupported("k: this library's Kokkos has no execution space for " +
                                   std::string(kattn::to_string(a.k_cache.space)) +
                                   " memory, which kattn_append_kv's copy runs on");
        });
  });
}

kattn_status_t kattn_synchronize(kattn_memory_t memory, void* stream) {
  return guarded("kattn_synchronize", [&] {
    kattn::c_api::on_memory(
        kattn::c_api::memory_of(memory), stream,
        [](const auto& exec) { exec.fence("kattn_synchronize"); },
        [&](const kattn::ExecContext&) {
          throw kattn::Unsupported(std::string("memory: this library's Kokkos has no ") +
                                   (memory == KATTN_MEMORY_CUDA ? "Cuda" : "HIP") +
                                   " execution space to wait on; wait for the stream with the " +
                                   (memory == KATTN_MEMORY_CUDA
                                        ? "CUDA runtime (cudaStreamSynchronize)"
                                        : "HIP runtime (hipStreamSynchronize)"));
        });
  });
}

kattn_status_t kattn_backward(kattn_problem_t problem, void* stream) {
  return guarded("kattn_backward", [&] {
    const kattn::BackwardProblem& p = problem_of(problem);
    kattn::c_api::on_memory(
        p.forward.q.space, stream, [&](const auto& exec) { KokkosAttn::sdpa_backward(exec, p); },
        [&](const kattn::ExecContext& x) { kattn::run_backward(kattn::default_registry(), p, x); });
  });
}

kattn_status_t kattn_explain(kattn_problem_t problem, int backward, char* text, size_t size,
                             size_t* needed) {
  return guarded("kattn_explain", [&] {
    if (text == nullptr && size > 0)
      throw kattn::InvalidArgument("text: expected a buffer of `size` bytes, got NULL with size " +
                                   std::to_string(size));
    const std::string s = kattn::c_api::explain_text(problem_of(problem), backward != 0, nullptr);
    if (needed != nullptr)
      *needed = s.size() + 1;
    if (size > 0) {
      const std::size_t n = std::min(size - 1, s.size());
      std::memcpy(text, s.data(), n);
      text[n] = '\0';
    }
  });
}

kattn_status_t kattn_selected_backend(kattn_problem_t problem, kattn_backend_t* backend) {
  return guarded("kattn_selected_backend", [&] {
    kattn::c_api::require(backend, "backend");
    const kattn::ForwardProblem& p = problem_of(problem).forward;
    kattn::Selection s;
    kattn::c_api::on_memory(
        p.q.space, nullptr,
        [&](const auto& exec) {
          s = kattn::select(kattn::default_registry(), p, KokkosAttn::make_exec_context(exec),
                            kattn::LayoutCopy::available);
        },
        [&](const kattn::ExecContext& x) { s = kattn::select(kattn::default_registry(), p, x); });
    *backend = s.empty ? KATTN_BACKEND_AUTO : kattn::c_api::c_backend(s.impl->id());
  });
}

} // extern "C"
