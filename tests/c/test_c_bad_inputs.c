/* Bad input through the C API: one row per kind of input the validation (core/src/validate/)
 * refuses, each a valid problem with one thing changed. Every row must give its status, a
 * message that names the argument (and says what came), and leave every output untouched. A
 * first row changes nothing and must run: the table cannot pass by refusing everything. The
 * harness: c_bad_inputs.h; a row per case of the validation suite: test_c_bad_inputs_suite.c. */
#include "c_bad_inputs.h"

/* One change each (the name is the row's label). */
static void nothing(kattn_problem_t p) {
  (void)p;
}
static void scale_nan(kattn_problem_t p) {
  kattn_problem_set_scale(p, NAN);
}
static void softcap_negative(kattn_problem_t p) {
  kattn_problem_set_softcap(p, -1.0);
}
static void window_below_minus_one(kattn_problem_t p) {
  kattn_problem_set_window(p, -2, -1);
}
static void dropout_above_one(kattn_problem_t p) {
  kattn_problem_set_dropout(p, 1.5, 0, 0);
}
static void heads_not_a_multiple(kattn_problem_t p) {
  static const int64_t x[4] = {B, S, 3, H};
  tensor(p, KATTN_K, k, 4, x);
  tensor(p, KATTN_V, v, 4, x);
}
static void v_keys_differ(kattn_problem_t p) {
  static const int64_t x[4] = {B, S - 1, K, H};
  tensor(p, KATTN_V, v, 4, x);
}
static void out_shape(kattn_problem_t p) {
  static const int64_t x[4] = {B, T + 1, N, H};
  tensor(p, KATTN_OUT, o, 4, x);
}
static void k_dtype_differs(kattn_problem_t p) {
  kattn_problem_set_tensor(p, KATTN_K, k, KATTN_BF16, 4, kx, NULL, KATTN_MEMORY_HOST);
}
static void q_missing(kattn_problem_t p) {
  tensor(p, KATTN_Q, NULL, 0, NULL);
}
static void q_rank_three(kattn_problem_t p) {
  tensor(p, KATTN_Q, q, 3, qx);
}
static void out_is_q(kattn_problem_t p) {
  tensor(p, KATTN_OUT, q, 4, qx);
}
static void out_strides_overlap(kattn_problem_t p) {
  static const int64_t st[4] = {T * N * H, N * H, H, 0};
  kattn_problem_set_tensor(p, KATTN_OUT, o, KATTN_F32, 4, qx, st, KATTN_MEMORY_HOST);
}
static void lse_shape(kattn_problem_t p) {
  static const int64_t x[3] = {B, N, T + 1};
  tensor(p, KATTN_LSE, lse, 3, x);
}
static void bias_shape(kattn_problem_t p) {
  static const int64_t x[4] = {B, N, T, S + 1};
  tensor(p, KATTN_BIAS, bias, 4, x);
}
static void mask_not_bool(kattn_problem_t p) {
  static const int64_t x[4] = {B, N, T, S};
  tensor(p, KATTN_MASK, bias, 4, x);
}
static void alibi_slopes_length(kattn_problem_t p) {
  static const int64_t x[1] = {N + 1};
  tensor(p, KATTN_ALIBI_SLOPES, slopes, 1, x);
}
static void seqlens_q_past_t(kattn_problem_t p) {
  static const int64_t x[1] = {B};
  seqlens[0] = T + 1;
  seqlens[1] = T;
  kattn_problem_set_tensor(p, KATTN_SEQLENS_Q, seqlens, KATTN_I32, 1, x, NULL, KATTN_MEMORY_HOST);
}
static void cu_seqlens_q_alone(kattn_problem_t p) {
  static const int64_t x[1] = {B + 1};
  seqlens[0] = 0;
  seqlens[1] = T;
  seqlens[2] = 2 * T;
  kattn_problem_set_tensor(p, KATTN_CU_SEQLENS_Q, seqlens, KATTN_I32, 1, x, NULL,
                           KATTN_MEMORY_HOST);
}
static void dout_missing(kattn_problem_t p) {
  tensor(p, KATTN_DOUT, NULL, 0, NULL);
}
static void dq_shape(kattn_problem_t p) {
  static const int64_t x[4] = {B, T, N, H - 1};
  tensor(p, KATTN_DQ, dq, 4, x);
}
static void dk_is_k(kattn_problem_t p) {
  tensor(p, KATTN_DK, k, 4, kx);
}
static void dbias_without_bias(kattn_problem_t p) {
  static const int64_t x[4] = {B, N, T, S};
  tensor(p, KATTN_DBIAS, bias, 4, x);
}
static void packed_offsets_decrease(kattn_problem_t p) {
  packed(p);
  cu_q[1] = B * T + 1;
}
static void packed_last_offset(kattn_problem_t p) {
  packed(p);
  cu_k[2] = B * S - 1;
}
static void packed_max_seqlen_short(kattn_problem_t p) {
  packed(p);
  kattn_problem_set_max_seqlens(p, 5, 0);
}
static void lse_strides_overlap(kattn_problem_t p) {
  static const int64_t st[3] = {N * T, T, 0};
  kattn_problem_set_tensor(p, KATTN_LSE, lse, KATTN_F32, 3, lx, st, KATTN_MEMORY_HOST);
}
static void dk_strides_overlap(kattn_problem_t p) {
  static const int64_t st[4] = {S * K * H, K * H, 0, 1};
  kattn_problem_set_tensor(p, KATTN_DK, dk, KATTN_F32, 4, kx, st, KATTN_MEMORY_HOST);
}
static void fp8_factor_f32_q(kattn_problem_t p) {
  static const int64_t x[1] = {1};
  tensor(p, KATTN_FP8_DESCALE_Q, factor(KATTN_FP8_DESCALE_Q), 1, x);
}
static void fp8_backward_factor_f32_q(kattn_problem_t p) {
  static const int64_t x[1] = {1};
  tensor(p, KATTN_FP8_AMAX_DQ, factor(KATTN_FP8_AMAX_DQ), 1, x);
}

