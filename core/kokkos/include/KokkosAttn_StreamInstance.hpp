// The execution space instance on a caller's GPU stream, for the library's own calls that get a
// raw stream (the C API, raw-pointer ExecContexts): made once per stream and kept until
// Kokkos::finalize. Making one costs ~40 us on an H200, four times a whole dispatch at the
// codelab shape (benchmarks/results/h200-2026-12-02-c-overhead.md), and destroying it frees its
// internals again (cudaFree). It wraps the handle's value, so a stream the caller destroyed and
// one created later at the same address share it.
#pragma once

#include <Kokkos_Core.hpp>

#include <map>
#include <mutex>

namespace KokkosAttn::Impl {

template <class Space, class Stream>
Space instance_on_stream(Stream stream) {
  static std::mutex mutex;
  static std::map<Stream, Space>* cache = nullptr;
  const std::lock_guard<std::mutex> lock(mutex);
  if (cache == nullptr) {
    cache = new std::map<Stream, Space>();
    Kokkos::push_finalize_hook([] {
      const std::lock_guard<std::mutex> l(mutex);
      delete cache;
      cache = nullptr;
    });
  }
  auto it = cache->find(stream);
  if (it == cache->end())
    it = cache->emplace(stream, Space(stream)).first;
  return it->second;
}

} // namespace KokkosAttn::Impl
