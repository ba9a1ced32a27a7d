/* Bad input through the C API, a row per case of the validation suite (tests/unit/
 * test_validate_*.cpp) that test_c_bad_inputs.c does not already have, with the harness of
 * c_bad_inputs.h: each row the valid problem with the case's change, its status, the argument and
 * (where the suite checks it) what came named in the message, every output untouched, explain and
 * plans alike. Valid rows (KATTN_OK, or KATTN_ERROR_UNSUPPORTED where validation passes but no
 * host backend serves FP8) guard the others: the table cannot pass by refusing everything.
 * Where a row differs from its case: the sizes are c_bad_inputs.h's; out is f16, not f64, to keep
 * its bytes inside o; dk is bf16 on the f32 base of the backward rows, not f32 on a bf16 one.
 *
 * Cases with a row in test_c_bad_inputs.c (same check, same argument): the valid base problems
 * (rows "nothing", "packed varlen (valid)", which also has no lse); q not given; v's key length;
 * out's query length; K not dividing N; k's dtype; out aliasing itself through a zero stride;
 * lse's shape; mask f32; ALiBi slopes' length; seqlens_q past T; NaN scale; negative softcap;
 * window_left below -1; non-monotonic cu_seqlens_q; cu_seqlens_k's last offset; cu_seqlens_q
 * without cu_seqlens_k; max_seqlen shorter than the longest sequence; lse aliasing itself;
 * backward dq's shape; dbias without bias; FP8 factors with q not f8 (forward and backward).
 *
 * Cases the C API refuses in a setter, before any run (rows "(setter)": the message names the
 * tensor by its role and the setter's argument): v of rank 5 (v: rank), negative T and negative
 * Hv (q: extents[1], v: extents[3]), a backend id outside the enum (backend).
 *
 * Cases with no row:
 * - test_validate_dims.cpp checks the sizes, scale and window that validation resolves
 *   (kattn::Dims), which the C API does not return. Its valid problems that a C caller can run
 *   are rows (padded with an empty sequence, broadcast bias/mask/[B, N] slopes, MQA with
 *   Hv != H, strided q with a batch-broadcast k, causal with window_left, backward without lse);
 *   device-resident cu_seqlens with max_seqlen is not: it passes validation and would run on
 *   device memory this test has none of.
 * - test_validate_options.cpp "dropout: limits of the Philox counters hold only with dropout":
 *   valid problems of 2^38 and more elements that the suite only validates; through the C API a
 *   problem that passes validation runs, on memory that cannot be allocated.
 * Every other case has a row here. */
#include "c_bad_inputs.h"

static unsigned char mask[BNTS];
static int lens[B], cu4[B + 2]; /* seqlens_k; cu_seqlens_k of 3 sequences */
static const int64_t one[1] = {1};

static void typed(kattn_problem_t p, kattn_role_t role, void* data, kattn_dtype_t dtype, int rank,
                  const int64_t* extents) {
  kattn_problem_set_tensor(p, role, data, dtype, rank, extents, NULL, KATTN_MEMORY_HOST);
}
static void strided(kattn_problem_t p, kattn_role_t role, void* data, int rank,
                    const int64_t* extents, const int64_t* strides) {
  kattn_problem_set_tensor(p, role, data, KATTN_F32, rank, extents, strides, KATTN_MEMORY_HOST);
}
static void in_memory(kattn_problem_t p, kattn_role_t role, void* data, int rank,
                      const int64_t* extents, kattn_memory_t memory) {
  kattn_problem_set_tensor(p, role, data, KATTN_F32, rank, extents, NULL, memory);
}
static void lengths(kattn_problem_t p, kattn_role_t role, int* data, int first, int second) {
  static const int64_t x[1] = {B};
  data[0] = first, data[1] = second;
  kattn_problem_set_tensor(p, role, data, KATTN_I32, 1, x, NULL, KATTN_MEMORY_HOST);
}
/* An FP8 forward, q, k, v, out in `dtype`, with every factor given when `factors`. */
static void fp8_forward(kattn_problem_t p, kattn_dtype_t dtype, int factors) {
  typed(p, KATTN_Q, q, dtype, 4, qx);
  typed(p, KATTN_K, k, dtype, 4, kx);
  typed(p, KATTN_V, v, dtype, 4, kx);
  typed(p, KATTN_OUT, o, dtype, 4, qx);
  for (int r = KATTN_FP8_DESCALE_Q; factors && r <= KATTN_FP8_AMAX_O; ++r)
    tensor(p, (kattn_role_t)r, factor((kattn_role_t)r), 1, one);
}
/* An FP8 backward: the forward's in `fwd`, dout in `grad`, dq, dk, dv in `grads` (dout's format,
 * or f16/bf16 without scale_dq/dk/dv), every factor given when `factors`. */
static void fp8_backward(kattn_problem_t p, kattn_dtype_t fwd, kattn_dtype_t grad,
                         kattn_dtype_t grads, int factors) {
  const int scaled = grads == KATTN_F8_E4M3 || grads == KATTN_F8_E5M2;
  fp8_forward(p, fwd, factors);
  typed(p, KATTN_DOUT, dout, grad, 4, qx);
  typed(p, KATTN_DQ, dq, grads, 4, qx);
  typed(p, KATTN_DK, dk, grads, 4, kx);
  typed(p, KATTN_DV, dv, grads, 4, kx);
  for (int r = KATTN_FP8_DESCALE_O; factors && r <= KATTN_FP8_AMAX_DP; ++r)
    if (scaled || r < KATTN_FP8_SCALE_DQ || r > KATTN_FP8_SCALE_DV)
      tensor(p, (kattn_role_t)r, factor((kattn_role_t)r), 1, one);
}
/* A problem too large to allocate, with dropout: validated only, never read, at fake addresses
 * (the inputs share one, out far from them), as the suite's huge_problem. */
