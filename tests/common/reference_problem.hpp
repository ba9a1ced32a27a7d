// Test helper: builds a complete attention problem (inputs random, outputs poisoned) from a
// small Spec, with Dims resolved by hand, and runs the reference backend on it. Values are
// read and written in LOGICAL order (row-major over the tensor's extents), whatever the
// storage strides are.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <random>
#include <vector>

#include "common/host_tensor.hpp"
#include "kokkosattn/problem.hpp"
#include "reference/reference.hpp"

namespace kattn::test {

struct Spec {
  std::int64_t B = 2, T = 5, S = 7, N = 2, K = 1, H = 4, Hv = 4;
  DType dtype = DType::f64;
  Options opt;
  bool bias = false, bias_bcast_b = false, bias_bcast_n = false;
  DType bias_dtype = DType::f64;
  double bias_shift = 0.0; // added to every bias value (very negative logits)
  bool mask = false, mask_bcast_b = false, mask_bcast_n = false;
  double mask_density = 0.7;
  int alibi = 0;                   // 0: none, 1: slopes [N], 2: slopes [B, N]
  bool sinks = false;              // extras.sinks f32 [N] ~ N(0.5, 1), and dsinks in the backward
  std::vector<double> sink_values; // the sinks instead, when given (N of them)
  // Padded batches (batched layout): valid lengths per batch; empty = not given.
  // Packed varlen: the sequence lengths (both required; B is their size).
  std::vector<std::int64_t> q_lens, k_lens;
  bool packed = false;
  bool lse = true;
  bool heads_major = false; // q/k/v/out and their gradients stored [B, N, T, H] (strided view)
  std::int64_t out_pad = 0; // out stored with Hv + out_pad elements per head (strided view)
  // q, k, v (batched) stored [B, dim, heads, L]: the token dimension contiguous, as a B = 1
  // Kokkos LayoutLeft View ("sequence-major"); out and the gradients stay row-major.
  bool seq_major = false;
  double q_mult = 1.0, k_mult = 1.0;
  bool outliers = false;
  std::uint64_t seed = 1;
};

// Multi-index of logical element `idx` mapped through t's strides.
inline std::int64_t strided_offset(const Tensor& t, std::int64_t idx) {
  std::int64_t off = 0;
  for (int d = t.rank - 1; d >= 0; --d) {
    const auto u = static_cast<std::size_t>(d);
    off += (idx % t.extent[u]) * t.stride[u];
    idx /= t.extent[u];
  }
  return off;
}

inline std::vector<double> read_logical(const Tensor& t) {
  std::vector<double> r(static_cast<std::size_t>(t.numel()));
  for (std::int64_t i = 0; i < t.numel(); ++i)
    r[static_cast<std::size_t>(i)] = load_double(t, strided_offset(t, i));
  return r;
}

inline void write_logical(const Tensor& t, const std::vector<double>& v) {
  for (std::int64_t i = 0; i < t.numel(); ++i)
    store_double(t, strided_offset(t, i), v[static_cast<std::size_t>(i)]);
}

inline void poison(const Tensor& t) {
  if (!t.defined())
    return;
  for (std::int64_t i = 0; i < t.numel(); ++i)
    store_double(t, strided_offset(t, i), std::numeric_limits<double>::quiet_NaN());
}

inline bool all_finite(const std::vector<double>& v) {
  return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
}

// An owning storage buffer plus a logical view onto it (possibly heads-major strided).
struct Buffer {
  HostTensor storage;
  Tensor view;
};

// Logical extents {L0, L, heads, dim} (batched) or {L, heads, dim} (packed); heads_major
// stores heads before the token dimension and returns the permuted strided view; pad adds
// unused elements after each head's dim ones.
inline Buffer make_buffer(DType t, std::vector<std::int64_t> ext, bool heads_major,
                          std::int64_t pad = 0) {
  Buffer b;
  const std::size_t tok = ext.size() - 3; // index of the token dimension
  std::vector<std::int64_t> store = ext;
  store.back() += pad;
  if (heads_major)
    std::swap(store[tok], store[tok + 1]);
  b.storage = HostTensor(t, store);
  b.view = b.storage.view();
  if (heads_major || pad != 0) {
    for (std::size_t d = 0; d < ext.size(); ++d)
      b.view.extent[d] = ext[d];
  }
  if (heads_major)
    std::swap(b.view.stride[tok], b.view.stride[tok + 1]);
  return b;
}

// Batched {B, L, heads, dim} stored [B, dim, heads, L] (Spec::seq_major): the logical view's
// token stride is 1.
inline Buffer make_seq_major_buffer(DType t, const std::vector<std::int64_t>& ext) {
  Buffer b;
  b.storage = HostTensor(t, {ext[0], ext[3], ext[2], ext[1]});
  b.view = b.storage.view();
  const std::array<std::int64_t, 4> st = {b.view.stride[0], b.view.stride[3], b.view.stride[2],
                                          b.view.stride[1]};
  for (std::size_t d = 0; d < 4; ++d) {
    b.view.extent[d] = ext[d];
    b.view.stride[d] = st[d];
  }
  if (ext[0] == 1)
    b.view.stride[0] = 1; // as Kokkos' LayoutLeft gives it (a stride never used)
  return b;
}

class Attn {
public:
  explicit Attn(const Spec& s) : spec(s) {
    Spec& p = spec;
    if (p.packed)
      p.B = static_cast<std::int64_t>(p.q_lens.size());
    const bool padded = !p.packed && (!p.q_lens.empty() || !p.k_lens.empty());
    if (p.packed) {
      const auto longest = [](const std::vector<std::int64_t>& l) {
        return l.empty() ? std::int64_t{0} : *std::max_element(l.begin(), l.end());
      };
      p.T = longest(p.q_lens); // (no sequence: B = 0, an empty problem)
      p.S = longest(p.k_lens);
    }
    dims.B = p.B;
    dims.T = p.T;
    dims.S = p.S;
    dims.N = p.N;
    dims.K = p.K;
    dims.H = p.H;
    dims.Hv = p.Hv;
    dims.packed = p.packed;
    dims.padded = padded;
    dims.scale = p.opt.scale ? *p.opt.scale : 1.0 / std::sqrt(static_cast<double>(p.H));
    // docs/semantics.md: a window of T + S keys or more cuts nothing, and resolves to -1.
    const auto unbounded = [&](std::int64_t w) { return w >= p.T + p.S ? std::int64_t{-1} : w; };
    dims.window_left = unbounded(p.opt.window_left);
    dims.window_right = p.opt.causal ? 0 : unbounded(p.opt.window_right);
    // docs/semantics.md: a cap beyond float's range is off.
    dims.softcap = p.opt.softcap > std::numeric_limits<float>::max() ? 0.0 : p.opt.softcap;

    auto shape = [&](std::int64_t len, std::int64_t heads, std::int64_t dim) {
      return p.packed ? std::vector<std::int64_t>{len, heads, dim}
                      : std::vector<std::int64_t>{p.B, len, heads, dim};
    };
    std::int64_t tq = p.T, tk = p.S;
    if (p.packed) {
      tq = tk = 0;
      for (auto l : p.q_lens)
        tq += l;
      for (auto l : p.k_lens)
        tk += l;
    }
    if (p.seq_major && !p.packed) {
      q = make_seq_major_buffer(p.dtype, shape(tq, p.N, p.H));
      k = make_seq_major_buffer(p.dtype, shape(tk, p.K, p.H));
      v = make_seq_major_buffer(p.dtype, shape(tk, p.K, p.Hv));
    } else {
      q = make_buffer(p.dtype, shape(tq, p.N, p.H), p.heads_major);
      k = make_buffer(p.dtype, shape(tk, p.K, p.H), p.heads_major);
      v = make_buffer(p.dtype, shape(tk, p.K, p.Hv), p.heads_major);
    }
    out = make_buffer(p.dtype, shape(tq, p.N, p.Hv), p.heads_major, p.out_pad);
    dout = make_buffer(p.dtype, shape(tq, p.N, p.Hv), p.heads_major);
    dq = make_buffer(p.dtype, shape(tq, p.N, p.H), p.heads_major);
    dk = make_buffer(p.dtype, shape(tk, p.K, p.H), p.heads_major);
    dv = make_buffer(p.dtype, shape(tk, p.K, p.Hv), p.heads_major);
    fill_random(q.view, p.seed * 7 + 1, p.q_mult);
    fill_random(k.view, p.seed * 7 + 2, p.k_mult);
    fill_random(v.view, p.seed * 7 + 3, 1.0);
    fill_random(dout.view, p.seed * 7 + 4, 1.0);

    if (p.lse)
      lse = p.packed ? HostTensor(DType::f32, {p.N, tq}) : HostTensor(DType::f32, {p.B, p.N, p.T});
    if (p.bias) {
      bias =
          HostTensor(p.bias_dtype, {p.bias_bcast_b ? 1 : p.B, p.bias_bcast_n ? 1 : p.N, p.T, p.S});
      bias.fill_normal(p.seed * 7 + 5, 1.0, p.bias_shift);
      dbias = HostTensor(p.bias_dtype, {bias.view().extent[0], bias.view().extent[1], p.T, p.S});
    }
    if (p.mask) {
      mask = HostTensor(DType::boolean,
                        {p.mask_bcast_b ? 1 : p.B, p.mask_bcast_n ? 1 : p.N, p.T, p.S});
      std::mt19937_64 rng(p.seed * 7 + 6);
      std::bernoulli_distribution attend(p.mask_density);
      for (std::int64_t i = 0; i < mask.numel(); ++i)
        mask.set_int(i, attend(rng) ? 1 : 0);
    }
    if (p.alibi) {
      slopes = p.alibi == 1 ? HostTensor(DType::f32, {p.N}) : HostTensor(DType::f32, {p.B, p.N});
      std::mt19937_64 rng(p.seed * 7 + 7);
      std::uniform_real_distribution<double> u(0.05, 0.8);
      for (std::int64_t i = 0; i < slopes.numel(); ++i)
        slopes.set(i, u(rng));
    }
    if (p.sinks) {
      sinks = HostTensor(DType::f32, {p.N});
      sinks.fill_normal(p.seed * 7 + 8, 1.0, 0.5);
      for (std::size_t n = 0; n < p.sink_values.size(); ++n)
        sinks.set(static_cast<std::int64_t>(n), p.sink_values[n]);
      dsinks = HostTensor(DType::f32, {p.N});
    }
    if (p.packed) {
      cu_q = HostTensor(DType::i32, {p.B + 1});
      cu_k = HostTensor(DType::i32, {p.B + 1});
      std::int64_t aq = 0, ak = 0;
      for (std::int64_t b = 0; b <= p.B; ++b) {
        cu_q.set_int(b, aq);
        cu_k.set_int(b, ak);
        if (b < p.B) {
          aq += p.q_lens[static_cast<std::size_t>(b)];
          ak += p.k_lens[static_cast<std::size_t>(b)];
        }
      }
    } else {
      if (!p.q_lens.empty()) {
        seqlens_q = HostTensor(DType::i32, {p.B});
        for (std::int64_t b = 0; b < p.B; ++b)
          seqlens_q.set_int(b, p.q_lens[static_cast<std::size_t>(b)]);
      }
      if (!p.k_lens.empty()) {
        seqlens_k = HostTensor(DType::i32, {p.B});
        for (std::int64_t b = 0; b < p.B; ++b)
          seqlens_k.set_int(b, p.k_lens[static_cast<std::size_t>(b)]);
      }
    }
  }

