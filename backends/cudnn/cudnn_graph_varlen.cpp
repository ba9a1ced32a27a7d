#include <cstddef>
#include <cstdint>
#include <unordered_map>

#include "cudnn/cudnn_graph_internal.hpp"
#include "cudnn/cudnn_status.hpp"
#include "cudnn/cudnn_varlen.hpp"

// The varlen glue around a graph run (cudnn_varlen.hpp has the kernels): lengths and ragged
// offsets before, the LSE copy-out and the rows our semantics fix after.
namespace kattn::cudnn::detail::graph_internal {
namespace {

// The grown-on-demand LSE scratch of an entry (caller holds the cache mutex).
float* stats_scratch(Entry& e, std::size_t floats) {
  if (e.stats_bytes < floats * sizeof(float)) {
    if (e.stats)
      check_cuda(cudaFree(e.stats), "cudaFree(varlen LSE scratch)"); // waits for its users
    e.stats = nullptr;
    check_cuda(cudaMalloc(reinterpret_cast<void**>(&e.stats), floats * sizeof(float)),
               "cudaMalloc(varlen LSE scratch)");
    e.stats_bytes = floats * sizeof(float);
  }
  return e.stats;
}

// Rows of an [B, T, heads, dim] / [total, heads, dim] tensor for the fix-up kernel.
RowsArgs rows_of(const Tensor& t) {
  RowsArgs r;
  r.data = t.data;
  const bool packed = t.rank == 3;
  r.batch_stride = packed ? 0 : t.stride[0];
  r.token_stride = t.stride[packed ? 0 : 1];
  r.head_stride = t.stride[packed ? 1 : 2];
  r.heads = static_cast<int>(t.extent[packed ? 1 : 2]);
  r.dim = static_cast<int>(t.extent[packed ? 2 : 3]);
  return r;
}

FixArgs fix_args(const GraphSpec& s, const Entry& e, const ForwardProblem& f, const Tensor& t,
                 bool keys_side) {
  FixArgs a;
  a.rows = rows_of(t);
  a.seq_q = e.lengths;
  a.seq_k = e.lengths + s.B;
  if (s.packed) {
    const Tensor& cu = keys_side ? f.extras.cu_seqlens_k : f.extras.cu_seqlens_q;
    a.cu = static_cast<const int*>(cu.data);
    a.cu_stride = cu.stride[0];
  }
  a.B = static_cast<int>(s.B);
  a.T = static_cast<int>(keys_side ? s.S : s.T);
  a.left = s.left_bound < 0 ? -1 : s.left_bound - 1; // back to our inclusive bound
  a.right = s.right_bound;
  a.bottom_right = s.bottom_right;
  a.keys_side = keys_side;
  return a;
}

} // namespace

void varlen_before(const GraphSpec& s, Entry& e, const RunValues& values,
                   std::unordered_map<std::int64_t, void*>& pack, cudaStream_t stream) {
  const ForwardProblem& f = *values.forward;
  const Extras& x = f.extras;
  PrepArgs a;
  a.B = static_cast<int>(s.B), a.T = static_cast<int>(s.T), a.S = static_cast<int>(s.S);
  if (s.packed) {
    a.cu_q = static_cast<const int*>(x.cu_seqlens_q.data);
    a.cu_k = static_cast<const int*>(x.cu_seqlens_k.data);
    a.cu_q_stride = x.cu_seqlens_q.stride[0], a.cu_k_stride = x.cu_seqlens_k.stride[0];
  } else {
    a.len_q = static_cast<const int*>(x.seqlens_q.data);
    a.len_k = static_cast<const int*>(x.seqlens_k.data);
    a.len_q_stride = x.seqlens_q.defined() ? x.seqlens_q.stride[0] : 1;
    a.len_k_stride = x.seqlens_k.defined() ? x.seqlens_k.stride[0] : 1;
  }
  a.seq_q = e.lengths;
  a.seq_k = e.lengths + s.B;
  a.n_off = s.n_ragged;
  for (int i = 0; i < s.n_ragged; ++i) {
    const auto u = static_cast<std::size_t>(i);
    a.off[u] = e.lengths + 2 * s.B + i * (s.B + 1);
    a.token_stride[u] = s.ragged_token_stride[u];
    a.side_k[u] = s.ragged_side_k[u];
    pack[uid_ragged0 + i] = a.off[u];
  }
  launch_prep(a, stream);
  pack[uid_seq_q] = a.seq_q;
  pack[uid_seq_kv] = a.seq_k;

  const std::int64_t total_q = s.packed ? f.q.extent[0] : 0;
  if (!s.backward) {
    if (s.packed && s.lse)
      pack[uid_stats] = stats_scratch(e, static_cast<std::size_t>(total_q * s.N));
    return;
  }
  const Tensor& lse = x.lse;
  StatsArgs c;
  c.src = static_cast<const float*>(lse.data);
  c.B = static_cast<int>(s.B), c.N = static_cast<int>(s.N), c.T = static_cast<int>(s.T);
  c.inf_to_pos = 1;
  if (s.packed) {
    c.packed = 1;
    c.total = total_q;
    c.src_head = lse.stride[0], c.src_token = lse.stride[1];
    c.dst_head = 1, c.dst_token = s.N;
    c.dst = stats_scratch(e, static_cast<std::size_t>(total_q * s.N));
  } else {
    c.src_batch = lse.stride[0], c.src_head = lse.stride[1], c.src_token = lse.stride[2];
    c.dst_batch = s.N * s.T, c.dst_head = s.T, c.dst_token = 1;
    c.dst = stats_scratch(e, static_cast<std::size_t>(s.B * s.N * s.T));
  }
  launch_stats(c, stream);
  pack[uid_stats] = c.dst;
}

void varlen_after(const GraphSpec& s, const Entry& e, const RunValues& values,
                  cudaStream_t stream) {
  const ForwardProblem& f = *values.forward;
  if (!s.backward) {
    const Tensor& lse = f.extras.lse;
    FixArgs a = fix_args(s, e, f, f.out, false);
    if (s.lse) {
      a.rows.lse = static_cast<float*>(lse.data);
      if (s.packed) {
        StatsArgs c;
        c.src = e.stats;
        c.src_head = 1, c.src_token = s.N;
        c.dst = static_cast<float*>(lse.data);
        c.dst_head = lse.stride[0], c.dst_token = lse.stride[1];
        c.N = static_cast<int>(s.N), c.B = static_cast<int>(s.B), c.T = static_cast<int>(s.T);
        c.total = f.q.extent[0];
        c.packed = 1;
        launch_stats(c, stream);
        a.rows.lse_head = lse.stride[0], a.rows.lse_token = lse.stride[1];
      } else {
        a.rows.lse_batch = lse.stride[0], a.rows.lse_head = lse.stride[1];
        a.rows.lse_token = lse.stride[2];
      }
    }
    launch_fix_rows(a, stream);
    return;
  }
  const BackwardProblem& b = *values.backward;
  launch_fix_rows(fix_args(s, e, f, b.dq, false), stream);
  if (s.padded) { // packed key rows past k_len do not exist
    launch_fix_rows(fix_args(s, e, f, b.dk, true), stream);
    launch_fix_rows(fix_args(s, e, f, b.dv, true), stream);
  }
}

} // namespace kattn::cudnn::detail::graph_internal
