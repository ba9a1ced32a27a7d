# The cuDNN backend, a vendor library (TPL) option in the manner of Kokkos Kernels:
#   KokkosAttn_ENABLE_TPL_CUDNN     ON by default with CUDA where cuDNN and cudnn-frontend are
#                                   found; ON without them is an error saying what is missing.
#   KokkosAttn_CUDNN_FRONTEND_DIR   the directory holding cudnn_frontend.h (header-only; hints:
#                                   CUDNN_FRONTEND_ROOT). Never downloaded here: the Makefile
#                                   passes the copy scripts/fetch-cudnn-frontend.sh caches.
include_guard(GLOBAL)

set(_kattn_cudnn_default OFF)
if(KokkosAttn_ENABLE_CUDA)
  include(KokkosAttnFindCUDNN)
  find_path(KokkosAttn_CUDNN_FRONTEND_DIR cudnn_frontend.h
            HINTS ${CUDNN_FRONTEND_ROOT} ENV CUDNN_FRONTEND_ROOT PATH_SUFFIXES include)
  if(KokkosAttn_CUDNN_FOUND AND KokkosAttn_CUDNN_FRONTEND_DIR)
    set(_kattn_cudnn_default ON)
  endif()
endif()
option(KokkosAttn_ENABLE_TPL_CUDNN
       "Build the cuDNN backend (default: CUDA on and cuDNN + cudnn-frontend found)"
       ${_kattn_cudnn_default})

if(KokkosAttn_ENABLE_TPL_CUDNN)
  set(_kattn_missing)
  if(NOT KokkosAttn_ENABLE_CUDA)
    list(APPEND _kattn_missing "KokkosAttn_ENABLE_CUDA=ON")
  endif()
  if(NOT KokkosAttn_CUDNN_INCLUDE_DIR OR NOT KokkosAttn_CUDNN_LIBRARY)
    list(APPEND _kattn_missing "cuDNN (cudnn.h and libcudnn; set CUDNN_ROOT)")
  endif()
  if(NOT KokkosAttn_CUDNN_FRONTEND_DIR)
    list(APPEND _kattn_missing "cudnn-frontend (cudnn_frontend.h; set KokkosAttn_CUDNN_FRONTEND_DIR "
                               "or CUDNN_FRONTEND_ROOT, e.g. to what scripts/fetch-cudnn-frontend.sh prints)")
  endif()
  if(_kattn_missing)
    list(JOIN _kattn_missing "; " _kattn_missing)
    message(FATAL_ERROR "KokkosAttn_ENABLE_TPL_CUDNN=ON needs ${_kattn_missing} "
                        "(or -DKokkosAttn_ENABLE_TPL_CUDNN=OFF)")
  endif()
  message(STATUS "KokkosAttn: cuDNN ${KokkosAttn_CUDNN_LIBRARY}, cudnn-frontend "
                 "${KokkosAttn_CUDNN_FRONTEND_DIR}")
elseif(KokkosAttn_ENABLE_CUDA)
  message(STATUS "KokkosAttn: cuDNN backend off (cuDNN: ${KokkosAttn_CUDNN_LIBRARY}, "
                 "cudnn-frontend: ${KokkosAttn_CUDNN_FRONTEND_DIR})")
endif()
