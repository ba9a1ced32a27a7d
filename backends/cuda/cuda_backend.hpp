// The `cuda` backend: our hand-written flash-attention forward kernels (cuda/sm80, cuda/sm90)
// on raw CUDA device memory. Framework-free; names no CUDA type.
#pragma once

#include <memory>
#include <string>

#include "kokkosattn/builtin_backends.hpp"
#include "kokkosattn/problem.hpp"

struct CUstream_st; // cudaStream_t is CUstream_st*

namespace kattn::cuda {

// Framework-free entry: validates, checks support (throws Unsupported with the reason) and
// enqueues the forward on `stream`; same effect as run_forward with the cuda backend forced.
void forward(const ForwardProblem& p, CUstream_st* stream);

// The kernel that would run `p` on the current device ("sm80_fwd_bf16_h128"), or "" with
// `why` set when none would.
std::string kernel_for(const ForwardProblem& p, std::string* why = nullptr);

} // namespace kattn::cuda
