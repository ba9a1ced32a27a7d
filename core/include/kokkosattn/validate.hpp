// Validation of a problem against docs/semantics.md. Throws kattn::InvalidArgument naming the
// argument, the expectation and what came; touches no tensor data beyond the small i32 length
// tensors (when they are in host memory).
#pragma once

#include "kokkosattn/problem.hpp"

namespace kattn {

Dims validate(const ForwardProblem& p);
Dims validate(const BackwardProblem& p);

} // namespace kattn
