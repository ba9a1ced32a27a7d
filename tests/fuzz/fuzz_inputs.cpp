#include "fuzz_inputs.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <utility>

namespace kattn::fuzz {
namespace {

constexpr std::size_t kMaxBuffer = std::size_t{1} << 18; // larger tensors get fake addresses
constexpr std::int64_t i64max = std::numeric_limits<std::int64_t>::max();

class Drawer {
public:
  Drawer(FuzzedDataProvider& f, Inputs& in)
      : f_(f), in_(in), rng_(f.ConsumeIntegral<std::uint32_t>()) {}

  bool chance(unsigned percent) { return f_.ConsumeIntegralInRange<unsigned>(0, 99) < percent; }
  std::int64_t range(std::int64_t lo, std::int64_t hi) {
    return f_.ConsumeIntegralInRange<std::int64_t>(lo, hi);
  }
  template <class T, std::size_t n>
  T pick(const T (&v)[n]) {
    return v[f_.ConsumeIntegralInRange<std::size_t>(0, n - 1)];
  }

  // Anything an int64 field may hold, edge values first.
  std::int64_t wild() {
    switch (range(0, 5)) {
    case 0:
      return range(-3, 3);
    case 1:
      return i64max - range(0, 2);
    case 2:
      return std::numeric_limits<std::int64_t>::min() + range(0, 2);
    case 3:
      return std::int64_t{1} << range(0, 62);
    case 4:
      return (std::int64_t{1} << range(0, 62)) - 1;
    default:
      return f_.ConsumeIntegral<std::int64_t>();
    }
  }
  double wild_double() {
    const double v[] = {0.0,
                        -0.0,
                        1.0,
                        -1.0,
                        0.125,
                        30.0,
                        1e-300,
                        1e300,
                        -1e300,
                        3.5e38,
                        std::numeric_limits<double>::infinity(),
                        -std::numeric_limits<double>::infinity(),
                        std::numeric_limits<double>::quiet_NaN()};
    return chance(50) ? pick(v) : f_.ConsumeFloatingPoint<double>();
  }

  // A tensor of these logical extents and dtype in some layout a caller may pass: row-major, a
  // permutation of the dims (heads-major, LayoutLeft), padded rows, a broadcast (zero) stride.
  Tensor shaped(std::vector<std::int64_t> ext, DType dtype) {
    Tensor t;
    t.rank = static_cast<int>(ext.size());
    t.dtype = dtype;
    for (int d = 0; d < t.rank; ++d)
      t.extent[std::size_t(d)] = ext[std::size_t(d)];
    std::vector<int> order(ext.size()); // innermost first
    for (std::size_t d = 0; d < order.size(); ++d)
      order[d] = t.rank - 1 - static_cast<int>(d);
    if (chance(30))
      std::reverse(order.begin(), order.end()); // LayoutLeft
    else if (chance(20) && order.size() >= 3)
      std::swap(order[1], order[2]); // heads-major
    const std::int64_t pad = chance(20) ? range(1, 3) : 0;
    std::int64_t s = 1;
    for (std::size_t i = 0; i < order.size(); ++i) {
      const auto d = std::size_t(order[i]);
      t.stride[d] = s;
      s *= std::max<std::int64_t>(t.extent[d], 1) + (i == 0 ? pad : 0);
    }
    if (chance(5) && t.rank > 0)
      t.stride[std::size_t(range(0, t.rank - 1))] = 0; // broadcast (valid for inputs only)
    return t;
  }

  // Sometimes anything: rank, an extent, a stride, the dtype, the memory space.
  void mutate(Tensor& t) {
    if (!chance(8))
      return;
    switch (range(0, 4)) {
    case 0:
      t.rank = static_cast<int>(range(-1, Tensor::max_rank + 1));
      break;
    case 1:
      if (t.rank > 0 && t.rank <= Tensor::max_rank)
        t.extent[std::size_t(range(0, t.rank - 1))] = wild();
      break;
    case 2:
      if (t.rank > 0 && t.rank <= Tensor::max_rank)
        t.stride[std::size_t(range(0, t.rank - 1))] = wild();
      break;
    case 3:
      t.dtype = static_cast<DType>(range(-1, 9));
      break;
    default:
      t.space = static_cast<MemorySpace>(range(0, 3));
    }
  }

