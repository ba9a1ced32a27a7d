// The portable backend for one Kokkos execution space. Declared here, defined in
// portable_run_impl.hpp and explicitly instantiated once per enabled space
// (portable_run_<space>.cpp), so each space compiles in its own translation unit.
#pragma once

#include "kokkosattn/problem.hpp"

namespace kattn::portable {

// Enqueue the kernels on `exec` and wait for them (temporaries are released on return). The
// problem must be validated (d its Dims), supported by the portable backend, and every tensor
// accessible from ExecSpace.
template <class ExecSpace>
void forward_on(const ExecSpace& exec, const ForwardProblem& p, const Dims& d);
template <class ExecSpace>
void backward_on(const ExecSpace& exec, const BackwardProblem& p, const Dims& d);

} // namespace kattn::portable
