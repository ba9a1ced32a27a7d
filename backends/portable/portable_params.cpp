#include "portable/portable_params.hpp"

namespace kattn::portable {

namespace {

Ints ints(const Tensor& t) {
  Ints r;
  if (t.defined()) {
    r.data = static_cast<const std::int32_t*>(t.data);
    r.s = t.stride[0];
  }
  return r;
}

} // namespace

ScoreSide make_score_side(const Tensor& t) {
  ScoreSide s;
  if (!t.defined())
    return s;
  s.data = t.data;
  s.dtype = t.dtype;
  // Dims align from the right: [T, S], [N|1, T, S] or [B|1, N|1, T, S].
  Index ext[4] = {1, 1, 1, 1}, str[4] = {0, 0, 0, 0};
  for (int d = 0; d < t.rank; ++d) {
    const auto u = static_cast<std::size_t>(d);
    ext[4 - t.rank + d] = t.extent[u];
    str[4 - t.rank + d] = t.extent[u] == 1 ? 0 : t.stride[u];
  }
  s.eb = ext[0], s.en = ext[1];
  s.sb = str[0], s.sn = str[1], s.si = str[2], s.sj = str[3];
  return s;
}

Common make_common(const ForwardProblem& p, const Dims& d) {
  Common c;
  c.B = d.B, c.T = d.T, c.S = d.S, c.N = d.N, c.K = d.K, c.H = d.H, c.Hv = d.Hv;
  c.group = d.N / d.K;
  c.packed = d.packed;
  c.scale = d.scale;
  c.softcap = d.softcap;
  c.bottom_right = p.options.alignment == Alignment::bottom_right;
  c.window_left = d.window_left;
  c.window_right = d.window_right;

  const Extras& e = p.extras;
  c.bias = make_score_side(e.bias);
  c.mask = make_score_side(e.mask);
  if (e.alibi_slopes.defined()) {
    c.slopes = static_cast<const float*>(e.alibi_slopes.data);
    if (e.alibi_slopes.rank == 1) {
      c.slopes_sn = e.alibi_slopes.stride[0];
    } else {
      c.slopes_sb = e.alibi_slopes.stride[0];
      c.slopes_sn = e.alibi_slopes.stride[1];
    }
  }
  c.seqlens_q = ints(e.seqlens_q);
  c.seqlens_k = ints(e.seqlens_k);
  c.cu_q = ints(e.cu_seqlens_q);
  c.cu_k = ints(e.cu_seqlens_k);
  if (e.sinks.defined()) {
    c.sinks = static_cast<const float*>(e.sinks.data);
    c.sinks_s = e.sinks.stride[0];
  }
  if (e.lse.defined()) {
    c.lse = static_cast<float*>(e.lse.data);
    if (d.packed) {
      c.lse_sn = e.lse.stride[0], c.lse_st = e.lse.stride[1];
    } else {
      c.lse_sb = e.lse.stride[0], c.lse_sn = e.lse.stride[1], c.lse_st = e.lse.stride[2];
    }
  }
  if (p.options.dropout_p > 0) {
    c.dropout = true;
    c.seed = p.options.dropout_seed;
    c.offset = p.options.dropout_offset;
    c.keep_threshold = dropout_keep_threshold(p.options.dropout_p);
    c.keep_scale = 1.0 / (1.0 - p.options.dropout_p);
  }
  return c;
}

bool plain_backward(const BackwardProblem& p, const Dims& d) {
  const Common c = make_common(p.forward, d);
  return !c.has_score_extras() && !c.dropout && !p.dbias.defined() && c.sinks == nullptr;
}

} // namespace kattn::portable