  // Storage for t: a buffer of exactly its byte span when that is small, else a fake address
  // (then nothing may run the problem). Length tensors are read by validation itself: they
  // always get real storage, their extent cut down when needed.
  // lengths: an i32 [B] or [B+1] tensor; read: validation reads its data (lengths, the page
  // table), so it never gets a fake pointer.
  void place(Tensor& t, bool output, bool lengths, bool read = false) {
    read |= lengths;
    if (t.rank <= 0 || t.rank > Tensor::max_rank)
      return;
    if (lengths && (t.rank != 1 || t.extent[0] > 64 || t.stride[0] < 0 || t.stride[0] > 4)) {
      t.rank = 1;
      t.extent[0] = std::clamp<std::int64_t>(t.extent[0], 0, 64);
      t.stride[0] = 1;
    }
    __int128 end = 1;
    bool empty = false, bad = false;
    for (int d = 0; d < t.rank; ++d) {
      const std::int64_t e = t.extent[std::size_t(d)], s = t.stride[std::size_t(d)];
      empty |= e == 0;
      bad |= e < 0 || s < 0;
      if (e > 0)
        end += static_cast<__int128>(e - 1) * s;
    }
    const __int128 bytes = end * static_cast<__int128>(size_bytes(t.dtype));
    if (empty && !bad && chance(50)) {
      t.data = nullptr; // a zero-size View's pointer
      return;
    }
    if (bad || bytes > static_cast<__int128>(kMaxBuffer)) {
      if (read) {
        t.rank = 0; // (a caller cannot lie about the size of what validation reads)
        return;
      }
      t.data = reinterpret_cast<void*>(next_fake_);
      next_fake_ += std::uintptr_t{1} << 36;
      in_.runnable = false;
      return;
    }
    Buffer b;
    b.size = static_cast<std::size_t>(std::max<__int128>(bytes, 1));
    b.bytes.reset(new unsigned char[b.size]);
    b.output = output;
    fill(b, t.dtype);
    t.data = b.bytes.get();
    in_.buffers.push_back(std::move(b));
  }

  // Values: mostly N(0, 1) in the tensor's dtype (rare non-finite ones), raw bytes otherwise.
  void fill(Buffer& b, DType dtype) {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    const bool special = chance(5);
    const auto value = [&] {
      float v = normal(rng_);
      if (special && rng_() % 8 == 0)
        v = rng_() % 2 ? std::numeric_limits<float>::quiet_NaN()
                       : std::numeric_limits<float>::infinity();
      return v;
    };
    if (dtype == DType::f32) {
      for (std::size_t i = 0; i + 4 <= b.size; i += 4) {
        const float v = value();
        std::memcpy(&b.bytes[i], &v, 4);
      }
    } else if (dtype == DType::f64) {
      for (std::size_t i = 0; i + 8 <= b.size; i += 8) {
        const double v = value();
        std::memcpy(&b.bytes[i], &v, 8);
      }
    } else if (dtype == DType::f16 || dtype == DType::bf16) {
      for (std::size_t i = 0; i + 2 <= b.size; i += 2) {
        const float v = value();
        std::uint32_t u;
        std::memcpy(&u, &v, 4);
        const auto h =
            static_cast<std::uint16_t>(dtype == DType::bf16 ? u >> 16 : 0x3c00u ^ (u >> 22));
        std::memcpy(&b.bytes[i], &h, 2);
      }
    } else if (dtype == DType::boolean) {
      for (std::size_t i = 0; i < b.size; ++i)
        b.bytes[i] = static_cast<unsigned char>(rng_() % 4 != 0);
    } else {
      for (std::size_t i = 0; i < b.size; ++i)
        b.bytes[i] = static_cast<unsigned char>(rng_());
    }
  }

  // i32 lengths: offsets (packed) or per-batch lengths, mostly valid.
  void write_lengths(const Tensor& t, const std::vector<std::int64_t>& values) {
    if (t.rank != 1 || t.data == nullptr || t.dtype != DType::i32)
      return;
    for (std::int64_t i = 0; i < t.extent[0]; ++i) {
      std::int64_t v = i < static_cast<std::int64_t>(values.size()) ? values[std::size_t(i)] : 0;
      if (chance(3))
        v = range(-2, 12);
      const auto x = static_cast<std::int32_t>(v);
      std::memcpy(static_cast<unsigned char*>(t.data) + i * t.stride[0] * 4, &x, 4);
    }
  }