static void huge_with_dropout(kattn_problem_t p, int64_t b, int64_t t, int64_t s, int64_t n) {
  void* const in = (void*)(uintptr_t)64;
  void* const out = (void*)((uintptr_t)1 << 50);
  const int64_t qh[4] = {b, t, n, 64}, kh[4] = {b, s, 1, 64};
  typed(p, KATTN_Q, in, KATTN_F16, 4, qh);
  typed(p, KATTN_K, in, KATTN_F16, 4, kh);
  typed(p, KATTN_V, in, KATTN_F16, 4, kh);
  typed(p, KATTN_OUT, out, KATTN_F16, 4, qh);
  tensor(p, KATTN_LSE, NULL, 0, NULL);
  kattn_problem_set_dropout(p, 0.1, 0, 0);
}

/* test_validate_tensors.cpp */
static void q_rank_two(kattn_problem_t p) {
  static const int64_t x[2] = {B * T, N * H};
  tensor(p, KATTN_Q, q, 2, x);
}
static void k_rank_three(kattn_problem_t p) {
  tensor(p, KATTN_K, k, 3, kx);
}
static void v_rank_five(kattn_problem_t p) {
  static const int64_t x[5] = {B, S, K, H, 1};
  setter(tensor(p, KATTN_V, v, 5, x));
}
static void out_missing(kattn_problem_t p) {
  tensor(p, KATTN_OUT, NULL, 0, NULL);
}
static void q_data_null(kattn_problem_t p) {
  tensor(p, KATTN_Q, NULL, 4, qx);
}
static void out_data_null(kattn_problem_t p) {
  tensor(p, KATTN_OUT, NULL, 4, qx);
}
static void t_negative(kattn_problem_t p) {
  static const int64_t x[4] = {B, -1, N, H};
  setter(tensor(p, KATTN_Q, q, 4, x));
  setter(tensor(p, KATTN_OUT, o, 4, x));
}
static void h_zero(kattn_problem_t p) {
  static const int64_t xq[4] = {B, T, N, 0}, xk[4] = {B, S, K, 0};
  tensor(p, KATTN_Q, q, 4, xq);
  tensor(p, KATTN_K, k, 4, xk);
}
static void hv_negative(kattn_problem_t p) {
  static const int64_t x[4] = {B, S, K, -3};
  setter(tensor(p, KATTN_V, v, 4, x));
}
static void k_batch(kattn_problem_t p) {
  static const int64_t x[4] = {1, S, K, H};
  tensor(p, KATTN_K, k, 4, x);
}
static void k_head_dim(kattn_problem_t p) {
  static const int64_t x[4] = {B, S, K, H - 1};
  tensor(p, KATTN_K, k, 4, x);
}
static void v_heads(kattn_problem_t p) {
  static const int64_t x[4] = {B, S, 1, H};
  tensor(p, KATTN_V, v, 4, x);
}
static void out_heads(kattn_problem_t p) {
  static const int64_t x[4] = {B, T, 2, H};
  tensor(p, KATTN_OUT, o, 4, x);
}
static void out_value_dim(kattn_problem_t p) {
  static const int64_t x[4] = {B, S, K, 16};
  tensor(p, KATTN_V, v, 4, x);
}
static void v_dtype(kattn_problem_t p) {
  typed(p, KATTN_Q, q, KATTN_BF16, 4, qx);
  typed(p, KATTN_K, k, KATTN_BF16, 4, kx);
  typed(p, KATTN_OUT, o, KATTN_BF16, 4, qx);
}
static void out_dtype(kattn_problem_t p) { /* f16 rather than f64: out's bytes stay in o */
  typed(p, KATTN_OUT, o, KATTN_F16, 4, qx);
}
static void integer_q(kattn_problem_t p) {
  typed(p, KATTN_Q, q, KATTN_I32, 4, qx);
  typed(p, KATTN_K, k, KATTN_I32, 4, kx);
  typed(p, KATTN_V, v, KATTN_I32, 4, kx);
  typed(p, KATTN_OUT, o, KATTN_I32, 4, qx);
}
static void k_cuda(kattn_problem_t p) {
  in_memory(p, KATTN_K, k, 4, kx, KATTN_MEMORY_CUDA);
}
static void lse_hip(kattn_problem_t p) {
  in_memory(p, KATTN_LSE, lse, 3, lx, KATTN_MEMORY_HIP);
}
static void q_stride_negative(kattn_problem_t p) {
  static const int64_t st[4] = {T * N * H, -N * H, H, 1};
  strided(p, KATTN_Q, q, 4, qx, st);
}
static void bias_rank_zero(kattn_problem_t p) {
  tensor(p, KATTN_BIAS, bias, 0, NULL);
}
static void fp8_e4m3(kattn_problem_t p) {
  fp8_forward(p, KATTN_F8_E4M3, 1);
}
static void fp8_e5m2(kattn_problem_t p) {
  fp8_forward(p, KATTN_F8_E5M2, 1);
}

