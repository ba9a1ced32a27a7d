// The vocabulary of the Kokkos front end, in its namespace: KokkosAttn::Options, Extras, ... are
// the framework-free core's types (namespace kattn, which the C API, the backends and the tests
// use directly); one type each, so both spellings mix freely.
#pragma once

#include "kokkosattn/backend.hpp"
#include "kokkosattn/dtype.hpp"
#include "kokkosattn/errors.hpp"
#include "kokkosattn/problem.hpp"
#include "kokkosattn/tensor.hpp"

namespace KokkosAttn {

using kattn::Alignment;         // top_left / bottom_right causal alignment
using kattn::Backend;           // automatic, cudnn, cuda, hip, portable, naive, reference
using kattn::BackwardProblem;   // the raw-tensor backward problem
using kattn::DType;             // element types of raw tensors
using kattn::Extras;            // optional tensors (bias, mask, lengths, lse): Views or Tensors
using kattn::ForwardProblem;    // the raw-tensor forward problem
using kattn::Fp8BackwardScales; // FP8 backward factors
using kattn::Fp8Scales;         // FP8 forward factors
using kattn::Options;           // scale, causal, window, softcap, dropout, backend, ...
using kattn::Tensor;            // a raw strided tensor (pointer, dtype, extents, strides)

using kattn::BackendFailure;  // a backend failed at run time (CUDA, cuDNN, HIP error)
using kattn::Error;           // the base of every exception kokkos-attention throws
using kattn::InvalidArgument; // a bad argument, named with what was expected and what came
using kattn::Unsupported;     // no backend (or the forced one) can run the problem

} // namespace KokkosAttn
