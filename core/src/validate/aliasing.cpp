// Outputs and memory: no output may write one element through two indices, overlap another
// output, or overlap an input (docs/semantics.md, rule errors). Tiled backends read inputs
// while writing outputs, so any overlap gave results that differed by backend.
#include <array>
#include <cstdint>
#include <sstream>
#include <utility>

#include "checks.hpp"
#include "kokkosattn/dtype.hpp"

namespace kattn::validation {
namespace {

struct Bytes {
  std::uintptr_t lo, hi; // [lo, hi)
};

// The bytes from the first element to one past the last (check_addressable made it fit).
Bytes bytes_of(const Tensor& t) {
  const auto lo = reinterpret_cast<std::uintptr_t>(t.data);
  return {lo, lo + static_cast<std::uintptr_t>(byte_span(t).value_or(0))};
}

// "[0x..., 0x...)" (one stream: GCC 12's -Wrestrict misfires on "[" + std::string&&).
std::string range(const Bytes& b) {
  std::ostringstream os;
  os << "[0x" << std::hex << b.lo << ", 0x" << b.hi << ")";
  return os.str();
}

} // namespace

// Distinct indices must reach distinct elements. Sorted by stride, each dim of extent > 1 must
// step past everything the smaller ones reach: true of every layout a View or an array
// library allocates (row- or column-major, heads-major, padded rows, slices of them).
void check_no_self_alias(const Tensor& t, const std::string& name) {
  if (!has_elements(t))
    return; // nothing is written through it
  std::array<int, Tensor::max_rank> dims{};
  int n = 0;
  for (int d = 0; d < t.rank; ++d)
    if (ext(t, d) > 1)
      dims[static_cast<std::size_t>(n++)] = d;
  for (int i = 1; i < n; ++i) // insertion sort by stride (rank <= 4)
    for (int j = i; j > 0 && strd(t, dims[std::size_t(j)]) < strd(t, dims[std::size_t(j - 1)]); --j)
      std::swap(dims[std::size_t(j)], dims[std::size_t(j - 1)]);
  std::int64_t reach = 0; // largest offset the smaller dims reach
  for (int i = 0; i < n; ++i) {
    const int d = dims[static_cast<std::size_t>(i)];
    if (strd(t, d) <= reach)
      fail(name +
           ": expected strides that give every element its own address (an output must "
           "not alias itself: sorted by size, each stride larger than the offsets the "
           "smaller ones reach), got strides " +
           t.stride_string() + " for shape " + t.shape_string());
    reach += (ext(t, d) - 1) * strd(t, d);
  }
}

void check_disjoint(const std::vector<NamedTensor>& outputs,
                    const std::vector<NamedTensor>& inputs) {
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& o = *outputs[i].t;
    if (!o.defined())
      continue;
    const Bytes ob = bytes_of(o);
    const auto against = [&](const NamedTensor& other, const char* kind) {
      const Tensor& t = *other.t;
      if (!t.defined() || t.space != o.space)
        return;
      const Bytes tb = bytes_of(t);
      if (ob.lo < tb.hi && tb.lo < ob.hi)
        fail(std::string(outputs[i].name) + ": expected memory disjoint from " + kind + " " +
             other.name + ", got bytes " + range(ob) + " overlapping its " + range(tb));
    };
    for (std::size_t j = i + 1; j < outputs.size(); ++j)
      against(outputs[j], "output");
    for (const NamedTensor& in : inputs)
      against(in, "input");
  }
}

} // namespace kattn::validation
