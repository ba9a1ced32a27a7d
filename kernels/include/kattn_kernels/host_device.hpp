// Function qualifiers for the framework-free headers that device code and host code both include
// (the kernel contract here, core's inline rules): __host__ __device__ under nvcc and hipcc,
// nothing under a host compiler. The one definition; core/include/kokkosattn/config.hpp
// forwards here.
#pragma once

#if defined(__CUDACC__) || defined(__HIPCC__)
#define KATTN_HOST_DEVICE __host__ __device__
#else
#define KATTN_HOST_DEVICE
#endif

#define KATTN_INLINE KATTN_HOST_DEVICE inline