  Attn(const Attn&) = delete; // the views point into this object's buffers
  Attn& operator=(const Attn&) = delete;

  ForwardProblem forward_problem() const {
    ForwardProblem f;
    f.q = q.view;
    f.k = k.view;
    f.v = v.view;
    f.out = out.view;
    f.options = spec.opt;
    f.extras.bias = bias.view();
    f.extras.mask = mask.view();
    f.extras.alibi_slopes = slopes.view();
    f.extras.sinks = sinks.view();
    f.extras.seqlens_q = seqlens_q.view();
    f.extras.seqlens_k = seqlens_k.view();
    f.extras.cu_seqlens_q = cu_q.view();
    f.extras.cu_seqlens_k = cu_k.view();
    f.extras.lse = lse.view();
    return f;
  }
  BackwardProblem backward_problem(bool with_dbias = true) const {
    BackwardProblem b;
    b.forward = forward_problem();
    b.dout = dout.view;
    b.dq = dq.view;
    b.dk = dk.view;
    b.dv = dv.view;
    if (with_dbias)
      b.dbias = dbias.view();
    b.dsinks = dsinks.view();
    return b;
  }

  // Poison the outputs, run the reference forward.
  void forward() {
    poison(out.view);
    poison(lse.view());
    reference::forward(forward_problem(), dims);
  }
  void backward(bool with_dbias = true) {
    poison(dq.view);
    poison(dk.view);
    poison(dv.view);
    if (with_dbias)
      poison(dbias.view());
    poison(dsinks.view());
    reference::backward(backward_problem(with_dbias), dims);
  }

  std::vector<double> out_values() const { return read_logical(out.view); }
  std::vector<double> lse_values() const { return read_logical(lse.view()); }

  Spec spec;
  Dims dims;
  Buffer q, k, v, out, dout, dq, dk, dv;
  HostTensor lse, bias, dbias, mask, slopes, sinks, dsinks, seqlens_q, seqlens_k, cu_q, cu_k;

private:
  void fill_random(const Tensor& t, std::uint64_t seed, double mult) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> base(0.0, 1.0), big(0.0, 100.0);
    std::bernoulli_distribution rare(0.001);
    std::vector<double> vals(static_cast<std::size_t>(t.numel()));
    for (double& x : vals) {
      x = base(rng);
      if (spec.outliers && rare(rng))
        x += big(rng);
      x *= mult;
    }
    write_logical(t, vals);
  }
};

} // namespace kattn::test
