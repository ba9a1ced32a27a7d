#include "kokkos_common/layout_copy.hpp"

#include <cstdint>
#include <string>

#include "kokkos_common/kokkos_target.hpp"
#include "kokkos_common/layout_copy_kernel.hpp"
#include "kokkosattn/errors.hpp"

namespace kattn::kokkos_common {
namespace {

template <class T>
detail::CopyArgs<T> args_of(const Tensor& src, const Tensor& dst) {
  detail::CopyArgs<T> a{static_cast<const T*>(src.data), static_cast<T*>(dst.data), {}, {}, {}};
  const int pad = Tensor::max_rank - src.rank; // leading dimensions of extent 1
  for (int d = 0; d < Tensor::max_rank; ++d) {
    const bool given = d >= pad;
    const auto i = static_cast<std::size_t>(d - pad);
    a.extent[d] = given ? src.extent[i] : 1;
    a.src_stride[d] = given ? src.stride[i] : 0;
    a.dst_stride[d] = given ? dst.stride[i] : 0;
  }
  return a;
}

template <class ExecSpace>
void copy_on(const ExecSpace& exec, const Tensor& src, const Tensor& dst) {
  switch (size_bytes(src.dtype)) {
  case 1:
    return detail::copy_elements(exec, args_of<std::uint8_t>(src, dst));
  case 2:
    return detail::copy_elements(exec, args_of<std::uint16_t>(src, dst));
  case 4:
    return detail::copy_elements(exec, args_of<std::uint32_t>(src, dst));
  case 8:
    return detail::copy_elements(exec, args_of<std::uint64_t>(src, dst));
  default:
    throw InvalidArgument("layout copy: unsupported element size " +
                          std::to_string(size_bytes(src.dtype)) + " of dtype " +
                          std::string(to_string(src.dtype)));
  }
}

} // namespace

void copy_tensor(const ExecContext& x, const Tensor& src, const Tensor& dst) {
  if (src.dtype != dst.dtype || src.rank != dst.rank || src.extent != dst.extent ||
      src.space != dst.space)
    throw InvalidArgument("layout copy: expected tensors of one dtype, shape and memory space, "
                          "got " +
                          std::string(to_string(src.dtype)) + src.shape_string() + " in " +
                          std::string(to_string(src.space)) + " and " +
                          std::string(to_string(dst.dtype)) + dst.shape_string() + " in " +
                          std::string(to_string(dst.space)));
  if (src.rank < 1 || src.rank > Tensor::max_rank || src.data == nullptr || dst.data == nullptr)
    throw InvalidArgument("layout copy: expected tensors of rank 1 to 4 with data, got rank " +
                          std::to_string(src.rank));
  on_target("layout copy", x, [&](const auto& exec) { copy_on(exec, src, dst); });
}

} // namespace kattn::kokkos_common
