# Fails when a kernel source includes a layer above it (docs/architecture.md, "Layers"):
#   cuda/ and hip/ (kernels and their framework-free entries): no core (kokkosattn/), Kokkos,
#     front-end (KokkosAttn_*) or backends/ header;
#   kernels/ (the kernel contract): the standard library and kattn_kernels/ only.
# Run as: cmake -DROOT=<dir with cuda/ hip/ kernels/> -P this-file. CTest runs it on the
# repository and, expecting failure, on tests/kernels/layering_fixture/ (so the check can fail).
set(globs "*.hpp" "*.h" "*.cuh" "*.cu" "*.cpp" "*.hip")
set(violations "")
macro(check_dir dir bad_regex)
  set(patterns "")
  foreach(g IN LISTS globs)
    list(APPEND patterns "${ROOT}/${dir}/${g}")
  endforeach()
  file(GLOB_RECURSE files ${patterns})
  foreach(f IN LISTS files)
    file(STRINGS "${f}" lines REGEX "^[ \t]*#[ \t]*include")
    foreach(line IN LISTS lines)
      if(line MATCHES "${bad_regex}")
        file(RELATIVE_PATH rel "${ROOT}" "${f}")
        list(APPEND violations "${rel}: ${line}")
      endif()
    endforeach()
  endforeach()
endmacro()
set(above "[<\"](kokkosattn/|Kokkos|KokkosAttn|gpu_common/|cuda/cuda_backend|hip/hip_params)")
check_dir(cuda "${above}")
check_dir(hip "${above}")
# The contract: any quoted include that is not kattn_kernels/, any Kokkos or core header.
check_dir(kernels "(\"([^k]|k[^a]|ka[^t]|kat[^t]|katt[^n]|kattn[^_])|[<\"](Kokkos|kokkosattn/))")
if(violations)
  list(JOIN violations "\n  " text)
  message(FATAL_ERROR "kernel layering: includes of a layer above the kernels:\n  ${text}")
endif()
message(STATUS "kernel layering: cuda/, hip/ and kernels/ include no core, Kokkos or backend header")