static const bad_input rows[] = {
    {"nothing (forward)", nothing, 0, KATTN_OK, {NULL, NULL}},
    {"nothing (backward)", nothing, 1, KATTN_OK, {NULL, NULL}},
    {"scale NaN", scale_nan, 0, KATTN_ERROR_INVALID_ARGUMENT, {"scale", "nan"}},
    {"softcap < 0", softcap_negative, 0, KATTN_ERROR_INVALID_ARGUMENT, {"softcap", "-1"}},
    {"window left -2", window_below_minus_one, 0, KATTN_ERROR_INVALID_ARGUMENT, {"window", "-2"}},
    {"dropout p 1.5", dropout_above_one, 0, KATTN_ERROR_INVALID_ARGUMENT, {"dropout", "1.5"}},
    {"N % K != 0", heads_not_a_multiple, 0, KATTN_ERROR_INVALID_ARGUMENT, {"k", "3"}},
    {"v's keys != k's", v_keys_differ, 0, KATTN_ERROR_INVALID_ARGUMENT, {"v", "23"}},
    {"out's shape", out_shape, 0, KATTN_ERROR_INVALID_ARGUMENT, {"out", "17"}},
    {"k bf16, q f32", k_dtype_differs, 0, KATTN_ERROR_INVALID_ARGUMENT, {"k", "bf16"}},
    {"q missing", q_missing, 0, KATTN_ERROR_INVALID_ARGUMENT, {"q", NULL}},
    {"q rank 3", q_rank_three, 0, KATTN_ERROR_INVALID_ARGUMENT, {"q", "rank"}},
    {"out is q", out_is_q, 0, KATTN_ERROR_INVALID_ARGUMENT, {"out", "q"}},
    {"out's strides overlap", out_strides_overlap, 0, KATTN_ERROR_INVALID_ARGUMENT, {"out", NULL}},
    {"lse's shape", lse_shape, 0, KATTN_ERROR_INVALID_ARGUMENT, {"lse", "17"}},
    {"bias's shape", bias_shape, 0, KATTN_ERROR_INVALID_ARGUMENT, {"bias", "25"}},
    {"mask f32", mask_not_bool, 0, KATTN_ERROR_INVALID_ARGUMENT, {"mask", "f32"}},
    {"alibi slopes N + 1", alibi_slopes_length, 0, KATTN_ERROR_INVALID_ARGUMENT, {"alibi", "5"}},
    {"seqlens_q > T", seqlens_q_past_t, 0, KATTN_ERROR_INVALID_ARGUMENT, {"seqlens_q", "17"}},
    {"cu_seqlens_q alone",
     cu_seqlens_q_alone,
     0,
     KATTN_ERROR_INVALID_ARGUMENT,
     {"cu_seqlens_k", "cu_seqlens_q"}},
    {"dout missing", dout_missing, 1, KATTN_ERROR_INVALID_ARGUMENT, {"dout", NULL}},
    {"dq's shape", dq_shape, 1, KATTN_ERROR_INVALID_ARGUMENT, {"dq", "31"}},
    {"dk is k", dk_is_k, 1, KATTN_ERROR_INVALID_ARGUMENT, {"dk", "k"}},
    {"dbias without bias", dbias_without_bias, 1, KATTN_ERROR_INVALID_ARGUMENT, {"dbias", NULL}},
    {"packed varlen (valid)", packed, 0, KATTN_OK, {NULL, NULL}},
    {"packed offsets decrease",
     packed_offsets_decrease,
     0,
     KATTN_ERROR_INVALID_ARGUMENT,
     {"cu_seqlens_q", "33"}},
    {"packed last offset",
     packed_last_offset,
     0,
     KATTN_ERROR_INVALID_ARGUMENT,
     {"cu_seqlens_k", "47"}},
    {"packed max_seqlen_q short",
     packed_max_seqlen_short,
     0,
     KATTN_ERROR_INVALID_ARGUMENT,
     {"max_seqlen_q", "23"}},
    {"lse's strides overlap", lse_strides_overlap, 0, KATTN_ERROR_INVALID_ARGUMENT, {"lse", NULL}},
    {"dk's strides overlap", dk_strides_overlap, 1, KATTN_ERROR_INVALID_ARGUMENT, {"dk", NULL}},
    {"fp8 descale_q, f32 q",
     fp8_factor_f32_q,
     0,
     KATTN_ERROR_INVALID_ARGUMENT,
     {"descale_q", "f8_e4m3"}},
    {"fp8 amax_dq, f32 q",
     fp8_backward_factor_f32_q,
     1,
     KATTN_ERROR_INVALID_ARGUMENT,
     {"amax_dq", "f8_e4m3"}},
};

int main(void) {
  return run_rows("test_c_bad_inputs", rows, (int)(sizeof rows / sizeof rows[0]));
}
