#include "decode_problem.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <tuple>

#include "element_convert.hpp"
#include "host_problem.hpp"

namespace codelab {
namespace {

using Exec = Kokkos::DefaultExecutionSpace;
using Mem = Exec::memory_space;
using Host = Kokkos::HostSpace;
using I64 = std::int64_t;

kattn::Options decode_options() {
  kattn::Options o;
  o.causal = true;
  o.alignment = kattn::Alignment::bottom_right; // the new token is the last: it sees every key
  return o;
}

// Elements as stored: f32 as float, bf16 as its 16 bits (std::uint16_t), which
// KokkosAttn::as_tensor(view, DType::bf16) reads as bf16: a host-only Kokkos has no bf16 View
// element type (bhalf_t is float there), and the CPU backends serve bf16.
template <class Store>
class Impl final : public DecodeProblem {
  template <class Space, class... Traits>
  using V4 = Kokkos::View<Store****, Kokkos::LayoutRight, Space, Traits...>;
  using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
  using Lens = Kokkos::View<std::int32_t*, Mem>;

public:
  explicit Impl(const DecodeShape& s)
      : DecodeProblem(s), per_seq_((s.S + s.page - 1) / s.page), row_(I64(s.K) * s.H),
        k_all_("k", s.dtype, {s.B, s.S, s.K, s.H}), v_all_("v", s.dtype, {s.B, s.S, s.K, s.H}) {
    k_all_.fill_normal(2);
    v_all_.fill_normal(3);
    for (long i = 0; i < long(v_all_.tensor().numel()); ++i)
      max_v_ = std::max(max_v_, double(std::abs(load_element(v_all_.tensor().data, s.dtype, i))));
    // Shuffled page ids: a sequence's pages lie anywhere in the pool, as after a serving
    // engine's allocations and frees.
    table_.resize(std::size_t(s.B * per_seq_));
    std::iota(table_.begin(), table_.end(), 0);
    std::shuffle(table_.begin(), table_.end(), std::mt19937(7));
    page_table_ = decltype(page_table_)("page_table", s.B, per_seq_);
    Kokkos::deep_copy(page_table_,
                      Kokkos::View<const std::int32_t**, Kokkos::LayoutRight, Host, Unmanaged>(
                          table_.data(), s.B, per_seq_));
    held_paged_ = Lens("seqlens_k_paged", s.B);
    held_cont_ = Lens("seqlens_k", s.B);
    fill_caches(k_all_, k_cont_, k_pages_);
    fill_caches(v_all_, v_cont_, v_pages_);
    for (int t = 0; t < s.steps; ++t) {
      q_host_.emplace_back("q", s.dtype, std::initializer_list<I64>{s.B, 1, s.N, s.H});
      q_host_.back().fill_normal(100u + unsigned(t));
      q_.push_back(to_device(q_host_.back(), s.N));
      k_new_.push_back(new_token(k_all_, t));
      v_new_.push_back(new_token(v_all_, t));
    }
    out_paged_ = V4<Mem>("out_paged", s.B, 1, s.N, s.H);
    out_cont_ = V4<Mem>("out", s.B, 1, s.N, s.H);
  }

  void restart() override {
    const std::vector<std::int32_t> held(std::size_t(shape_.B), shape_.S - shape_.steps);
    const Kokkos::View<const std::int32_t*, Host, Unmanaged> h(held.data(), held.size());
    Kokkos::deep_copy(exec_, held_paged_, h);
    Kokkos::deep_copy(exec_, held_cont_, h);
    exec_.fence(); // `held` goes out of scope
  }

  void step(bool paged, int t) override {
    kattn::KvAppend a;
    a.k_new = tensor(k_new_[std::size_t(t)]);
    a.v_new = tensor(v_new_[std::size_t(t)]);
    a.k_cache = tensor(paged ? k_pages_ : k_cont_);
    a.v_cache = tensor(paged ? v_pages_ : v_cont_);
    a.seqlens_k = KokkosAttn::as_tensor(paged ? held_paged_ : held_cont_);
    if (paged)
      a.page_table = KokkosAttn::as_tensor(page_table_);
    KokkosAttn::append_kv(exec_, a);
    KokkosAttn::sdpa(exec_, problem(paged, t));
  }

  void fence() override { exec_.fence(); }

  std::vector<float> output(bool paged) override {
    const auto h = Kokkos::create_mirror_view_and_copy(Host(), paged ? out_paged_ : out_cont_);
    std::vector<float> out(h.size());
    for (std::size_t i = 0; i < out.size(); ++i)
      out[i] = load_element(h.data(), shape_.dtype, long(i));
    return out;
  }