/* test_validate_dims.cpp (valid) */
static void padded_empty(kattn_problem_t p) {
  lengths(p, KATTN_SEQLENS_Q, seqlens, 0, T);
  lengths(p, KATTN_SEQLENS_K, lens, S, 1);
}
static void broadcasts(kattn_problem_t p) {
  static const int64_t xb[4] = {1, N, T, S}, xm[4] = {B, 1, T, S}, xs[2] = {B, N};
  for (int i = 0; i < BNTS; ++i)
    bias[i] = 0.01f * (float)(i % 7), mask[i] = (unsigned char)(i % 5 != 0);
  tensor(p, KATTN_BIAS, bias, 4, xb);
  typed(p, KATTN_MASK, mask, KATTN_BOOL, 4, xm);
  tensor(p, KATTN_ALIBI_SLOPES, slopes, 2, xs);
}
static void mqa_hv(kattn_problem_t p) {
  static const int64_t xk[4] = {B, S, 1, H}, xv[4] = {B, S, 1, 16}, xo[4] = {B, T, N, 16};
  tensor(p, KATTN_K, k, 4, xk);
  tensor(p, KATTN_V, v, 4, xv);
  tensor(p, KATTN_OUT, o, 4, xo);
}
static void strides_valid(kattn_problem_t p) { /* q a [B, N, T, H] buffer, k broadcast over B */
  static const int64_t sq[4] = {N * T * H, H, T * H, 1}, sk[4] = {0, K * H, H, 1};
  strided(p, KATTN_Q, q, 4, qx, sq);
  strided(p, KATTN_K, k, 4, kx, sk);
}
static void causal_window(kattn_problem_t p) {
  kattn_problem_set_causal(p, 1);
  kattn_problem_set_window(p, 2, 0);
}
static void lse_unset(kattn_problem_t p) {
  tensor(p, KATTN_LSE, NULL, 0, NULL);
}

/* test_validate_options.cpp */
static void scale_negative(kattn_problem_t p) {
  kattn_problem_set_scale(p, -0.5);
}
static void scale_zero(kattn_problem_t p) {
  kattn_problem_set_scale(p, 0.0);
}
static void scale_inf(kattn_problem_t p) {
  kattn_problem_set_scale(p, INFINITY);
}
static void softcap_nan(kattn_problem_t p) {
  kattn_problem_set_softcap(p, NAN);
}
static void dropout_one(kattn_problem_t p) {
  kattn_problem_set_dropout(p, 1.0, 0, 0);
}
static void dropout_negative(kattn_problem_t p) {
  kattn_problem_set_dropout(p, -0.1, 0, 0);
}
static void dropout_nan(kattn_problem_t p) {
  kattn_problem_set_dropout(p, NAN, 0, 0);
}
static void dropout_offset(kattn_problem_t p) {
  kattn_problem_set_dropout(p, 0.1, 0, (uint64_t)1 << 32);
}
static void dropout_heads(kattn_problem_t p) {
  huge_with_dropout(p, (int64_t)1 << 17, 1, 1, (int64_t)1 << 15);
}
static void dropout_t(kattn_problem_t p) {
  huge_with_dropout(p, 1, (int64_t)1 << 32, 1, 1);
}
static void dropout_s(kattn_problem_t p) {
  huge_with_dropout(p, 1, 1, (int64_t)1 << 34, 1);
}
static void window_right(kattn_problem_t p) {
  kattn_problem_set_window(p, -1, -2);
}
static void causal_right(kattn_problem_t p) {
  kattn_problem_set_causal(p, 1);
  kattn_problem_set_window(p, -1, 3);
}
static void backend_99(kattn_problem_t p) {
  setter(kattn_problem_set_backend(p, (kattn_backend_t)99));
}

/* test_validate_extras.cpp */
static void lse_f16(kattn_problem_t p) {
  typed(p, KATTN_LSE, lse, KATTN_F16, 3, lx);
}
static void mask_keys(kattn_problem_t p) {
  static const int64_t x[4] = {B, N, T, S - 1};
  typed(p, KATTN_MASK, mask, KATTN_BOOL, 4, x);
}
static void mask_rank_two(kattn_problem_t p) {
  static const int64_t x[2] = {T, S};
  typed(p, KATTN_MASK, mask, KATTN_BOOL, 2, x);
}
static void bias_batch(kattn_problem_t p) {
  static const int64_t x[4] = {3, 1, T, S};
  tensor(p, KATTN_BIAS, bias, 4, x);
}
static void bias_over_t(kattn_problem_t p) {
  static const int64_t x[4] = {B, N, 1, S};
  tensor(p, KATTN_BIAS, bias, 4, x);
}
static void bias_bool(kattn_problem_t p) {
  static const int64_t x[4] = {B, N, T, S};
  typed(p, KATTN_BIAS, mask, KATTN_BOOL, 4, x);
}
static void bias_data_null(kattn_problem_t p) {
  static const int64_t x[4] = {1, 1, T, S};
  tensor(p, KATTN_BIAS, NULL, 4, x);
}
static void slopes_f16(kattn_problem_t p) {
  static const int64_t x[2] = {B, N};
  typed(p, KATTN_ALIBI_SLOPES, slopes, KATTN_F16, 2, x);
}
static void seqlens_q_extent(kattn_problem_t p) {
  static const int64_t x[1] = {3};
  kattn_problem_set_tensor(p, KATTN_SEQLENS_Q, seqlens, KATTN_I32, 1, x, NULL, KATTN_MEMORY_HOST);
}
static void seqlens_k_f32(kattn_problem_t p) {
  static const int64_t x[1] = {B};
  slopes[0] = slopes[1] = 3.0f;
  tensor(p, KATTN_SEQLENS_K, slopes, 1, x);
}
static void seqlens_k_negative(kattn_problem_t p) {
  lengths(p, KATTN_SEQLENS_K, lens, -1, S);
}
static void max_seqlen_unpacked(kattn_problem_t p) {
  kattn_problem_set_max_seqlens(p, 0, 5);
}

