// The version headers only: the whole frontend is not needed for its version macros.
#include <cudnn.h>
#include <cudnn_frontend_version.h>

#include <cstddef>
#include <string>

#include "cudnn/cudnn_graph.hpp"

namespace kattn::cudnn::detail {

std::string library_versions() {
  const std::size_t v = cudnnGetVersion();
  std::string s = "cuDNN " + std::to_string(v / 10000) + "." + std::to_string(v % 10000 / 100) +
                  "." + std::to_string(v % 100) + " (runtime; built against " +
                  std::to_string(CUDNN_MAJOR) + "." + std::to_string(CUDNN_MINOR) + "." +
                  std::to_string(CUDNN_PATCHLEVEL) + "), cudnn-frontend " +
                  std::to_string(CUDNN_FRONTEND_MAJOR_VERSION) + "." +
                  std::to_string(CUDNN_FRONTEND_MINOR_VERSION) + "." +
                  std::to_string(CUDNN_FRONTEND_PATCH_VERSION);
  return s;
}

} // namespace kattn::cudnn::detail