  std::vector<float> reference(int t) override {
    const DecodeShape& s = shape_;
    std::vector<std::int32_t> held(std::size_t(s.B), s.S - s.steps + t + 1);
    V4<Host> out("out_reference", s.B, 1, s.N, s.H);
    kattn::ForwardProblem p;
    p.q = q_host_[std::size_t(t)].tensor();
    p.k = k_all_.tensor(); // the padded problem: sequence b reads its first held[b] keys
    p.v = v_all_.tensor();
    p.out = KokkosAttn::as_tensor(out, s.dtype);
    p.options = decode_options();
    p.options.backend = kattn::Backend::reference;
    p.extras.seqlens_k = kattn::Tensor::contiguous(held.data(), kattn::DType::i32, {s.B});
    const Kokkos::DefaultHostExecutionSpace host;
    KokkosAttn::sdpa(host, p);
    host.fence();
    std::vector<float> r(out.size());
    for (std::size_t i = 0; i < r.size(); ++i)
      r[i] = load_element(out.data(), s.dtype, long(i));
    return r;
  }

  bool caches_complete(std::string* why_not) override {
    const DecodeShape& s = shape_;
    const auto fail = [&](const std::string& why) {
      *why_not = why;
      return false;
    };
    for (const Lens& held : {held_paged_, held_cont_}) {
      const auto h = Kokkos::create_mirror_view_and_copy(Host(), held);
      for (int b = 0; b < s.B; ++b)
        if (h(b) != s.S)
          return fail(std::string(held.label()) + "[" + std::to_string(b) + "] reads " +
                      std::to_string(h(b)) + ", expected " + std::to_string(s.S));
    }
    const I64 bytes = row_ * I64(sizeof(Store));
    for (const auto& [name, all, cont, pages] :
         {std::tuple{"key", &k_all_, &k_cont_, &k_pages_},
          std::tuple{"value", &v_all_, &v_cont_, &v_pages_}}) {
      const auto* want = static_cast<const unsigned char*>(all->tensor().data);
      const auto c = Kokkos::create_mirror_view_and_copy(Host(), *cont);
      const auto p = Kokkos::create_mirror_view_and_copy(Host(), *pages);
      for (I64 b = 0; b < s.B; ++b)
        for (I64 j = 0; j < s.S; ++j) {
          const unsigned char* w = want + (b * s.S + j) * bytes;
          const bool in_cont = std::memcmp(&c(b, j, 0, 0), w, std::size_t(bytes)) == 0;
          const bool in_pages =
              std::memcmp(&p(page_of(b, j), j % s.page, 0, 0), w, std::size_t(bytes)) == 0;
          if (!in_cont || !in_pages)
            return fail(std::string(in_cont ? "paged" : "contiguous") + " cache: the " + name +
                        " of sequence " + std::to_string(b) + " at position " + std::to_string(j) +
                        " differs from the generated one");
        }
    }
    return true;
  }

  DecodeServed served(bool paged) override {
    // What KokkosAttn::explain(exec, q, k, v, out, options, extras) prints, from the raw
    // problem: that overload takes typed Views only, and bf16 has none on a host-only Kokkos.
    const kattn::ForwardProblem p = problem(paged, shape_.steps - 1);
    const kattn::ExecContext x = KokkosAttn::make_exec_context(exec_);
    const kattn::Registry& r = kattn::default_registry();
    const kattn::Selection sel = kattn::select(r, p, x, kattn::LayoutCopy::available);
    DecodeServed d;
    d.backend = sel.empty ? "none" : std::string(kattn::to_string(sel.impl->id()));
    d.kernel = sel.kernel;
    d.selection = kattn::format_selection(sel);
    d.verdicts = kattn::explain(r, p, x, kattn::LayoutCopy::available);
    return d;
  }

  double max_abs_v() const override { return max_v_; }

private:
  kattn::Tensor tensor(const V4<Mem>& v) const { return KokkosAttn::as_tensor(v, shape_.dtype); }
  std::int32_t page_of(I64 b, I64 j) const {
    return table_[std::size_t(b * per_seq_ + j / shape_.page)];
  }

  kattn::ForwardProblem problem(bool paged, int t) const {
    kattn::ForwardProblem p;
    p.q = tensor(q_[std::size_t(t)]);
    p.k = tensor(paged ? k_pages_ : k_cont_);
    p.v = tensor(paged ? v_pages_ : v_cont_);
    p.out = tensor(paged ? out_paged_ : out_cont_);
    p.options = decode_options();
    p.extras.seqlens_k = KokkosAttn::as_tensor(paged ? held_paged_ : held_cont_);
    if (paged)
      p.extras.page_table = KokkosAttn::as_tensor(page_table_);
    return p;
  }

