#include "kokkosattn/registry.hpp"

#include <algorithm>

#include "KokkosAttn_config.hpp"
#include "kokkosattn/builtin_backends.hpp"
#include "kokkosattn/errors.hpp"

namespace kattn {

void Registry::add(std::unique_ptr<BackendImpl> impl) {
  if (!impl)
    throw InvalidArgument("Registry::add: expected a backend, got nullptr");
  const Backend id = impl->id();
  if (id == Backend::automatic)
    throw InvalidArgument("Registry::add: expected a concrete backend id, got auto");
  auto same = std::find_if(impls_.begin(), impls_.end(),
                           [id](const std::unique_ptr<BackendImpl>& b) { return b->id() == id; });
  if (same != impls_.end())
    *same = std::move(impl);
  else
    impls_.push_back(std::move(impl));
}

const BackendImpl* Registry::find(Backend b) const {
  for (const auto& impl : impls_)
    if (impl->id() == b)
      return impl.get();
  return nullptr;
}

std::vector<const BackendImpl*> Registry::all() const {
  std::vector<const BackendImpl*> v;
  v.reserve(impls_.size());
  for (const auto& impl : impls_)
    v.push_back(impl.get());
  return v;
}

const Registry& default_registry() {
  // Function-local static: built once, thread-safe since C++11.
  static const Registry registry = [] {
    Registry r;
    r.add(reference::make_reference_backend());
    r.add(naive::make_naive_backend());
#if KOKKOSATTN_HAS_CUDA_KERNELS
    r.add(cuda::make_cuda_backend());
#endif
#if KOKKOSATTN_HAS_CUDNN
    r.add(cudnn::make_cudnn_backend());
#endif
#if KOKKOSATTN_HAS_HIP
    r.add(hip_kernels::make_hip_backend());
#endif
    r.add(portable::make_portable_backend());
    return r;
  }();
  return registry;
}

} // namespace kattn
