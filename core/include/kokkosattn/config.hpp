// Portability macros for the framework-free headers that device code also includes.
#pragma once

#if defined(__CUDACC__) || defined(__HIPCC__)
#define KATTN_HOST_DEVICE __host__ __device__
#else
#define KATTN_HOST_DEVICE
#endif

#define KATTN_INLINE KATTN_HOST_DEVICE inline