/* test_validate_varlen.cpp (on packed() of c_bad_inputs.h) */
static void packed_first_offset(kattn_problem_t p) {
  packed(p);
  cu_q[0] = 1;
}
static void packed_cu_k_batch(kattn_problem_t p) {
  static const int64_t x[1] = {B + 2};
  packed(p);
  cu4[0] = 0, cu4[1] = 20, cu4[2] = 30, cu4[3] = B * S;
  kattn_problem_set_tensor(p, KATTN_CU_SEQLENS_K, cu4, KATTN_I32, 1, x, NULL, KATTN_MEMORY_HOST);
}
static void packed_cu_empty(kattn_problem_t p) {
  static const int64_t x[1] = {0};
  packed(p);
  kattn_problem_set_tensor(p, KATTN_CU_SEQLENS_Q, cu_q, KATTN_I32, 1, x, NULL, KATTN_MEMORY_HOST);
}
static void packed_cu_f32(kattn_problem_t p) {
  static const int64_t x[1] = {B + 1};
  packed(p);
  tensor(p, KATTN_CU_SEQLENS_Q, slopes, 1, x);
}
static void packed_and_padded(kattn_problem_t p) {
  packed(p);
  lengths(p, KATTN_SEQLENS_Q, seqlens, 9, 23);
}
static void packed_q_rank_four(kattn_problem_t p) {
  packed(p);
  tensor(p, KATTN_Q, q, 4, qx);
}
static void packed_out_tokens(kattn_problem_t p) {
  static const int64_t x[3] = {B * T - 1, N, H};
  packed(p);
  tensor(p, KATTN_OUT, o, 3, x);
}
static void packed_bias(kattn_problem_t p) {
  static const int64_t x[4] = {B, N, T, S};
  packed(p);
  tensor(p, KATTN_BIAS, bias, 4, x);
}
static void packed_mask(kattn_problem_t p) {
  static const int64_t x[4] = {1, 1, T, S};
  packed(p);
  typed(p, KATTN_MASK, mask, KATTN_BOOL, 4, x);
}
static void packed_lse_batched(kattn_problem_t p) {
  packed(p);
  tensor(p, KATTN_LSE, lse, 3, lx);
}
static void packed_cuda_no_max(kattn_problem_t p) {
  static const int64_t pq[3] = {B * T, N, H}, pk[3] = {B * S, K, H}, c[1] = {B + 1};
  packed(p);
  in_memory(p, KATTN_Q, q, 3, pq, KATTN_MEMORY_CUDA);
  in_memory(p, KATTN_K, k, 3, pk, KATTN_MEMORY_CUDA);
  in_memory(p, KATTN_V, v, 3, pk, KATTN_MEMORY_CUDA);
  in_memory(p, KATTN_OUT, o, 3, pq, KATTN_MEMORY_CUDA);
  kattn_problem_set_tensor(p, KATTN_CU_SEQLENS_Q, cu_q, KATTN_I32, 1, c, NULL, KATTN_MEMORY_CUDA);
  kattn_problem_set_tensor(p, KATTN_CU_SEQLENS_K, cu_k, KATTN_I32, 1, c, NULL, KATTN_MEMORY_CUDA);
  kattn_problem_set_max_seqlens(p, 0, 28);
}
static void packed_max_seqlen_long(kattn_problem_t p) {
  packed(p);
  kattn_problem_set_max_seqlens(p, 0, B * S + 1);
}

