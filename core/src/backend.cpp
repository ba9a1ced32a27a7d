#include "kokkosattn/backend.hpp"
#include "kokkosattn/problem.hpp"

namespace kattn {

std::string_view to_string(Backend b) {
  switch (b) {
  case Backend::automatic:
    return "auto";
  case Backend::reference:
    return "reference";
  case Backend::naive:
    return "naive";
  case Backend::portable:
    return "portable";
  case Backend::cudnn:
    return "cudnn";
  case Backend::cuda:
    return "cuda";
  case Backend::hip:
    return "hip";
  }
  return "unknown";
}

std::optional<Backend> parse_backend(std::string_view name) {
  for (Backend b : {Backend::automatic, Backend::reference, Backend::naive, Backend::portable,
                    Backend::cudnn, Backend::cuda, Backend::hip})
    if (to_string(b) == name)
      return b;
  return std::nullopt;
}

std::string_view to_string(Alignment a) {
  switch (a) {
  case Alignment::top_left:
    return "top_left";
  case Alignment::bottom_right:
    return "bottom_right";
  }
  return "unknown";
}

} // namespace kattn
