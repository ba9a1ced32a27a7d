// The reference backend: plain host C++ with double accumulation, written to be obviously
// right rather than fast. It is the ground truth every other backend is tested against and
// supports every option of problem.hpp (docs/semantics.md).
#pragma once

#include <memory>

#include "kokkosattn/builtin_backends.hpp"
#include "kokkosattn/problem.hpp"

namespace kattn::reference {

// Both assume a problem validated by kattn::validate and its Dims, all tensors in host memory.
// forward writes out (every element: 0 for padded rows) and extras.lse when given.
void forward(const ForwardProblem& p, const Dims& d);
// backward writes dq, dk, dv and dbias (when given) in full, recomputing the probabilities
// from q, k, v (extras.lse and forward.out are not read).
void backward(const BackwardProblem& p, const Dims& d);

} // namespace kattn::reference
