// KokkosAttn::append_kv's copy (KokkosAttn_KvAppend.hpp): every element of the new keys and values
// to its row of the cache, one Kokkos kernel per tensor on the context's execution space, then
// seqlens_k += T_new. Elements are moved as words of their size, so any dtype of 1, 2, 4 or 8
// bytes copies bit for bit.
#include <Kokkos_Core.hpp>

#include <KokkosAttn_KvAppend.hpp>

#include <cstdint>
#include <string>

#include "kokkos_common/kokkos_target.hpp"
#include "kokkos_common/light_launch.hpp"
#include "kokkosattn/dtype.hpp"
#include "kokkosattn/errors.hpp"

namespace {

using kattn::Tensor;
using Index = std::int64_t;

struct Strides4 {
  Index s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  explicit Strides4(const Tensor& t)
      : s0(t.stride[0]), s1(t.stride[1]), s2(t.stride[2]), s3(t.stride[3]) {}
};

// Where new key t of sequence b goes: its page's row (paged) or row len + t; -1 past the room or
// in a page outside [0, num_pages) (device-resident lengths and tables validation cannot read).
struct Destination {
  const std::int32_t* lens = nullptr;
  Index lens_s = 0;
  const std::int32_t* pages = nullptr; // nullptr: contiguous
  Index pages_sb = 0, pages_sp = 0, page_size = 1, num_pages = 0;
  Index S = 0;
  KOKKOS_INLINE_FUNCTION Index row(Index b, Index t, Index& lead) const {
    const Index j = static_cast<Index>(lens[b * lens_s]) + t;
    if (j < 0 || j >= S)
      return -1;
    if (pages == nullptr) {
      lead = b;
      return j;
    }
    const Index page = pages[b * pages_sb + (j / page_size) * pages_sp];
    if (page < 0 || page >= num_pages)
      return -1;
    lead = page;
    return j % page_size;
  }
};

template <class Word, class ExecSpace>
void copy_new(const ExecSpace& exec, const char* name, const Tensor& src, const Tensor& dst,
              const Destination& to, Index B, Index T, Index K, Index D) {
  const Word* s = static_cast<const Word*>(src.data);
  Word* d = static_cast<Word*>(dst.data);
  const Strides4 ss(src), ds(dst);
  Kokkos::parallel_for(
      name,
      kattn::kokkos_common::light_launch(
          Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>(exec, 0, B * T * K * D)),
      KOKKOS_LAMBDA(const Index idx) {
        const Index f = idx % D, kh = (idx / D) % K, t = (idx / (D * K)) % T, b = idx / (D * K * T);
        Index lead = 0;
        const Index r = to.row(b, t, lead);
        if (r >= 0)
          d[lead * ds.s0 + r * ds.s1 + kh * ds.s2 + f * ds.s3] =
              s[b * ss.s0 + t * ss.s1 + kh * ss.s2 + f * ss.s3];
      });
}

template <class ExecSpace>
void run(const ExecSpace& exec, const kattn::KvAppend& a, const kattn::KvAppendDims& d) {
  Destination to;
  to.lens = static_cast<const std::int32_t*>(a.seqlens_k.data);
  to.lens_s = a.seqlens_k.stride[0];
  to.S = d.S;
  if (a.page_table.defined()) {
    to.pages = static_cast<const std::int32_t*>(a.page_table.data);
    to.pages_sb = a.page_table.stride[0];
    to.pages_sp = a.page_table.stride[1];
    to.page_size = d.page_size;
    to.num_pages = a.k_cache.extent[0];
  }
  const auto both = [&](auto word) {
    using Word = decltype(word);
    copy_new<Word>(exec, "KokkosAttn::append_kv::k", a.k_new, a.k_cache, to, d.B, d.T_new, d.K,
                   d.H);
    copy_new<Word>(exec, "KokkosAttn::append_kv::v", a.v_new, a.v_cache, to, d.B, d.T_new, d.K,
                   d.Hv);
  };
  switch (kattn::size_bytes(a.k_new.dtype)) {
  case 1:
    both(std::uint8_t{});
    break;
  case 2:
    both(std::uint16_t{});
    break;
  case 4:
    both(std::uint32_t{});
    break;
  default:
    both(std::uint64_t{});
    break;
  }
  // After both copies (stream order): they read the lengths this grows.
  std::int32_t* lens = static_cast<std::int32_t*>(a.seqlens_k.data);
  const Index ls = to.lens_s, T = d.T_new, S = d.S;
  Kokkos::parallel_for(
      "KokkosAttn::append_kv::seqlens_k",
      kattn::kokkos_common::light_launch(
          Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>(exec, 0, d.B)),
      KOKKOS_LAMBDA(const Index b) {
        const Index grown = static_cast<Index>(lens[b * ls]) + T;
        lens[b * ls] = static_cast<std::int32_t>(grown < S ? grown : S);
      });
}

} // namespace

namespace KokkosAttn::Impl {

void append_kv(const kattn::ExecContext& x, const kattn::KvAppend& a) {
  const kattn::KvAppendDims d = kattn::validate(a);
  namespace kc = kattn::kokkos_common;
  const kc::Target target = kc::resolve(x, "append_kv");
  if (!target.why_not.empty())
    throw kattn::Unsupported(target.why_not);
  if (a.k_new.space != target.memory)
    throw kattn::Unsupported("append_kv: k_new is in " +
                             std::string(kattn::to_string(a.k_new.space)) + " memory, which the " +
                             target.space + " execution space does not read (it reads " +
                             std::string(kattn::to_string(target.memory)) + " memory)");
  if (d.B * d.T_new == 0)
    return;
  kc::on_target("append_kv", x, [&](const auto& exec) { run(exec, a, d); });
}

} // namespace KokkosAttn::Impl
