#include "kokkosattn/tensor.hpp"

#include <sstream>

namespace kattn {

std::string_view to_string(MemorySpace m) {
  switch (m) {
  case MemorySpace::host:
    return "host";
  case MemorySpace::cuda_device:
    return "cuda_device";
  case MemorySpace::hip_device:
    return "hip_device";
  }
  return "unknown";
}

std::int64_t Tensor::numel() const {
  std::int64_t n = rank > 0 ? 1 : 0;
  for (int d = 0; d < rank; ++d)
    n *= extent[static_cast<std::size_t>(d)];
  return n;
}

Tensor Tensor::contiguous(void* data, DType dtype, std::initializer_list<std::int64_t> extents,
                          MemorySpace space) {
  Tensor t;
  t.dtype = dtype;
  t.space = space;
  t.rank = static_cast<int>(extents.size());
  std::size_t d = 0;
  for (std::int64_t e : extents)
    t.extent[d++] = e;
  return row_major_like(t, data);
}

bool is_row_major(const Tensor& t) {
  std::int64_t want = 1;
  for (int d = t.rank - 1; d >= 0; --d) {
    const auto i = static_cast<std::size_t>(d);
    // Extent-1 dimensions may carry any stride (Kokkos gives them the next one's product).
    if (t.extent[i] != 1 && t.stride[i] != want)
      return false;
    want *= t.extent[i];
  }
  return true;
}

Tensor row_major_like(const Tensor& t, void* data) {
  Tensor r = t;
  r.data = data;
  std::int64_t s = 1;
  for (int d = t.rank - 1; d >= 0; --d) {
    r.stride[static_cast<std::size_t>(d)] = s;
    s *= t.extent[static_cast<std::size_t>(d)];
  }
  return r;
}

static std::string join(const std::array<std::int64_t, Tensor::max_rank>& a, int rank) {
  std::ostringstream os;
  os << '[';
  for (int d = 0; d < rank; ++d)
    os << (d ? ", " : "") << a[static_cast<std::size_t>(d)];
  os << ']';
  return os.str();
}

std::string Tensor::shape_string() const {
  return rank ? join(extent, rank) : "(not given)";
}
std::string Tensor::stride_string() const {
  return rank ? join(stride, rank) : "(not given)";
}

} // namespace kattn