  // Row-major [B, slots] ids into an i32 rank-2 table, through its strides (as placed).
  void write_page_ids(const Tensor& t, const std::vector<std::int64_t>& ids) {
    if (t.rank != 2 || t.data == nullptr || t.dtype != DType::i32 || t.stride[0] < 0 ||
        t.stride[1] < 0 || t.extent[0] < 0 || t.extent[1] < 0 || t.extent[0] > 64 ||
        t.extent[1] > 64)
      return; // (wild extents over a small buffer by zero strides: the fill's bytes stay)
    for (std::int64_t b = 0; b < t.extent[0]; ++b)
      for (std::int64_t s = 0; s < t.extent[1]; ++s) {
        const std::size_t i = std::size_t(b * t.extent[1] + s);
        const auto x = static_cast<std::int32_t>(i < ids.size() ? ids[i] : range(-2, 6));
        std::memcpy(static_cast<unsigned char*>(t.data) + (b * t.stride[0] + s * t.stride[1]) * 4,
                    &x, 4);
      }
  }

  void options(Options& o) {
    if (chance(30))
      o.scale = wild_double();
    if (chance(15))
      o.softcap = chance(50) ? 30.0 : wild_double();
    o.causal = chance(30);
    const std::int64_t windows[] = {-1, 0, 1, 2, 5};
    if (chance(25))
      o.window_left = chance(80) ? pick(windows) : wild();
    if (chance(25))
      o.window_right = chance(80) ? pick(windows) : wild();
    if (chance(30))
      o.alignment = chance(90) ? Alignment::bottom_right : static_cast<Alignment>(range(2, 9));
    if (chance(10))
      o.dropout_p = chance(70) ? 0.25 : wild_double();
    o.dropout_seed = f_.ConsumeIntegral<std::uint64_t>();
    o.deterministic = chance(20);
    if (chance(30))
      o.backend = static_cast<Backend>(range(0, 8));
    o.allow_layout_copies = chance(80);
    o.allow_tf32 = chance(20);
  }

