/* The harness of the C API's bad-input tables (test_c_bad_inputs.c: a row per kind of bad input;
 * test_c_bad_inputs_suite.c: a row per case of the validation suite, tests/unit/
 * test_validate_*.cpp). A row is the valid problem of base() with one change, run forward or
 * backward: its status, a message that names the row's words, and on failure every output
 * untouched (out and lse in the forward; dq, dk, dv, dbias and the FP8 factors always), and
 * kattn_explain and the plan of the row's direction must refuse the problem alike. A change made
 * through a setter that must refuse it itself reports through setter(): the row's status and
 * message are then the setter's, and the problem, unchanged, must still run. Included by one
 * source file of each test program (its buffers are the program's). */
#ifndef KOKKOSATTN_TESTS_C_BAD_INPUTS_H
#define KOKKOSATTN_TESTS_C_BAD_INPUTS_H

#include <kokkosattn.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { B = 2, T = 16, S = 24, N = 4, K = 2, H = 32, QN = B * T * N * H, KN = B * S * K * H };
enum { BNT = B * N * T, BNTS = BNT * S, FP8_FACTORS = KATTN_FP8_AMAX_DP - KATTN_FP8_DESCALE_Q + 1 };
static float q[QN], k[KN], v[KN], o[QN], dout[QN], dq[QN], dk[KN], dv[KN], lse[BNT];
static float bias[BNTS], dbias[BNTS], slopes[B * N];
static float fp8[FP8_FACTORS]; /* the FP8 factors, one each: factor(role) */
static float* factor(kattn_role_t role) {
  return &fp8[role - KATTN_FP8_DESCALE_Q];
}
static int seqlens[B + 1], cu_q[B + 1], cu_k[B + 1];
static const float poison = -12345.0f;
static const int64_t qx[4] = {B, T, N, H}, kx[4] = {B, S, K, H}, lx[3] = {B, N, T};

static kattn_status_t tensor(kattn_problem_t p, kattn_role_t role, void* data, int rank,
                             const int64_t* extents) {
  return kattn_problem_set_tensor(p, role, data, KATTN_F32, rank, extents, NULL, KATTN_MEMORY_HOST);
}

/* The valid problem: q, k, v, out (GQA 4/2, T != S), the LSE, and for the backward dout, dq, dk,
 * dv. */
static void base(kattn_problem_t p) {
  tensor(p, KATTN_Q, q, 4, qx);
  tensor(p, KATTN_K, k, 4, kx);
  tensor(p, KATTN_V, v, 4, kx);
  tensor(p, KATTN_OUT, o, 4, qx);
  tensor(p, KATTN_LSE, lse, 3, lx);
  tensor(p, KATTN_DOUT, dout, 4, qx);
  tensor(p, KATTN_DQ, dq, 4, qx);
  tensor(p, KATTN_DK, dk, 4, kx);
  tensor(p, KATTN_DV, dv, 4, kx);
}

/* Packed varlen (forward): q, out [B T, N, H], k, v [B S, K, H], sequences of 9 and 23 queries,
 * 20 and 28 keys; no LSE. The valid one is a row of its own. */
static void packed(kattn_problem_t p) {
  static const int64_t pq[3] = {B * T, N, H}, pk[3] = {B * S, K, H}, c[1] = {B + 1};
  cu_q[0] = 0, cu_q[1] = 9, cu_q[2] = B * T;
  cu_k[0] = 0, cu_k[1] = 20, cu_k[2] = B * S;
  tensor(p, KATTN_Q, q, 3, pq);
  tensor(p, KATTN_K, k, 3, pk);
  tensor(p, KATTN_V, v, 3, pk);
  tensor(p, KATTN_OUT, o, 3, pq);
  tensor(p, KATTN_LSE, NULL, 0, NULL);
  kattn_problem_set_tensor(p, KATTN_CU_SEQLENS_Q, cu_q, KATTN_I32, 1, c, NULL, KATTN_MEMORY_HOST);
  kattn_problem_set_tensor(p, KATTN_CU_SEQLENS_K, cu_k, KATTN_I32, 1, c, NULL, KATTN_MEMORY_HOST);
}

/* The first refusal of a setter in the row's change, its message kept (KATTN_OK: none). */
static kattn_status_t setter_status;
static char setter_message[1024];
static inline void setter(kattn_status_t status) {
  if (status != KATTN_OK && setter_status == KATTN_OK) {
    setter_status = status;
    snprintf(setter_message, sizeof setter_message, "%s", kattn_last_error());
  }
}

typedef struct {
  const char* label;
  void (*change)(kattn_problem_t);
  int backward;
  kattn_status_t status;
  const char* names[2]; /* both must be in the message (NULL: none) */
} bad_input;

