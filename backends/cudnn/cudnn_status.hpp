// cuDNN / CUDA return codes turned into kattn::BackendFailure naming the call and the
// library's own error string.
#pragma once

#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <string>

#include "kokkosattn/errors.hpp"

namespace kattn::cudnn::detail {

inline void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw BackendFailure(std::string("cudnn backend: ") + what + " failed: " + cudaGetErrorName(e) +
                         " (" + cudaGetErrorString(e) + ")");
}

inline void check_cudnn(cudnnStatus_t s, const char* what) {
  if (s != CUDNN_STATUS_SUCCESS)
    throw BackendFailure(std::string("cudnn backend: ") + what +
                         " failed: " + cudnnGetErrorString(s));
}

} // namespace kattn::cudnn::detail