/* test_validate_backward.cpp */
static void dk_dtype(kattn_problem_t p) {
  typed(p, KATTN_DK, dk, KATTN_BF16, 4, kx);
}
static void dv_missing(kattn_problem_t p) {
  tensor(p, KATTN_DV, NULL, 0, NULL);
}
static void dout_shape(kattn_problem_t p) {
  static const int64_t x[4] = {B, T - 1, N, H};
  tensor(p, KATTN_DOUT, dout, 4, x);
}
static void dout_data_null(kattn_problem_t p) {
  tensor(p, KATTN_DOUT, NULL, 4, qx);
}
static void dq_cuda(kattn_problem_t p) {
  in_memory(p, KATTN_DQ, dq, 4, qx, KATTN_MEMORY_CUDA);
}
static void dk_stride_negative(kattn_problem_t p) {
  static const int64_t st[4] = {-1, K * H, H, 1};
  strided(p, KATTN_DK, dk, 4, kx, st);
}
static void dv_strides_overlap(kattn_problem_t p) {
  static const int64_t st[4] = {S * K * H, 0, H, 1};
  strided(p, KATTN_DV, dv, 4, kx, st);
}
static void dbias_shape(kattn_problem_t p) {
  static const int64_t xb[4] = {1, N, T, S}, xd[4] = {B, N, T, S};
  tensor(p, KATTN_BIAS, bias, 4, xb);
  tensor(p, KATTN_DBIAS, dbias, 4, xd);
}
static void dbias_dtype(kattn_problem_t p) {
  static const int64_t x[4] = {B, N, T, S};
  tensor(p, KATTN_BIAS, bias, 4, x);
  typed(p, KATTN_DBIAS, dbias, KATTN_F16, 4, x);
}
static void causal_right_two(kattn_problem_t p) {
  kattn_problem_set_causal(p, 1);
  kattn_problem_set_window(p, -1, 2);
}
static void lse_f64(kattn_problem_t p) {
  typed(p, KATTN_LSE, lse, KATTN_F64, 3, lx);
}
static void out_broadcast(kattn_problem_t p) { /* out, an input of the backward, may be */
  static const int64_t st[4] = {T * N * H, 0, H, 1};
  strided(p, KATTN_OUT, o, 4, qx, st);
}
static void dq_broadcast(kattn_problem_t p) {
  static const int64_t st[4] = {T * N * H, 0, H, 1};
  out_broadcast(p);
  strided(p, KATTN_DQ, dq, 4, qx, st);
}

/* test_validate_fp8.cpp */
static void fp8_no_factors(kattn_problem_t p) {
  fp8_forward(p, KATTN_F8_E4M3, 0);
}
static void fp8_scale_s_rank_zero(kattn_problem_t p) {
  fp8_e4m3(p);
  tensor(p, KATTN_FP8_SCALE_S, factor(KATTN_FP8_SCALE_S), 0, NULL);
}
static void fp8_descale_k_two(kattn_problem_t p) {
  static const int64_t x[1] = {2};
  fp8_e4m3(p);
  tensor(p, KATTN_FP8_DESCALE_K, factor(KATTN_FP8_DESCALE_K), 1, x);
}
static void fp8_amax_o_f16(kattn_problem_t p) {
  fp8_e4m3(p);
  typed(p, KATTN_FP8_AMAX_O, factor(KATTN_FP8_AMAX_O), KATTN_F16, 1, one);
}
static void fp8_v_format(kattn_problem_t p) {
  fp8_e4m3(p);
  typed(p, KATTN_V, v, KATTN_F8_E5M2, 4, kx);
}
static void fp8_bias(kattn_problem_t p) {
  static const int64_t x[4] = {1, 1, T, S};
  fp8_e4m3(p);
  typed(p, KATTN_BIAS, bias, KATTN_F8_E4M3, 4, x);
}
static void fp8_descale_s_cuda(kattn_problem_t p) {
  fp8_e4m3(p);
  in_memory(p, KATTN_FP8_DESCALE_S, factor(KATTN_FP8_DESCALE_S), 1, one, KATTN_MEMORY_CUDA);
}
static void fp8_bwd_e4m3(kattn_problem_t p) {
  fp8_backward(p, KATTN_F8_E4M3, KATTN_F8_E4M3, KATTN_F8_E4M3, 1);
}
static void fp8_bwd_e5m2(kattn_problem_t p) {
  fp8_backward(p, KATTN_F8_E5M2, KATTN_F8_E5M2, KATTN_F8_E5M2, 1);
}
static void fp8_bwd_e4m3_e5m2(kattn_problem_t p) {
  fp8_backward(p, KATTN_F8_E4M3, KATTN_F8_E5M2, KATTN_F8_E5M2, 1);
}
static void fp8_bwd_e5m2_e4m3(kattn_problem_t p) {
  fp8_backward(p, KATTN_F8_E5M2, KATTN_F8_E4M3, KATTN_F8_E4M3, 1);
}
static void fp8_bwd_bf16(kattn_problem_t p) {
  fp8_backward(p, KATTN_F8_E4M3, KATTN_F8_E5M2, KATTN_BF16, 1);
}
static void fp8_bwd_f16(kattn_problem_t p) {
  fp8_backward(p, KATTN_F8_E4M3, KATTN_F8_E5M2, KATTN_F16, 1);
}
static void fp8_bwd_no_factors(kattn_problem_t p) {
  fp8_backward(p, KATTN_F8_E4M3, KATTN_F8_E4M3, KATTN_F8_E4M3, 0);
}
static void fp8_dout_bf16(kattn_problem_t p) {
  fp8_bwd_e4m3(p);
  typed(p, KATTN_DOUT, dout, KATTN_BF16, 4, qx);
}
static void fp8_grads_other_format(kattn_problem_t p) {
  fp8_bwd_e4m3_e5m2(p);
  typed(p, KATTN_DQ, dq, KATTN_F8_E4M3, 4, qx);
  typed(p, KATTN_DK, dk, KATTN_F8_E4M3, 4, kx);
  typed(p, KATTN_DV, dv, KATTN_F8_E4M3, 4, kx);
}
static void fp8_dq_f32(kattn_problem_t p) {
  fp8_bwd_bf16(p);
  typed(p, KATTN_DQ, dq, KATTN_F32, 4, qx);
}
static void fp8_dk_f16(kattn_problem_t p) {
  fp8_bwd_bf16(p);
  typed(p, KATTN_DK, dk, KATTN_F16, 4, kx);
}
static void fp8_dv_format(kattn_problem_t p) {
  fp8_bwd_e4m3(p);
  typed(p, KATTN_DV, dv, KATTN_F8_E5M2, 4, kx);
}
static void fp8_dq_shape(kattn_problem_t p) {
  static const int64_t x[4] = {B, T, N, H - 1};
  fp8_bwd_e4m3(p);
  typed(p, KATTN_DQ, dq, KATTN_F8_E4M3, 4, x);
}
static void fp8_scale_dp_two(kattn_problem_t p) {
  static const int64_t x[1] = {2};
  fp8_bwd_e4m3(p);
  tensor(p, KATTN_FP8_SCALE_DP, factor(KATTN_FP8_SCALE_DP), 1, x);
}
static void fp8_amax_dq_f16(kattn_problem_t p) {
  fp8_bwd_e4m3(p);
  typed(p, KATTN_FP8_AMAX_DQ, factor(KATTN_FP8_AMAX_DQ), KATTN_F16, 1, one);
}
static void fp8_descale_dout_cuda(kattn_problem_t p) {
  fp8_bwd_e4m3(p);
  in_memory(p, KATTN_FP8_DESCALE_DOUT, factor(KATTN_FP8_DESCALE_DOUT), 1, one, KATTN_MEMORY_CUDA);
}
static void fp8_amax_dp_rank_zero(kattn_problem_t p) {
  fp8_bwd_e4m3(p);
  tensor(p, KATTN_FP8_AMAX_DP, factor(KATTN_FP8_AMAX_DP), 0, NULL);
}
static void fp8_scale_dk_bf16(kattn_problem_t p) {
  fp8_bwd_bf16(p);
  tensor(p, KATTN_FP8_SCALE_DK, factor(KATTN_FP8_SCALE_DK), 1, one);
}

