# The CUDA language and the architectures of our CUDA kernels (KokkosAttn_ENABLE_CUDA).
#   KokkosAttn_CUDA_ARCHITECTURES   what cuda/ builds for: "90a" builds the sm90 family (wgmma,
#                                   TMA) and the sm80 family for sm_90; 80..89 the sm80 family.
#   KokkosAttn_CUDA_SM80_ARCHITECTURES   (derived) the sm80 family's: every listed one, 90a as 90
#   KokkosAttn_CUDA_NEWEST_ARCHITECTURE  (derived) the newest of those, for single-arch targets
# Default: the architecture of the Kokkos found (Kokkos_CUDA_ARCHITECTURES; Kokkos builds for
# one), with 90 read as 90a; "90a;80" with a host-only Kokkos (raw device pointers).
include_guard(GLOBAL)

if(NOT KokkosAttn_ENABLE_CUDA)
  return()
endif()

check_language(CUDA)
if(NOT CMAKE_CUDA_COMPILER)
  message(FATAL_ERROR "KokkosAttn_ENABLE_CUDA=ON but no CUDA compiler was found "
                      "(set CMAKE_CUDA_COMPILER, e.g. /usr/local/cuda/bin/nvcc)")
endif()

set(_kattn_cuda_arch_default "90a;80")
if(Kokkos_ENABLE_CUDA AND Kokkos_CUDA_ARCHITECTURES)
  set(_kattn_cuda_arch_default)
  foreach(_a IN LISTS Kokkos_CUDA_ARCHITECTURES)
    if(_a STREQUAL "90")
      set(_a 90a) # our sm90 family needs the architecture-specific wgmma/setmaxnreg
    endif()
    list(APPEND _kattn_cuda_arch_default ${_a})
  endforeach()
endif()
set(KokkosAttn_CUDA_ARCHITECTURES "${_kattn_cuda_arch_default}" CACHE STRING
    "CUDA architectures of our kernels (default: Kokkos's, 90 as 90a)")
set(KokkosAttn_CUDA_SM80_ARCHITECTURES)
foreach(_a IN LISTS KokkosAttn_CUDA_ARCHITECTURES)
  string(REGEX REPLACE "[a-z]+$" "" _n "${_a}")
  if(NOT _n GREATER_EQUAL 80)
    message(FATAL_ERROR "KokkosAttn_CUDA_ARCHITECTURES: ${_a} is below sm_80, which our kernels "
                        "need (bf16 mma.sync, cp.async)")
  endif()
  list(APPEND KokkosAttn_CUDA_SM80_ARCHITECTURES ${_n})
endforeach()
list(REMOVE_DUPLICATES KokkosAttn_CUDA_SM80_ARCHITECTURES)
list(SORT KokkosAttn_CUDA_SM80_ARCHITECTURES COMPARE NATURAL)
list(GET KokkosAttn_CUDA_SM80_ARCHITECTURES -1 KokkosAttn_CUDA_NEWEST_ARCHITECTURE)
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(CMAKE_CUDA_ARCHITECTURES "${KokkosAttn_CUDA_ARCHITECTURES}")
endif()
set(CMAKE_CUDA_STANDARD 20)
set(CMAKE_CUDA_STANDARD_REQUIRED ON)
set(CMAKE_CUDA_EXTENSIONS OFF) # as for C++: Kokkos builds without GNU extensions
# CMake learnt nvcc's -std=c++20 in 3.25.2; before, enable_language fails with an obscure
# "does not know the flags" (seen with Debian 12's 3.25.1).
if(CMAKE_VERSION VERSION_LESS 3.25.2)
  message(FATAL_ERROR "KokkosAttn_ENABLE_CUDA needs CMake >= 3.25.2 (C++20 CUDA), this is "
                      "${CMAKE_VERSION}; e.g. `python3 -m pip install cmake`")
endif()
enable_language(CUDA)
find_package(CUDAToolkit REQUIRED)
message(STATUS "KokkosAttn: CUDA ${CMAKE_CUDA_COMPILER_VERSION} (${CMAKE_CUDA_COMPILER}), "
               "architectures: ${KokkosAttn_CUDA_ARCHITECTURES}")
