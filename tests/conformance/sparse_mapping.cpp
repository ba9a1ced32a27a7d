#include "conformance/sparse_mapping.hpp"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>

namespace kattn::conformance {

std::unique_ptr<SparseMapping> SparseMapping::create(std::size_t bytes, std::string& why) {
  // MAP_NORESERVE: no swap reservation, so overcommit accounting does not refuse it either.
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    why = "mmap of " + std::to_string(bytes >> 20) +
          " MiB (MAP_NORESERVE) failed: " + std::strerror(errno);
    return nullptr;
  }
  return std::unique_ptr<SparseMapping>(new SparseMapping(p, bytes));
}

SparseMapping::~SparseMapping() {
  munmap(data_, bytes_);
}

} // namespace kattn::conformance