/* The statuses, short (the rows fit a line). */
#define INVALID KATTN_ERROR_INVALID_ARGUMENT
#define UNSUPPORTED KATTN_ERROR_UNSUPPORTED

static const bad_input rows[] = {
    /* test_validate_tensors.cpp */
    {"q rank 2", q_rank_two, 0, INVALID, {"q:", "got rank 2 [32, 128]"}},
    {"k rank 3, no cu_seqlens", k_rank_three, 0, INVALID, {"k:", "got rank 3 [2, 24, 2]"}},
    {"v rank 5 (setter)", v_rank_five, 0, INVALID, {"v: rank:", "got 5"}},
    {"out not given", out_missing, 0, INVALID, {"out:", "got none"}},
    {"q data NULL", q_data_null, 0, INVALID, {"q:", "got nullptr"}},
    {"out data NULL", out_data_null, 0, INVALID, {"out:", "got nullptr"}},
    {"T -1 (setter)", t_negative, 0, INVALID, {"q: extents[1]", "got -1"}},
    {"H 0", h_zero, 0, INVALID, {"q:", "got [2, 16, 4, 0]"}},
    {"v's Hv -3 (setter)", hv_negative, 0, INVALID, {"v: extents[3]", "got -3"}},
    {"k's B 1", k_batch, 0, INVALID, {"k:", "got [1, 24, 2, 32]"}},
    {"k's H 31", k_head_dim, 0, INVALID, {"k:", "got [2, 24, 2, 31]"}},
    {"v's K 1", v_heads, 0, INVALID, {"v:", "got [2, 24, 1, 32]"}},
    {"out's N 2", out_heads, 0, INVALID, {"out:", "got [2, 16, 2, 32]"}},
    {"out's Hv 32, v's 16", out_value_dim, 0, INVALID, {"out:", "Hv=16"}},
    {"v f32, q bf16", v_dtype, 0, INVALID, {"v:", "got f32"}},
    {"out f16, q f32", out_dtype, 0, INVALID, {"out:", "got f16"}},
    {"q k v out i32", integer_q, 0, INVALID, {"q:", "got i32"}},
    {"k in CUDA memory", k_cuda, 0, INVALID, {"k:", "got cuda_device"}},
    {"lse in HIP memory", lse_hip, 0, INVALID, {"extras.lse:", "got hip_device"}},
    {"q stride -128", q_stride_negative, 0, INVALID, {"q:", "[2048, -128, 32, 1]"}},
    {"bias data, rank 0", bias_rank_zero, 0, INVALID, {"extras.bias:", "got rank 0"}},
    {"fp8 e4m3 (valid)", fp8_e4m3, 0, UNSUPPORTED, {"no backend can run", "f8_e4m3"}},
    {"fp8 e5m2 (valid)", fp8_e5m2, 0, UNSUPPORTED, {"no backend can run", "f8_e5m2"}},
    /* test_validate_dims.cpp: valid */
    {"padded, empty q (valid)", padded_empty, 0, KATTN_OK, {NULL, NULL}},
    {"broadcasts (valid)", broadcasts, 0, KATTN_OK, {NULL, NULL}},
    {"MQA, Hv 16 (valid)", mqa_hv, 0, KATTN_OK, {NULL, NULL}},
    {"strides (valid)", strides_valid, 0, KATTN_OK, {NULL, NULL}},
    {"causal, left 2 (valid)", causal_window, 0, KATTN_OK, {NULL, NULL}},
    {"backward, no lse (valid)", lse_unset, 1, KATTN_OK, {NULL, NULL}},
    /* test_validate_options.cpp */
    {"scale -0.5", scale_negative, 0, INVALID, {"options.scale:", "got -0.5"}},
    {"scale 0", scale_zero, 0, INVALID, {"options.scale:", "got 0"}},
    {"scale inf", scale_inf, 0, INVALID, {"options.scale:", "got inf"}},
    {"softcap NaN", softcap_nan, 0, INVALID, {"options.softcap:", "got nan"}},
    {"dropout p 1", dropout_one, 0, INVALID, {"options.dropout_p:", "got 1"}},
    {"dropout p -0.1", dropout_negative, 0, INVALID, {"options.dropout_p:", "got -0.1"}},
    {"dropout p NaN", dropout_nan, 0, INVALID, {"options.dropout_p:", "got nan"}},
    {"dropout offset 2^32", dropout_offset, 0, INVALID, {"options.dropout_offset:", "4294967296"}},
    {"dropout, B*N 2^32", dropout_heads, 0, INVALID, {"options.dropout_p:", "131072*32768"}},
    {"dropout, T 2^32", dropout_t, 0, INVALID, {"options.dropout_p:", "T = 4294967296"}},
    {"dropout, S 2^34", dropout_s, 0, INVALID, {"options.dropout_p:", "S = 17179869184"}},
    {"window right -2", window_right, 0, INVALID, {"options.window_right:", "got -2"}},
    {"causal, window right 3", causal_right, 0, INVALID, {"options.window_right:", "got 3"}},
    {"backend 99 (setter)", backend_99, 0, INVALID, {"backend:", "got 99"}},
    /* test_validate_extras.cpp */
    {"lse f16", lse_f16, 0, INVALID, {"extras.lse:", "got f16"}},
    {"mask's S 23", mask_keys, 0, INVALID, {"extras.mask:", "got [2, 4, 16, 23]"}},
    {"mask rank 2", mask_rank_two, 0, INVALID, {"extras.mask:", "got rank 2 [16, 24]"}},
    {"bias's B 3", bias_batch, 0, INVALID, {"extras.bias:", "got [3, 1, 16, 24]"}},
    {"bias's T 1", bias_over_t, 0, INVALID, {"extras.bias:", "got [2, 4, 1, 24]"}},
    {"bias bool", bias_bool, 0, INVALID, {"extras.bias:", "got bool"}},
    {"bias data NULL", bias_data_null, 0, INVALID, {"extras.bias:", "got nullptr"}},
    {"alibi slopes f16", slopes_f16, 0, INVALID, {"extras.alibi_slopes:", "got f16"}},
    {"seqlens_q [3]", seqlens_q_extent, 0, INVALID, {"extras.seqlens_q:", "got [3]"}},
    {"seqlens_k f32", seqlens_k_f32, 0, INVALID, {"extras.seqlens_k:", "got f32"}},
    {"seqlens_k -1", seqlens_k_negative, 0, INVALID, {"extras.seqlens_k:", "got -1 at index 0"}},
    {"max_seqlen_k, batched", max_seqlen_unpacked, 0, INVALID, {"extras.max_seqlen_k:", "got 5"}},
    /* test_validate_varlen.cpp */
    {"packed cu_seqlens_q[0] 1",
     packed_first_offset,
     0,
     INVALID,
     {"extras.cu_seqlens_q:", "got 1"}},
    {"packed cu_seqlens_k [4]", packed_cu_k_batch, 0, INVALID, {"extras.cu_seqlens_k:", "got [4]"}},
    {"packed cu_seqlens_q [0]", packed_cu_empty, 0, INVALID, {"extras.cu_seqlens_q:", "got [0]"}},
    {"packed cu_seqlens_q f32", packed_cu_f32, 0, INVALID, {"extras.cu_seqlens_q:", "got f32"}},
    {"packed and padded",
     packed_and_padded,
     0,
     INVALID,
     {"extras.seqlens_q:", "mutually exclusive"}},
    {"packed, q rank 4", packed_q_rank_four, 0, INVALID, {"q:", "got rank 4 [2, 16, 4, 32]"}},
    {"packed, out's 31 tokens", packed_out_tokens, 0, INVALID, {"out:", "got [31, 4, 32]"}},
    {"packed with bias", packed_bias, 0, INVALID, {"extras.bias:", "packed varlen"}},
    {"packed with mask", packed_mask, 0, INVALID, {"extras.mask:", "packed varlen"}},
    {"packed, lse [B, N, T]", packed_lse_batched, 0, INVALID, {"extras.lse:", "got [2, 4, 16]"}},
    {"packed CUDA, no max_q", packed_cuda_no_max, 0, INVALID, {"extras.max_seqlen_q:", "got 0"}},
    {"packed max_seqlen_k 49",
     packed_max_seqlen_long,
     0,
     INVALID,
     {"extras.max_seqlen_k:", "got 49"}},
    /* test_validate_backward.cpp */
    {"dk bf16, k f32", dk_dtype, 1, INVALID, {"dk:", "got bf16"}},
    {"dv missing", dv_missing, 1, INVALID, {"dv:", "got none"}},
    {"dout's shape", dout_shape, 1, INVALID, {"dout:", "got [2, 15, 4, 32]"}},
    {"dout data NULL", dout_data_null, 1, INVALID, {"dout:", "got nullptr"}},
    {"dq in CUDA memory", dq_cuda, 1, INVALID, {"dq:", "got cuda_device"}},
    {"dk stride -1", dk_stride_negative, 1, INVALID, {"dk:", "[-1, 64, 32, 1]"}},
    {"dv's strides overlap", dv_strides_overlap, 1, INVALID, {"dv:", "[1536, 0, 32, 1]"}},
    {"dbias's B 2, bias's 1", dbias_shape, 1, INVALID, {"dbias:", "got [2, 4, 16, 24]"}},
    {"dbias f16, bias f32", dbias_dtype, 1, INVALID, {"dbias:", "got f16"}},
    {"backward, out's N 2", out_heads, 1, INVALID, {"out:", "got [2, 16, 2, 32]"}},
    {"backward, causal, right 2", causal_right_two, 1, INVALID, {"options.window_right:", "got 2"}},
    {"backward, lse f64", lse_f64, 1, INVALID, {"extras.lse:", "got f64"}},
    {"backward, out stride 0", out_broadcast, 1, KATTN_OK, {NULL, NULL}},
    {"backward, dq stride 0", dq_broadcast, 1, INVALID, {"dq:", "[2048, 0, 32, 1]"}},
    /* test_validate_fp8.cpp */
    {"fp8, no factors (valid)", fp8_no_factors, 0, UNSUPPORTED, {"no backend can run", "f8_e4m3"}},
    {"fp8 scale_s data, rank 0",
     fp8_scale_s_rank_zero,
     0,
     INVALID,
     {"extras.fp8.scale_s:", "got rank 0"}},
    {"fp8 descale_k [2]", fp8_descale_k_two, 0, INVALID, {"extras.fp8.descale_k:", "got [2]"}},
    {"fp8 amax_o f16", fp8_amax_o_f16, 0, INVALID, {"extras.fp8.amax_o:", "got f16"}},
    {"fp8 v e5m2, q e4m3", fp8_v_format, 0, INVALID, {"v:", "got f8_e5m2"}},
    {"fp8 bias f8_e4m3", fp8_bias, 0, INVALID, {"extras.bias:", "got f8_e4m3"}},
    {"fp8 descale_s in CUDA",
     fp8_descale_s_cuda,
     0,
     INVALID,
     {"extras.fp8.descale_s:", "cuda_device"}},
    {"fp8 bwd e4m3 (valid)", fp8_bwd_e4m3, 1, UNSUPPORTED, {"no backend can run", "f8_e4m3"}},
    {"fp8 bwd e5m2 (valid)", fp8_bwd_e5m2, 1, UNSUPPORTED, {"no backend can run", "f8_e5m2"}},
    {"fp8 bwd e4m3, e5m2 (valid)",
     fp8_bwd_e4m3_e5m2,
     1,
     UNSUPPORTED,
     {"no backend can run", "f8_e4m3"}},
    {"fp8 bwd e5m2, e4m3 (valid)",
     fp8_bwd_e5m2_e4m3,
     1,
     UNSUPPORTED,
     {"no backend can run", "f8_e5m2"}},
    {"fp8 bwd, bf16 dq (valid)", fp8_bwd_bf16, 1, UNSUPPORTED, {"no backend can run", "f8_e4m3"}},
    {"fp8 bwd, f16 dq (valid)", fp8_bwd_f16, 1, UNSUPPORTED, {"no backend can run", "f8_e4m3"}},
    {"fp8 bwd, no factors (valid)",
     fp8_bwd_no_factors,
     1,
     UNSUPPORTED,
     {"no backend can run", "f8_e4m3"}},
    {"fp8 dout bf16", fp8_dout_bf16, 1, INVALID, {"dout:", "got bf16"}},
    {"fp8 dq e4m3, dout e5m2", fp8_grads_other_format, 1, INVALID, {"dq:", "got f8_e4m3"}},
    {"fp8 dq f32", fp8_dq_f32, 1, INVALID, {"dq:", "got f32"}},
    {"fp8 dk f16, dq bf16", fp8_dk_f16, 1, INVALID, {"dk:", "got f16"}},
    {"fp8 dv e5m2, dq e4m3", fp8_dv_format, 1, INVALID, {"dv:", "got f8_e5m2"}},
    {"fp8 dq's shape", fp8_dq_shape, 1, INVALID, {"dq:", "got [2, 16, 4, 31]"}},
    {"fp8 scale_dp [2]", fp8_scale_dp_two, 1, INVALID, {"fp8.scale_dp:", "got [2]"}},
    {"fp8 amax_dq f16", fp8_amax_dq_f16, 1, INVALID, {"fp8.amax_dq:", "got f16"}},
    {"fp8 descale_dout in CUDA",
     fp8_descale_dout_cuda,
     1,
     INVALID,
     {"fp8.descale_dout:", "cuda_device"}},
    {"fp8 amax_dp data, rank 0", fp8_amax_dp_rank_zero, 1, INVALID, {"fp8.amax_dp:", "got rank 0"}},
    {"fp8 scale_dk, bf16 dq", fp8_scale_dk_bf16, 1, INVALID, {"fp8.scale_dk:", "bf16"}},
};

int main(void) {
  return run_rows("test_c_bad_inputs_suite", rows, (int)(sizeof rows / sizeof rows[0]));
}
