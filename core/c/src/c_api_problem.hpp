// The C API's problem handle: a backward problem whose `forward` is the forward problem, so that
// one handle serves kattn_forward and kattn_backward.
#pragma once

#include "kokkosattn.h"
#include "kokkosattn/problem.hpp"

struct kattn_problem_s {
  kattn::BackwardProblem p;
};

namespace kattn::c_api {

// The problem behind a handle (InvalidArgument for NULL).
BackwardProblem& problem_of(kattn_problem_t h, const char* name = "problem");
// The C enum as the library's, checked (InvalidArgument naming `name` when out of range).
DType dtype_of(kattn_dtype_t d, const char* name);
MemorySpace memory_of(kattn_memory_t m);
Backend backend_of(kattn_backend_t b);
kattn_backend_t c_backend(Backend b);

} // namespace kattn::c_api