  V4<Mem> to_device(const HostTensor& h, I64 heads) const {
    const V4<Host, Unmanaged> src(static_cast<Store*>(h.tensor().data), shape_.B,
                                  h.tensor().extent[1], heads, shape_.H);
    V4<Mem> d(
        Kokkos::view_alloc(std::string(h.tensor().shape_string()), Kokkos::WithoutInitializing),
        src.extent(0), src.extent(1), src.extent(2), src.extent(3));
    Kokkos::deep_copy(d, src);
    return d;
  }

  // Step t's key (or value) of every sequence: row S - steps + t of the generated ones.
  V4<Mem> new_token(const HostTensor& all, int t) const {
    const DecodeShape& s = shape_;
    V4<Host> h("new_token", s.B, 1, s.K, s.H);
    const auto* src = static_cast<const Store*>(all.tensor().data);
    for (I64 b = 0; b < s.B; ++b)
      std::memcpy(&h(b, 0, 0, 0), src + (b * s.S + s.S - s.steps + t) * row_,
                  std::size_t(row_) * sizeof(Store));
    V4<Mem> d("new_token", s.B, 1, s.K, s.H);
    Kokkos::deep_copy(d, h);
    return d;
  }

  // Both caches hold the first S - steps keys of `all`; every other slot is NaN, so that a key
  // read before it is appended shows in the output.
  void fill_caches(const HostTensor& all, V4<Mem>& cont, V4<Mem>& pages) const {
    const DecodeShape& s = shape_;
    Store nan{};
    store_element(&nan, s.dtype, 0, std::numeric_limits<float>::quiet_NaN());
    V4<Host> c(Kokkos::view_alloc("cache_init", Kokkos::WithoutInitializing), s.B, s.S, s.K, s.H);
    V4<Host> p(Kokkos::view_alloc("pages_init", Kokkos::WithoutInitializing), s.B * per_seq_,
               s.page, s.K, s.H);
    Kokkos::deep_copy(c, nan);
    Kokkos::deep_copy(p, nan);
    const auto* src = static_cast<const Store*>(all.tensor().data);
    for (I64 b = 0; b < s.B; ++b)
      for (I64 j = 0; j < s.S - s.steps; ++j) {
        const Store* from = src + (b * s.S + j) * row_;
        std::memcpy(&c(b, j, 0, 0), from, std::size_t(row_) * sizeof(Store));
        std::memcpy(&p(page_of(b, j), j % s.page, 0, 0), from, std::size_t(row_) * sizeof(Store));
      }
    cont = V4<Mem>(Kokkos::view_alloc("cache", Kokkos::WithoutInitializing), s.B, s.S, s.K, s.H);
    pages = V4<Mem>(Kokkos::view_alloc("pages", Kokkos::WithoutInitializing), p.extent(0), s.page,
                    s.K, s.H);
    Kokkos::deep_copy(cont, c);
    Kokkos::deep_copy(pages, p);
  }

  I64 per_seq_, row_;               // pages per sequence; elements of one key row (K * H)
  std::vector<std::int32_t> table_; // [B, per_seq_]
  HostTensor k_all_, v_all_;        // [B, S, K, H]: every key and value the caches end with
  std::vector<HostTensor> q_host_;  // step t's query
  std::vector<V4<Mem>> q_, k_new_, v_new_;
  V4<Mem> k_pages_, v_pages_, k_cont_, v_cont_, out_paged_, out_cont_;
  Kokkos::View<std::int32_t**, Kokkos::LayoutRight, Mem> page_table_;
  Lens held_paged_, held_cont_;
  Exec exec_;
  double max_v_ = 0;
};

} // namespace

std::unique_ptr<DecodeProblem> DecodeProblem::make(const DecodeShape& shape) {
  if (shape.S <= shape.steps || shape.page < 1 || shape.B < 1)
    throw kattn::InvalidArgument("decode: expected S > " + std::to_string(shape.steps) +
                                 " keys, a page size and B >= 1");
  if (shape.dtype == kattn::DType::f32)
    return std::make_unique<Impl<float>>(shape);
  if (shape.dtype == kattn::DType::bf16)
    return std::make_unique<Impl<std::uint16_t>>(shape);
  throw kattn::InvalidArgument("decode: expected f32 or bf16, got " +
                               std::string(kattn::to_string(shape.dtype)));
}

} // namespace codelab