  void draw() {
    const DType dtypes[] = {DType::f32, DType::f64,  DType::f32,    DType::f64,
                            DType::f16, DType::bf16, DType::f8_e4m3};
    const DType dt = pick(dtypes);
    const std::int64_t B = range(0, 3), T = range(0, 6), S = range(0, 6);
    const std::int64_t heads[] = {0, 1, 2, 4};
    const std::int64_t N = pick(heads);
    const std::int64_t K = N == 0 ? range(0, 1) : (chance(50) ? N : (N % 2 == 0 ? N / 2 : 1));
    const std::int64_t H = range(1, 12), Hv = chance(70) ? H : range(1, 12);
    const bool packed = chance(20), padded = !packed && chance(20);
    // A paged KV cache (rule paged_kv): k/v [pages, page_size, K, dim] and a page table whose
    // ids are drawn in and out of range, with seqlens_k mostly given.
    const bool paged = !packed && chance(12);
    const std::int64_t pages = range(0, 4), page_size = range(0, 4), slots = range(0, 3);
    in_.backward = chance(30);

    ForwardProblem& p = in_.forward;
    Extras& e = p.extras;
    std::vector<std::int64_t> q_lens, k_lens, cu_q{0}, cu_k{0};
    std::int64_t total_q = 0, total_k = 0, longest_q = 0, longest_k = 0;
    for (std::int64_t b = 0; b < B; ++b) {
      q_lens.push_back(range(0, T));
      k_lens.push_back(range(0, S));
      total_q += q_lens.back();
      total_k += k_lens.back();
      longest_q = std::max(longest_q, q_lens.back());
      longest_k = std::max(longest_k, k_lens.back());
      cu_q.push_back(total_q);
      cu_k.push_back(total_k);
    }
    const auto main = [&](std::int64_t len, std::int64_t h, std::int64_t dim) {
      return packed ? std::vector<std::int64_t>{len, h, dim}
                    : std::vector<std::int64_t>{B, len, h, dim};
    };
    const std::int64_t tq = packed ? total_q : T, tk = packed ? total_k : S;
    p.q = shaped(main(tq, N, H), dt);
    p.k = paged ? shaped({pages, page_size, K, H}, dt) : shaped(main(tk, K, H), dt);
    p.v = paged ? shaped({pages, page_size, K, Hv}, dt) : shaped(main(tk, K, Hv), dt);
    std::vector<std::int64_t> page_ids;
    if (paged) {
      e.page_table = shaped({B, slots}, DType::i32);
      if (chance(85))
        e.seqlens_k = shaped({B}, DType::i32);
      for (std::int64_t b = 0; b < B; ++b)
        k_lens[std::size_t(b)] = range(0, slots * page_size + (chance(10) ? 1 : 0));
      for (std::int64_t i = 0; i < B * slots; ++i)
        page_ids.push_back(chance(90) ? range(0, std::max<std::int64_t>(pages - 1, 0))
                                      : range(-2, pages + 2));
    }
    p.out = shaped(main(tq, N, Hv), dt);
    if (chance(60))
      e.lse = packed ? shaped({N, total_q}, DType::f32) : shaped({B, N, T}, DType::f32);
    if (!packed && chance(20))
      e.bias =
          shaped({chance(30) ? 1 : B, chance(30) ? 1 : N, T, S}, chance(70) ? dt : pick(dtypes));
    if (!packed && chance(15))
      e.mask = shaped({chance(30) ? 1 : B, chance(30) ? 1 : N, T, S}, DType::boolean);
    if (chance(10))
      e.alibi_slopes = chance(50) ? shaped({N}, DType::f32) : shaped({B, N}, DType::f32);
    if (chance(10))
      e.sinks = shaped({N}, DType::f32);
    if (packed) {
      e.cu_seqlens_q = shaped({B + 1}, DType::i32);
      e.cu_seqlens_k = shaped({B + 1}, DType::i32);
      if (chance(20))
        e.max_seqlen_q = chance(70) ? longest_q : wild();
      if (chance(20))
        e.max_seqlen_k = chance(70) ? longest_k : wild();
    } else if (padded && !paged) {
      e.seqlens_q = shaped({B}, DType::i32);
      if (chance(70))
        e.seqlens_k = shaped({B}, DType::i32);
    }
    if (dt == DType::f8_e4m3 && chance(50)) {
      for (Tensor* t :
           {&e.fp8.descale_q, &e.fp8.descale_k, &e.fp8.descale_v, &e.fp8.scale_o, &e.fp8.amax_o})
        *t = shaped({1}, DType::f32);
    }
    options(p.options);

    BackwardProblem& bp = in_.problem;
    if (in_.backward) {
      bp.dout = shaped(main(tq, N, Hv), dt);
      bp.dq = shaped(main(tq, N, H), dt);
      bp.dk = shaped(main(tk, K, H), dt);
      bp.dv = shaped(main(tk, K, Hv), dt);
      if (e.bias.defined() && chance(50))
        bp.dbias = shaped({e.bias.extent[0], e.bias.extent[1], T, S}, e.bias.dtype);
      if (chance(e.sinks.defined() ? 50 : 3))
        bp.dsinks = shaped({N}, DType::f32);
    }
    const bool fwd_outputs = !in_.backward;
    for (Tensor* t : {&p.q,
                      &p.k,
                      &p.v,
                      &p.out,
                      &e.lse,
                      &e.bias,
                      &e.mask,
                      &e.alibi_slopes,
                      &e.sinks,
                      &e.fp8.descale_q,
                      &e.fp8.descale_k,
                      &e.fp8.descale_v,
                      &e.fp8.scale_o,
                      &e.fp8.amax_o,
                      &bp.dout,
                      &bp.dq,
                      &bp.dk,
                      &bp.dv,
                      &bp.dbias,
                      &bp.dsinks})
      mutate(*t);
    for (Tensor* t : {&e.cu_seqlens_q, &e.cu_seqlens_k, &e.seqlens_q, &e.seqlens_k, &e.page_table})
      mutate(*t);
    for (Tensor* t :
         {&p.q, &p.k, &p.v, &e.bias, &e.mask, &e.alibi_slopes, &e.sinks, &e.fp8.descale_q,
          &e.fp8.descale_k, &e.fp8.descale_v, &e.fp8.scale_o, &bp.dout})
      place(*t, false, false);
    place(e.page_table, false, false, /*read=*/true);
    place(p.out, fwd_outputs, false);
    place(e.lse, fwd_outputs, false);
    place(e.fp8.amax_o, fwd_outputs, false);
    for (Tensor* t : {&bp.dq, &bp.dk, &bp.dv, &bp.dbias, &bp.dsinks})
      place(*t, true, false);
    for (Tensor* t : {&e.cu_seqlens_q, &e.cu_seqlens_k, &e.seqlens_q, &e.seqlens_k})
      place(*t, false, true);
    write_lengths(e.cu_seqlens_q, cu_q);
    write_lengths(e.cu_seqlens_k, cu_k);
    write_lengths(e.seqlens_q, q_lens);
    write_lengths(e.seqlens_k, k_lens);
    write_page_ids(e.page_table, page_ids);
    alias();
    bp.forward = p;
  }

