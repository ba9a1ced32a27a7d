#include "kokkosattn/registry.hpp"

#include <algorithm>

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

} // namespace kattn
