// The naive forward for one Kokkos execution space. Declared here, defined in
// naive_forward_impl.hpp and explicitly instantiated once per enabled space
// (naive_forward_<space>.cpp), so each space compiles in its own translation unit.
#pragma once

#include "kokkosattn/problem.hpp"

namespace kattn::naive {

// Enqueues the three kernels on `exec`; p must be validated (d its Dims) and supported by the
// naive backend, every tensor accessible from ExecSpace. Waits on `exec` only to release its
// temporary score matrix.
template <class ExecSpace>
void forward_on(const ExecSpace& exec, const ForwardProblem& p, const Dims& d);

} // namespace kattn::naive