  // Sometimes one tensor's data on another's buffer: an output on anything must be refused (its
  // bytes overlap); an input on an input is valid and is only made when it fits the buffer.
  void alias() {
    if (!chance(8))
      return;
    ForwardProblem& p = in_.forward;
    Tensor* all[] = {&p.q, &p.k, &p.v, &p.out, &p.extras.lse, &in_.problem.dq};
    Tensor* a = pick(all);
    Tensor* b = pick(all);
    if (a == b || a->data == nullptr || b->data == nullptr)
      return;
    const bool b_input = in_.backward ? b != &in_.problem.dq : b != &p.out && b != &p.extras.lse;
    // Only where b's own buffer fits (a caller cannot lie about a buffer's size): an output on
    // an empty input is then valid, and written.
    const auto buf = std::find_if(in_.buffers.begin(), in_.buffers.end(),
                                  [&](const Buffer& x) { return x.bytes.get() == a->data; });
    const auto mine = std::find_if(in_.buffers.begin(), in_.buffers.end(),
                                   [&](const Buffer& x) { return x.bytes.get() == b->data; });
    if (buf == in_.buffers.end() || mine == in_.buffers.end() || mine->size > buf->size)
      return;
    b->data = a->data;
    if (!b_input) // a valid run may now write there (when a has no element to read)
      for (Buffer& x : in_.buffers)
        if (x.bytes.get() == a->data)
          x.output = true;
  }

private:
  FuzzedDataProvider& f_;
  Inputs& in_;
  std::mt19937 rng_;
  std::uintptr_t next_fake_ = std::uintptr_t{1} << 44;
};

} // namespace

void draw(FuzzedDataProvider& fdp, Inputs& in) {
  Drawer(fdp, in).draw();
}

std::string describe(const Inputs& in) {
  const ForwardProblem& p = in.backward ? in.problem.forward : in.forward;
  const Extras& e = p.extras;
  const std::pair<const char*, const Tensor*> all[] = {{"q", &p.q},
                                                       {"k", &p.k},
                                                       {"v", &p.v},
                                                       {"out", &p.out},
                                                       {"lse", &e.lse},
                                                       {"bias", &e.bias},
                                                       {"mask", &e.mask},
                                                       {"alibi", &e.alibi_slopes},
                                                       {"sinks", &e.sinks},
                                                       {"seqlens_q", &e.seqlens_q},
                                                       {"seqlens_k", &e.seqlens_k},
                                                       {"cu_q", &e.cu_seqlens_q},
                                                       {"cu_k", &e.cu_seqlens_k},
                                                       {"dout", &in.problem.dout},
                                                       {"dq", &in.problem.dq},
                                                       {"dk", &in.problem.dk},
                                                       {"dv", &in.problem.dv},
                                                       {"dbias", &in.problem.dbias},
                                                       {"dsinks", &in.problem.dsinks}};
  std::ostringstream os;
  os << (in.backward ? "backward" : "forward") << "\n";
  for (const auto& [name, t] : all)
    if (t->rank != 0)
      os << "  " << name << ": rank " << t->rank << " " << t->shape_string() << " strides "
         << t->stride_string() << " " << to_string(t->dtype) << " " << to_string(t->space) << " at "
         << t->data << "\n";
  const Options& o = p.options;
  os << "  options: causal " << o.causal << " window " << o.window_left << " " << o.window_right
     << " alignment " << static_cast<int>(o.alignment) << " scale "
     << (o.scale ? std::to_string(*o.scale) : "default") << " softcap " << o.softcap << " dropout "
     << o.dropout_p << "\n";
  for (std::size_t i = 0; i < in.buffers.size(); ++i)
    os << "  buffer " << i << ": " << static_cast<const void*>(in.buffers[i].bytes.get()) << " "
       << in.buffers[i].size << " bytes" << (in.buffers[i].output ? " (output)" : "") << "\n";
  return os.str();
}

std::vector<std::vector<unsigned char>> snapshot(const Inputs& in) {
  std::vector<std::vector<unsigned char>> s;
  for (const Buffer& b : in.buffers)
    s.emplace_back(b.bytes.get(), b.bytes.get() + b.size);
  return s;
}

} // namespace kattn::fuzz
