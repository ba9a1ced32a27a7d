// A large, mostly untouched anonymous mapping: address space without memory. Pages cost nothing
// until written, so a tensor whose last element sits past 2^31 elements fits in a few pages.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace kattn::conformance {

class SparseMapping {
public:
  // nullptr (and `why` set) when the system refuses the mapping.
  static std::unique_ptr<SparseMapping> create(std::size_t bytes, std::string& why);
  ~SparseMapping();
  SparseMapping(const SparseMapping&) = delete;
  SparseMapping& operator=(const SparseMapping&) = delete;
  void* data() const { return data_; }

private:
  SparseMapping(void* d, std::size_t n) : data_(d), bytes_(n) {}
  void* data_;
  std::size_t bytes_;
};

} // namespace kattn::conformance
