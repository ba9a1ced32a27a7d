// The C API's problem handle: a backward problem whose `forward` is the forward problem, so that
// one handle serves kattn_forward and kattn_backward, and a decode step's new keys and values
// for kattn_append_kv (into the forward's k and v: the cache).
#pragma once

#include "kokkosattn.h"
#include "kokkosattn/kv_append.hpp"
#include "kokkosattn/problem.hpp"

struct kattn_problem_s {
  kattn::BackwardProblem p;
  kattn::Tensor k_new, v_new; // KATTN_K_NEW, KATTN_V_NEW

  // The append kattn_append_kv runs: k_new, v_new into k, v (paged by the page table), and
  // seqlens_k grown.
  kattn::KvAppend kv_append() const {
    const kattn::ForwardProblem& f = p.forward;
    return {k_new, v_new, f.k, f.v, f.extras.page_table, f.extras.seqlens_k};
  }
};

namespace kattn::c_api {

// The problem behind a handle (InvalidArgument for NULL), and the handle itself.
BackwardProblem& problem_of(kattn_problem_t h, const char* name = "problem");
kattn_problem_s& handle_of(kattn_problem_t h, const char* name = "problem");
// The C enum as the library's, checked (InvalidArgument naming `name` when out of range).
DType dtype_of(kattn_dtype_t d, const char* name);
MemorySpace memory_of(kattn_memory_t m);
Backend backend_of(kattn_backend_t b);
kattn_backend_t c_backend(Backend b);

} // namespace kattn::c_api