/* The outputs: out and lse (the backward's inputs, poisoned in forward rows only), then those of
 * every row. */
static float* const outputs[] = {o, lse, dq, dk, dv, dbias, fp8};
static const int output_sizes[] = {QN, BNT, QN, KN, KN, BNTS, FP8_FACTORS};
enum { OUTPUTS = (int)(sizeof output_sizes / sizeof output_sizes[0]) };

static void poison_outputs(int backward) {
  for (int t = backward ? 2 : 0; t < OUTPUTS; ++t)
    for (int i = 0; i < output_sizes[t]; ++i)
      outputs[t][i] = poison;
}

static int outputs_untouched(int backward) {
  for (int t = backward ? 2 : 0; t < OUTPUTS; ++t)
    for (int i = 0; i < output_sizes[t]; ++i)
      if (outputs[t][i] != poison)
        return 0;
  return 1;
}

/* `got` with `msg` is what the row expects: `want`, and when that is a failure, its words. */
static int as_expected(kattn_status_t got, const char* msg, kattn_status_t want,
                       const bad_input* row) {
  int ok = got == want;
  for (int n = 0; n < 2 && want != KATTN_OK; ++n)
    ok = ok && (row->names[n] == NULL || strstr(msg, row->names[n]) != NULL);
  return ok;
}

/* The entry points other than the run that validate the problem and choose its backend:
 * kattn_explain (it chooses first, so a valid problem no backend serves is unsupported there too,
 * every backend's verdict in the message) and the plan of the row's direction (NULL when
 * refused). The first that does not answer as the row expects, or NULL. */
static const char* other_entry_disagrees(const bad_input* row, kattn_problem_t p) {
  kattn_plan_t plan = NULL;
  kattn_status_t got = kattn_explain(p, row->backward, NULL, 0, NULL);
  int ok;
  if (!as_expected(got, kattn_last_error(), row->status, row))
    return "kattn_explain";
  got = row->backward ? kattn_plan_create_backward(&plan, p, NULL)
                      : kattn_plan_create(&plan, p, NULL);
  ok = as_expected(got, kattn_last_error(), row->status, row);
  ok = ok && (got == KATTN_OK) == (plan != NULL);
  kattn_plan_destroy(plan);
  return ok ? NULL : row->backward ? "kattn_plan_create_backward" : "kattn_plan_create";
}

/* Runs every row; prints one line each and the count as `test`; 0 when all are as expected. */
static int run_rows(const char* test, const bad_input* rows, int count) {
  int failures = 0;
  for (int i = 0; i < QN; ++i)
    q[i] = o[i] = dout[i] = (float)sin(0.3 * i);
  for (int i = 0; i < KN; ++i)
    k[i] = v[i] = (float)cos(0.2 * i);
  if (kattn_initialize() != KATTN_OK)
    return 1;
  for (int r = 0; r < count; ++r) {
    const bad_input* row = &rows[r];
    kattn_problem_t p = NULL;
    kattn_status_t got;
    char msg[1024];
    const char* other = NULL;
    int ok;
    if (kattn_problem_create(&p) != KATTN_OK)
      return 1;
    base(p);
    if (row->backward && kattn_forward(p, NULL) != KATTN_OK) /* out and lse for the backward */
      return 1;
    setter_status = KATTN_OK;
    row->change(p);
    poison_outputs(row->backward);
    if (setter_status != KATTN_OK) {
      got = setter_status;
      snprintf(msg, sizeof msg, "%s", setter_message);
    } else {
      got = row->backward ? kattn_backward(p, NULL) : kattn_forward(p, NULL);
      snprintf(msg, sizeof msg, "%s", kattn_last_error());
    }
    ok = as_expected(got, msg, row->status, row);
    if (row->status != KATTN_OK)
      ok = ok && outputs_untouched(row->backward);
    if (setter_status != KATTN_OK) /* the refused call changed nothing: the problem still runs */
      other = (row->backward ? kattn_backward(p, NULL) : kattn_forward(p, NULL)) == KATTN_OK
                  ? NULL
                  : "the run after the refused setter";
    else
      other = other_entry_disagrees(row, p);
    printf("%s %-26s status %d: %s\n", ok && !other ? "ok  " : "FAIL", row->label, (int)got, msg);
    if (other)
      printf("     %s: %s\n", other, kattn_last_error());
    failures += !ok || other;
    kattn_problem_destroy(p);
  }
  kattn_finalize();
  printf("%s: %d of %d rows as expected\n", test, count - failures, count);
  return failures ? 1 : 0;
}

#endif
