// The naive backend with its products chosen (tests run both where the build has Kokkos
// Kernels); make_naive_backend() (kokkosattn/builtin_backends.hpp) takes Kokkos Kernels' GEMMs
// when the build has them, else the loops.
#pragma once

#include <memory>
#include <string>

#include "kokkosattn/builtin_backends.hpp"
#include "naive/naive_forward.hpp"

namespace kattn::naive {

// Throws Unsupported for Products::gemm in a build without Kokkos Kernels.
std::unique_ptr<BackendImpl> make_naive_backend(Products products);

// The Kokkos Kernels TPLs its GEMMs may use in this build, e.g. "TPL: BLAS", or "no TPL: its own
// kernel"; "" without Kokkos Kernels.
std::string kokkos_kernels_tpls();

} // namespace kattn::naive
