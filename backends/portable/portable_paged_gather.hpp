// A paged KV cache in the portable backend (docs/semantics.md, paged_kv): each sequence's keys
// are gathered from their pages into contiguous [B, S, K, H] / [B, S, K, Hv] scratch in the
// execution space's memory, then the usual forward runs on it. One place for the attention's
// arithmetic (the kernels never see a page table) at the price of one copy of the keys that the
// sequences hold (B * S * K * (H + Hv) elements of scratch, S = max_pages_per_seq * page_size).
// A correctness path: decode at the bandwidth limit needs a kernel that reads the pages itself
// (cuda's split-KV decode kernel, cuda/decode/). Included only by portable_run_impl.hpp.
#pragma once

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <exception>
#include <string>

#include "kokkos_common/kokkos_scalar.hpp"
#include "kokkosattn/detail/checked_size.hpp"
#include "kokkosattn/errors.hpp"
#include "portable/portable_params.hpp"

namespace kattn::portable::detail {

// The page table as the gather reads it: i32 [B, max_pages] with its strides.
struct PageTable {
  const std::int32_t* data = nullptr;
  Index sb = 0, sp = 0;
  Index pages = 0;     // max_pages_per_seq
  Index page_size = 1; // keys per page
  Index num_pages = 0; // pages in the cache (k's dim 0)
};

// Copies key j of every sequence b (j < seqlens_k[b], clamped to [0, S]) from its page of the
// cache `src` ([num_pages, page_size, K, D] through its strides) into dst [B, S, K, D] row-major.
// Keys past a sequence's length get 0 (masked, but multiplied by a probability of 0: never NaN);
// a key whose page id is outside [0, num_pages) (a page table in device memory, which validation
// cannot read) gets NaN and reads no memory, so the rows that see it come out NaN.
template <class ExecSpace, class T>
void gather_side(const ExecSpace& exec, const char* name, const Rows<const T>& src, T* dst,
                 const PageTable& pt, const Ints& seqlens_k, Index B, Index S, Index K, Index D) {
  using Traits = KokkosAttn::Impl::scalar_traits<T>;
  using Acc = typename Traits::acc;
  // Row (b, j, kh) of dst: its page lookup, then D elements. On a host space one work item copies
  // a whole row (the index arithmetic and the lookup once per row: per element they made a paged
  // decode step 9-10x slower than a contiguous one in the demo); on a GPU one thread per element,
  // so that neighbouring threads read neighbouring elements.
  constexpr bool per_row =
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename ExecSpace::memory_space>::accessible;
  const Index chunk = per_row ? D : 1;
  Kokkos::parallel_for(
      name,
      Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>(exec, 0, B * S * K * D / chunk),
      KOKKOS_LAMBDA(const Index item) {
        const Index idx0 = item * chunk;
        const Index f0 = idx0 % D, row = idx0 / D;
        const Index kh = row % K, j = (row / K) % S, b = row / (K * S);
        const Index len = Kokkos::clamp(seqlens_k[b], Index(0), S);
        T* out = dst + idx0;
        if (j >= len) {
          for (Index f = 0; f < chunk; ++f)
            out[f] = Traits::store(Acc(0));
          return;
        }
        const Index page = pt.data[b * pt.sb + (j / pt.page_size) * pt.sp];
        if (page < 0 || page >= pt.num_pages) {
          for (Index f = 0; f < chunk; ++f)
            out[f] = Traits::store(Kokkos::Experimental::quiet_NaN_v<Acc>);
          return;
        }
        const T* in = src.data + src.at(page, j % pt.page_size, kh, f0);
        for (Index f = 0; f < chunk; ++f)
          out[f] = in[f * src.sd];
      });
}

// Runs `run(flat, flat_dims)` on the problem with its paged k and v gathered into contiguous
// scratch; fences exec before the scratch is freed.
template <class ExecSpace, class T, class Run>
void with_gathered_pages(const ExecSpace& exec, const ForwardProblem& p, const Dims& d, Run&& run) {
  using Mem = typename ExecSpace::memory_space;
  const Tensor& table = p.extras.page_table;
  PageTable pt;
  pt.data = static_cast<const std::int32_t*>(table.data);
  pt.sb = table.stride[0];
  pt.sp = table.stride[1];
  pt.pages = table.extent[1];
  pt.page_size = d.page_size;
  pt.num_pages = p.k.extent[0];
  const auto bytes = checked_product(
      {d.B, d.S, d.K, std::max(d.H, d.Hv), static_cast<std::int64_t>(2 * sizeof(T))});
  if (!bytes)
    throw Unsupported("portable: the contiguous copy of the paged KV cache (B * S * K * (H + Hv) "
                      "elements, S = max_pages_per_seq * page_size = " +
                      std::to_string(d.S) + ") does not fit in 64 bits");
  Kokkos::View<T*, Mem> kd, vd;
  try {
    kd = decltype(kd)(
        Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "KokkosAttn::portable::paged_k"),
        d.B * d.S * d.K * d.H);
    vd = decltype(vd)(
        Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "KokkosAttn::portable::paged_v"),
        d.B * d.S * d.K * d.Hv);
  } catch (const std::exception& e) {
    throw BackendFailure("portable: could not allocate the contiguous copy of the paged KV cache "
                         "(B * S * K * (H + Hv) elements, S = max_pages_per_seq * page_size = " +
                         std::to_string(d.S) + "): " + e.what());
  }
  const Ints lens = make_common(p, d).seqlens_k;
  // (make_rows' batched form: dims page, row, head, feature.)
  gather_side(exec, "KokkosAttn::portable::paged_gather_k", make_rows<const T>(p.k, false),
              kd.data(), pt, lens, d.B, d.S, d.K, d.H);
  gather_side(exec, "KokkosAttn::portable::paged_gather_v", make_rows<const T>(p.v, false),
              vd.data(), pt, lens, d.B, d.S, d.K, d.Hv);
  ForwardProblem flat = p;
  flat.extras.page_table = Tensor();
  flat.k = Tensor::contiguous(kd.data(), p.k.dtype, {d.B, d.S, d.K, d.H}, p.k.space);
  flat.v = Tensor::contiguous(vd.data(), p.v.dtype, {d.B, d.S, d.K, d.Hv}, p.v.space);
  Dims flat_dims = d;
  flat_dims.paged = false;
  flat_dims.page_size = 0;
  run(flat, flat_dims);
  exec.fence("KokkosAttn::portable::forward: paged KV done"); // before kd, vd are freed
}

} // namespace kattn::portable::detail
