// The framework-free problem descriptor: every tensor as a raw strided view plus the options
// of docs/semantics.md. Backends, validation and dispatch all work on this alone.
//
// Layouts (see docs/semantics.md):
//   batched: q [B, T, N, H], k [B, S, K, H], v [B, S, K, Hv], out [B, T, N, Hv], lse [B, N, T]
//   packed varlen (cu_seqlens given): q [Tq_total, N, H], k [Tk_total, K, H],
//     v [Tk_total, K, Hv], out [Tq_total, N, Hv], lse [N, Tq_total]
//   paged KV cache (page_table given; q, out, lse batched): k [num_pages, page_size, K, H],
//     v [num_pages, page_size, K, Hv]; S = max_pages_per_seq * page_size
#pragma once

#include <cstdint>
#include <optional>

#include "kokkosattn/backend.hpp"
#include "kokkosattn/tensor.hpp"

namespace kattn {

// Where the diagonal of causal masks, windows and ALiBi sits when T != S.
enum class Alignment {
  top_left,     // query i is aligned with key i
  bottom_right, // query i is aligned with key i + S - T (decode, chunked prefill)
};

std::string_view to_string(Alignment a);

struct Options {
  std::optional<double> scale;    // default 1/sqrt(H)
  double softcap = 0.0;           // > 0 applies c*tanh(s/c); 0 = off
  bool causal = false;            // same as window_right = 0
  std::int64_t window_left = -1;  // inclusive, -1 = unbounded
  std::int64_t window_right = -1; // inclusive, -1 = unbounded
  Alignment alignment = Alignment::top_left;
  double dropout_p = 0.0; // probability of dropping an attention weight
  std::uint64_t dropout_seed = 0;
  std::uint64_t dropout_offset = 0;
  bool deterministic = false; // backward: bitwise repeatable results
  // fp32 problems: a kernel may round q, k, v and P to TF32 (10-bit mantissa) for its tensor-core
  // products, as PyTorch's allow_tf32 permits (docs/semantics.md, "fp32 precision"). A permission:
  // kernels without a TF32 path compute in fp32 as usual; explain() names the mode that runs.
  bool allow_tf32 = false;
  Backend backend = Backend::automatic;
  // The Kokkos front end may run a GPU kernel on row-major copies of q, k, v, out, lse (and the
  // gradients) when the Views' layout does not suit it (kattn::LayoutCopies). false: never copy.
  bool allow_layout_copies = true;
};

// Per-tensor FP8 scaling factors (f32, shape [1], in the memory space of q). Only with q/k/v/out
// in f8_e4m3 or f8_e5m2, each optional: a missing descale/scale is 1, a missing amax is not
// reported. The real inputs are
// q = q8 * descale_q (likewise k, v); a kernel that quantises the probabilities P for its P.V
// product stores P * scale_s and multiplies by descale_s afterwards; the stored output is
// out8 = round(out * scale_o). amax_s and amax_o are OUTPUTS: max|P| and max|out| (before any
// scaling), the statistics a delayed-scaling recipe derives the next step's factors from
// (kokkosattn/fp8_scaling.hpp).
struct Fp8Scales {
  Tensor descale_q, descale_k, descale_v; // inputs: dequantisation factors of q8, k8, v8
  Tensor descale_s, scale_s;              // inputs: P's quantisation factor and its inverse
  Tensor scale_o;                         // input: quantisation factor of out
  Tensor amax_s, amax_o;                  // outputs: max|P|, max|out|
};

// Additional inputs; every member is optional (rank 0 = not given).
struct Extras {
  Tensor bias;         // additive, [B|1, N|1, T, S], float dtype
  Tensor mask;         // boolean, [B|1, N|1, T, S], true = attend
  Tensor alibi_slopes; // f32, [N] or [B, N]
  Tensor sinks;        // f32, [N]: per-head sink logits in the softmax's denominator only
  Tensor seqlens_q;    // i32 [B]: valid query rows per batch (padded batches)
  Tensor seqlens_k;    // i32 [B]: valid keys per batch (padded batches)
  Tensor cu_seqlens_q; // i32 [B+1]: packed varlen offsets into the token dimension
  Tensor cu_seqlens_k; // i32 [B+1]
  // i32 [B, max_pages_per_seq]: sequence b's key j lives in k/v page page_table[b, j / page_size],
  // row j % page_size (docs/semantics.md, paged_kv); needs seqlens_k; forward only.
  Tensor page_table;
  Tensor lse; // f32 output of the forward, input of the backward
  // Packed varlen only: longest sequence; required when cu_seqlens live in device memory
  // (0 = read it off host-resident cu_seqlens).
  std::int64_t max_seqlen_q = 0;
  std::int64_t max_seqlen_k = 0;
  Fp8Scales fp8; // FP8 problems only (see Fp8Scales)
};

struct ForwardProblem {
  Tensor q, k, v, out;
  Extras extras;
  Options options;
};

// The FP8 backward's own per-tensor factors (f32, shape [1], in the memory space of q; each
// optional like Fp8Scales'). The backward also reads forward.extras.fp8's descale_q/k/v and
// scale_s/descale_s: it recomputes P from q and k and quantises it the way the forward did.
// (Its scale_o, amax_s, amax_o belong to the forward: the backward neither reads nor writes them.)
// A struct of the BackwardProblem rather than more members of Fp8Scales: a ForwardProblem then
// cannot carry factors nothing reads, and one forward problem serves both passes unchanged.
//   out = out8 * descale_o, dout = dout8 * descale_dout        (the inputs, dequantised)
//   dp = scale * P o (dout.v^T - D), D_i = sum_h dout_ih out_ih  (the gradient of q.k^T: cuDNN's
//        and TransformerEngine's "dP"); a kernel that quantises it for its FP8 dp.k and dp^T.q
//        products stores dp * scale_dp and multiplies by descale_dp afterwards
//   dq8 = round(dq * scale_dq) (likewise dk, dv) when dq/dk/dv are FP8; f16/bf16 gradients are
//        not scaled (scale_dq/dk/dv must not be given then)
// amax_dq, amax_dk, amax_dv, amax_dp are OUTPUTS: max|dq|, max|dk|, max|dv|, max|dp| before
// scaling, for the delayed-scaling recipe (kokkosattn/fp8_scaling.hpp).
struct Fp8BackwardScales {
  Tensor descale_o, descale_dout;            // inputs: dequantisation factors of out8 and dout8
  Tensor descale_dp, scale_dp;               // inputs: dp's dequantisation, quantisation factor
  Tensor scale_dq, scale_dk, scale_dv;       // inputs: quantisation factors of FP8 gradients
  Tensor amax_dq, amax_dk, amax_dv, amax_dp; // outputs: max|dq|, max|dk|, max|dv|, max|dp|
};

struct BackwardProblem {
  ForwardProblem forward; // q, k, v, out (the forward's output), extras (lse optional)
  Tensor dout;            // like out (FP8 q: either FP8 format, see docs/semantics.md)
  Tensor dq, dk, dv;      // like q, k, v (FP8 q: dout's format, or all three f16 / bf16)
  Tensor dbias;           // like extras.bias; required iff a gradient of the bias is wanted
  Tensor dsinks;          // like extras.sinks; required iff a gradient of the sinks is wanted
  Fp8BackwardScales fp8;  // FP8 backwards only (see Fp8BackwardScales)
};

// The sizes a validated problem describes, resolved once.
struct Dims {
  std::int64_t B = 0;            // batch (sequences)
  std::int64_t T = 0;            // query length (max over the batch when varlen)
  std::int64_t S = 0;            // key length (max over the batch when varlen)
  std::int64_t N = 0;            // query heads
  std::int64_t K = 0;            // key/value heads (divides N)
  std::int64_t H = 0;            // q/k head dim
  std::int64_t Hv = 0;           // v/out head dim
  bool packed = false;           // cu_seqlens layout
  bool padded = false;           // seqlens_q/seqlens_k given
  bool paged = false;            // page_table given: k, v are [num_pages, page_size, ...]
  std::int64_t page_size = 0;    // paged only: keys per page (k's dim 1)
  double scale = 0.0;            // resolved softmax scale
  double softcap = 0.0;          // resolved: 0 = off (also for caps beyond float's range)
  std::int64_t window_left = -1; // resolved: causal folded in
  std::int64_t window_right = -1;
};

} // namespace kattn
