// KATTN_UNROLL / KATTN_UNROLL_BY(n): unrolling pragmas for the backends' Kokkos kernels.
#pragma once

// Complete unrolling of the fixed-size loops of a register block, so its accumulators live in
// registers (GCC's -O2 does not fully unroll on its own). Under nvcc (nvcc_wrapper compiles every
// .cpp as CUDA) only the device pass gets a pragma: nvcc hands `#pragma unroll` in host code to
// g++, which rejects it, and warns about `#pragma GCC unroll` itself; host loops there are left to
// the compiler (host spaces of a CUDA build are not where this backend's speed is measured).
// KATTN_UNROLL_BY(n): unrolling by n where full unrolling would cost more registers than it saves
// latency (portable's device forward, its head-dim loop).
#define KATTN_PRAGMA(x) _Pragma(#x)
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__) || defined(__clang__)
#define KATTN_UNROLL _Pragma("unroll")
#define KATTN_UNROLL_BY(n) KATTN_PRAGMA(unroll n)
#elif defined(__CUDACC__)
#define KATTN_UNROLL
#define KATTN_UNROLL_BY(n)
#elif defined(__GNUC__)
#define KATTN_UNROLL _Pragma("GCC unroll 32")
#define KATTN_UNROLL_BY(n) KATTN_PRAGMA(GCC unroll n)
#else
#define KATTN_UNROLL
#define KATTN_UNROLL_BY(n)
#endif
