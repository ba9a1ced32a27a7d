# Finds cuDNN (cudnn.h, libcudnn) and defines the imported target KokkosAttn::CUDNN. Used by the
# build (cmake/KokkosAttnCudnn.cmake) and by the installed package config, which re-finds cuDNN
# on the consumer's machine instead of recording this machine's library path.
# Hints: CUDNN_ROOT (variable or environment), the CUDA toolkit's directories.
include_guard(GLOBAL)

find_path(KokkosAttn_CUDNN_INCLUDE_DIR cudnn.h
          HINTS ${CUDNN_ROOT} ENV CUDNN_ROOT ${CUDAToolkit_INCLUDE_DIRS}
          PATH_SUFFIXES include)
find_library(KokkosAttn_CUDNN_LIBRARY cudnn
             HINTS ${CUDNN_ROOT} ENV CUDNN_ROOT ${CUDAToolkit_LIBRARY_DIR}
                   ${CUDAToolkit_LIBRARY_ROOT}
             PATH_SUFFIXES lib64 lib)
if(KokkosAttn_CUDNN_INCLUDE_DIR AND KokkosAttn_CUDNN_LIBRARY AND NOT TARGET KokkosAttn::CUDNN)
  add_library(KokkosAttn::CUDNN UNKNOWN IMPORTED)
  set_target_properties(KokkosAttn::CUDNN PROPERTIES
    IMPORTED_LOCATION "${KokkosAttn_CUDNN_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${KokkosAttn_CUDNN_INCLUDE_DIR}")
endif()
if(TARGET KokkosAttn::CUDNN)
  set(KokkosAttn_CUDNN_FOUND TRUE)
else()
  set(KokkosAttn_CUDNN_FOUND FALSE)
endif()
