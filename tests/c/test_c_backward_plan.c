/* Backward plans through the C API (host memory): a plan's gradients are bitwise those of
 * kattn_backward on the same pointers (the same backend runs), on new pointers too; a plan of
 * the other direction, a NULL pointer and a gradient that aliases an input are refused with the
 * argument named and the gradients untouched. */
#include <kokkosattn.h>

#include <stdio.h>
#include <string.h>

#include "c_check.h"

enum { B = 2, T = 19, S = 23, N = 4, K = 2, H = 16, QN = B * T * N * H, KN = B * S * K * H };
static float q[QN], k[KN], v[KN], o[QN], lse[B * N * T], dout[QN], dout2[QN];
static float dq[QN], dk[KN], dv[KN], pq[QN], pk[KN], pv[KN];
static const float poison = -12345.0f;
static const int64_t qx[4] = {B, T, N, H}, kx[4] = {B, S, K, H}, lx[3] = {B, N, T};

static void fill(float* x, int n, unsigned seed) {
  for (int i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    x[i] = (float)((seed >> 8) / 16777216.0 * 2.0 - 1.0);
  }
}
static void set(kattn_problem_t p, kattn_role_t role, float* data, int rank, const int64_t* e) {
  CHECK(kattn_problem_set_tensor(p, role, data, KATTN_F32, rank, e, NULL, KATTN_MEMORY_HOST) ==
        KATTN_OK);
}
static void poison_grads(float* a, float* b, float* c) {
  for (int i = 0; i < QN; ++i)
    a[i] = poison;
  for (int i = 0; i < KN; ++i)
    b[i] = c[i] = poison;
}
static int same(const float* x, const float* y, int n) {
  return memcmp(x, y, (size_t)n * sizeof(float)) == 0;
}
static int all_poison(const float* x, int n) {
  for (int i = 0; i < n; ++i)
    if (x[i] != poison)
      return 0;
  return 1;
}

int main(void) {
  kattn_problem_t p = NULL;
  kattn_plan_t plan = NULL, fplan = NULL;
  kattn_backend_t chosen = KATTN_BACKEND_AUTO;
  fill(q, QN, 1), fill(k, KN, 2), fill(v, KN, 3), fill(dout, QN, 4), fill(dout2, QN, 5);
  CHECK(kattn_initialize() == KATTN_OK);
  CHECK(kattn_problem_create(&p) == KATTN_OK);
  set(p, KATTN_Q, q, 4, qx), set(p, KATTN_K, k, 4, kx), set(p, KATTN_V, v, 4, kx);
  set(p, KATTN_OUT, o, 4, qx), set(p, KATTN_LSE, lse, 3, lx), set(p, KATTN_DOUT, dout, 4, qx);
  set(p, KATTN_DQ, dq, 4, qx), set(p, KATTN_DK, dk, 4, kx), set(p, KATTN_DV, dv, 4, kx);
  CHECK(kattn_problem_set_causal(p, 1) == KATTN_OK);
  CHECK(kattn_forward(p, NULL) == KATTN_OK); /* out and lse */

  CHECK(kattn_plan_create_backward(&plan, p, NULL) == KATTN_OK && plan != NULL);
  CHECK(kattn_plan_backend(plan, &chosen) == KATTN_OK && chosen != KATTN_BACKEND_AUTO);

  /* The plan on the problem's own pointers, then on a new dout: each as kattn_backward. */
  for (int round = 0; round < 2; ++round) {
    float* d = round == 0 ? dout : dout2;
    set(p, KATTN_DOUT, d, 4, qx);
    poison_grads(dq, dk, dv);
    CHECK(kattn_backward(p, NULL) == KATTN_OK);
    poison_grads(pq, pk, pv);
    CHECK(kattn_plan_execute_backward(plan, q, k, v, o, d, pq, pk, pv) == KATTN_OK);
    CHECK(same(pq, dq, QN) && same(pk, dk, KN) && same(pv, dv, KN));
    CHECK(!all_poison(pq, QN));
  }

  /* Refused, the gradients untouched: the other direction, a NULL pointer, dq aliasing q. */
  poison_grads(pq, pk, pv);
  CHECK(kattn_plan_execute(plan, q, k, v, o) == KATTN_ERROR_INVALID_ARGUMENT);
  CHECK(strstr(kattn_last_error(), "kattn_plan_create_backward") != NULL);
  CHECK(kattn_plan_execute_backward(plan, q, k, v, o, NULL, pq, pk, pv) ==
        KATTN_ERROR_INVALID_ARGUMENT);
  CHECK(strstr(kattn_last_error(), "dout") != NULL);
  CHECK(kattn_plan_execute_backward(plan, q, k, v, o, dout, q, pk, pv) ==
        KATTN_ERROR_INVALID_ARGUMENT);
  CHECK(strstr(kattn_last_error(), "dq") != NULL);
  CHECK(all_poison(pq, QN) && all_poison(pk, KN) && all_poison(pv, KN));
  CHECK(kattn_plan_create(&fplan, p, NULL) == KATTN_OK);
  CHECK(kattn_plan_execute_backward(fplan, q, k, v, o, dout, pq, pk, pv) ==
        KATTN_ERROR_INVALID_ARGUMENT);
  CHECK(strstr(kattn_last_error(), "backward plan") != NULL);
  CHECK(all_poison(pq, QN));

  CHECK(kattn_plan_destroy(fplan) == KATTN_OK);
  CHECK(kattn_plan_destroy(plan) == KATTN_OK);
  CHECK(kattn_problem_destroy(p) == KATTN_OK);
  CHECK(kattn_finalize() == KATTN_OK);
  printf("test_c_backward_plan: %s (backend %d)\n", failures ? "FAILED" : "OK", (int)chosen);
  return failures ? 1 : 0;
}
