#include "cudnn/cudnn_spec.hpp"

#include <cstring>
#include <sstream>

namespace kattn::cudnn::detail {
namespace {

// Our [B, seq, heads, dim] strides in cuDNN's [B, heads, seq, dim] order. A packed
// [total, heads, dim] tensor gets a nominal batch stride of `len` tokens (cuDNN addresses
// its sequences through the ragged offsets).
Strides4 bhsd(const Tensor& t, std::int64_t len = 0) {
  if (t.rank == 3)
    return {len * t.stride[0], t.stride[1], t.stride[0], t.stride[2]};
  return {t.stride[0], t.stride[2], t.stride[1], t.stride[3]};
}

// Gives tensor `which` a ragged-offset slot, shared with earlier tensors of the same side and
// token stride.
void add_ragged(GraphSpec& g, RaggedTensor which, bool side_k, std::int64_t token_stride) {
  for (int i = 0; i < g.n_ragged; ++i)
    if (g.ragged_side_k[static_cast<std::size_t>(i)] == side_k &&
        g.ragged_token_stride[static_cast<std::size_t>(i)] == token_stride) {
      g.ragged_slot[which] = i;
      return;
    }
  g.ragged_side_k[static_cast<std::size_t>(g.n_ragged)] = side_k;
  g.ragged_token_stride[static_cast<std::size_t>(g.n_ragged)] = token_stride;
  g.ragged_slot[which] = g.n_ragged++;
}

} // namespace

GraphSpec make_spec(const ForwardProblem& p, const Dims& d, int device, void* stream) {
  GraphSpec g;
  g.device = device;
  g.stream = stream;
  g.dtype = p.q.dtype;
  g.B = d.B, g.T = d.T, g.S = d.S, g.N = d.N, g.K = d.K, g.H = d.H, g.Hv = d.Hv;
  g.padded = d.padded;
  g.packed = d.packed;
  g.q = bhsd(p.q, d.T), g.k = bhsd(p.k, d.S), g.v = bhsd(p.v, d.S), g.o = bhsd(p.out, d.T);
  const Tensor& lse = p.extras.lse;
  if (lse.defined()) {
    g.lse = true;
    // Packed: cuDNN writes a [total_q, N] scratch (strides free of total_q, so one graph
    // serves every batch) that cudnn_varlen's stats kernel copies into our [N, total_q].
    g.lse_stride = lse.rank == 2 ? Strides4{d.T * d.N, 1, d.N, 1}
                                 : Strides4{lse.stride[0], lse.stride[1], lse.stride[2], 1};
  }
  if (d.packed) {
    add_ragged(g, rt_q, false, p.q.stride[0]);
    add_ragged(g, rt_k, true, p.k.stride[0]);
    add_ragged(g, rt_v, true, p.v.stride[0]);
    add_ragged(g, rt_o, false, p.out.stride[0]);
    if (lse.defined() && !stats_without_offsets(p, d))
      add_ragged(g, rt_stats, false, d.N);
  }
  const Tensor& bias = p.extras.bias;
  if (bias.defined()) {
    g.bias = true;
    g.bias_dtype = bias.dtype;
    // [B|1, N|1, T, S] is already cuDNN's order; an extent-1 dim broadcasts.
    for (std::size_t i = 0; i < 4; ++i) {
      g.bias_dim[i] = bias.extent[i];
      g.bias_stride[i] = bias.stride[i];
    }
  }
  g.left_bound = cudnn_left_bound(d.window_left);
  g.right_bound = d.window_right;
  // With T == S both alignments put the diagonal at j = i: top-left is the form cuDNN serves
  // with more features (bias, ALiBi, dropout), and it keeps one graph for both spellings.
  // (Not for varlen: the per-batch lengths differ.)
  g.bottom_right =
      p.options.alignment == Alignment::bottom_right && (d.T != d.S || d.padded || d.packed);
  g.scale = static_cast<float>(d.scale);
  g.alibi = p.extras.alibi_slopes.defined();
  g.dropout = p.options.dropout_p > 0.0;
  g.dropout_p = static_cast<float>(p.options.dropout_p);
  return g;
}

GraphSpec make_spec(const BackwardProblem& p, const Dims& d, int device, void* stream) {
  GraphSpec g = make_spec(p.forward, d, device, stream);
  g.backward = true;
  g.deterministic = p.forward.options.deterministic;
  g.dout = bhsd(p.dout, d.T), g.dq = bhsd(p.dq, d.T), g.dk = bhsd(p.dk, d.S),
  g.dv = bhsd(p.dv, d.S);
  g.dout_dtype = p.dout.dtype;
  g.grad_dtype = p.dq.dtype; // dk, dv share it (validated)
  if (g.varlen()) {
    // The backward reads a copy of the LSE with -inf made +inf (cudnn_varlen's stats kernel):
    // padded [B, N, T], packed [total_q, N] like the forward's scratch.
    g.lse_stride = g.packed ? Strides4{d.T * d.N, 1, d.N, 1} : Strides4{d.N * d.T, d.T, 1, 1};
    if (g.packed) {
      add_ragged(g, rt_do, false, p.dout.stride[0]);
      add_ragged(g, rt_dq, false, p.dq.stride[0]);
      add_ragged(g, rt_dk, true, p.dk.stride[0]);
      add_ragged(g, rt_dv, true, p.dv.stride[0]);
    }
  }
  if (p.dbias.defined()) {
    g.dbias = true;
    for (std::size_t i = 0; i < 4; ++i)
      g.dbias_stride[i] = p.dbias.stride[i];
  }
  return g;
}

// The key is the raw bytes of every field that shapes the graph (no formatting: it is built on
// every call, so it must be cheap).
namespace {
template <class T>
void append(std::string& k, const T& v) {
  k.append(reinterpret_cast<const char*>(&v), sizeof v);
}
} // namespace

std::string GraphSpec::key() const {
  std::string bytes;
  bytes.reserve(400);
  append(bytes, device), append(bytes, stream), append(bytes, dtype);
  for (std::int64_t x : {B, T, S, N, K, H, Hv})
    append(bytes, x);
  append(bytes, q), append(bytes, k), append(bytes, v), append(bytes, o);
  append(bytes, lse);
  if (lse)
    append(bytes, lse_stride);
  append(bytes, bias);
  if (bias)
    append(bytes, bias_dtype), append(bytes, bias_dim), append(bytes, bias_stride);
  append(bytes, left_bound), append(bytes, right_bound), append(bytes, bottom_right);
  std::uint32_t scale_bits = 0;
  std::memcpy(&scale_bits, &scale, sizeof scale_bits);
  append(bytes, scale_bits);
  append(bytes, alibi), append(bytes, dropout);
  append(bytes, padded), append(bytes, packed);
  if (packed)
    append(bytes, n_ragged), append(bytes, ragged_token_stride), append(bytes, ragged_side_k),
        append(bytes, ragged_slot);
  if (dropout)
    append(bytes, dropout_p);
  append(bytes, backward);
  if (backward) {
    append(bytes, deterministic);
    append(bytes, dout), append(bytes, dq), append(bytes, dk), append(bytes, dv);
    append(bytes, dout_dtype), append(bytes, grad_dtype);
    append(bytes, dbias);
    if (dbias)
      append(bytes, dbias_stride);
  }
  return bytes;
}

std::string GraphSpec::describe() const {
  std::ostringstream os;
  os << (fp8() ? "FP8 " : "") << (backward ? "backward " : "forward ") << to_string(dtype);
  if (backward && fp8())
    os << " (dout " << to_string(dout_dtype) << ", dq/dk/dv " << to_string(grad_dtype) << ")";
  os << " B=" << B << " T=" << T << " S=" << S << " N=" << N << " K=" << K << " H=" << H
     << " Hv=" << Hv;
  if (left_bound >= 0 || right_bound >= 0)
    os << " band(left=" << left_bound << " exclusive, right=" << right_bound << ", "
       << (bottom_right ? "bottom_right" : "top_left") << ")";
  if (bias)
    os << " bias";
  if (alibi)
    os << " alibi";
  if (padded)
    os << " padded";
  if (packed)
    os << " packed";
  if (dropout)
    os << " dropout(" << dropout_p << ")";
  if (dbias)
    os << " dbias";
  if (lse)
    os << " stats";
  return os.str();
}

} // namespace kattn::cudnn::detail
