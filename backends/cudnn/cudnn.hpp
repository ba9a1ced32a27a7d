// The cuDNN backend: NVIDIA's fused attention through the cudnn-frontend graph API, on raw
// CUDA device memory. Framework-free (no Kokkos); this header names no CUDA or cuDNN type, so
// it can be included anywhere.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "kokkosattn/builtin_backends.hpp"
#include "kokkosattn/problem.hpp"

struct CUstream_st; // cudaStream_t is CUstream_st*

namespace kattn::cudnn {

// Framework-free entry: validates, asks the backend's support check (throws Unsupported with
// its reason) and enqueues the forward on `stream`. Same effect as kattn::run_forward with
// the cudnn backend forced.
void forward(const ForwardProblem& p, CUstream_st* stream);
// Likewise for the backward: needs forward.extras.lse (the forward's LSE) and forward.out;
// writes dq, dk, dv. options.deterministic selects cuDNN's deterministic algorithm.
void backward(const BackwardProblem& p, CUstream_st* stream);

// "cuDNN 9.19.0 (runtime), cudnn-frontend 1.32.0"; "cuDNN unavailable: ..." without a GPU.
std::string versions();

// Number of graphs (and cached verdicts) currently held by the process-wide graph cache
// (bounded: least recently used entries are dropped beyond 64), and how many were ever built.
std::size_t cached_graphs();
std::size_t graphs_built();

} // namespace kattn::cudnn
