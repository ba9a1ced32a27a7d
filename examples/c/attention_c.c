/* Attention from C through kokkosattn.h: causal self-attention at the codelab's shape on host
 * arrays, q, k, v, out row-major [B, T, N, H] (C's natural order), forward then backward, with
 * every status checked. Device memory works the same way: KATTN_MEMORY_CUDA / _HIP pointers and
 * the stream to enqueue on. Checks out, dq, dk and dv against a plain loop in double precision
 * (naive_attention.h) and exits non-zero when one differs by more than its tolerance. */
#include <kokkosattn.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "naive_attention.h"

int main(void) {
  enum { Q, K, V, DOUT, OUT, DQ, DK, DV, NT };
  static const kattn_role_t roles[NT] = {KATTN_Q,   KATTN_K,  KATTN_V,  KATTN_DOUT,
                                         KATTN_OUT, KATTN_DQ, KATTN_DK, KATTN_DV};
  static const char* names[NT] = {"q", "k", "v", "dout", "out", "dq", "dk", "dv"};
  float* x[NT];
  double* ref[NT];
  static float lse[B * N * T];
  const int64_t extents[4] = {B, T, N, H}, lse_extents[3] = {B, N, T};
  const double scale = 1.0 / sqrt((double)H);
  kattn_problem_t problem;
  kattn_backend_t backend;
  /* The library accumulates in fp32 (scores, softmax, sums of T = 128 products): 1e-4 of the
   * largest value leaves room for its rounding and none for a wrong mask, scale or index. */
  int ok = 1;
  for (int t = 0; t < NT; ++t) {
    x[t] = malloc(SIZE * sizeof(float));
    ref[t] = calloc(SIZE, sizeof(double));
    if (x[t] == NULL || ref[t] == NULL)
      return 1;
    for (size_t i = 0; i < SIZE; ++i) /* inputs in [-1, 1]; outputs poisoned */
      x[t][i] = t < OUT ? (float)sin(0.1 * i + t) : NAN;
  }
  TRY(kattn_initialize());
  TRY(kattn_problem_create(&problem));
  for (int t = 0; t < NT; ++t)
    TRY(kattn_problem_set_tensor(problem, roles[t], x[t], KATTN_F32, 4, extents, NULL,
                                 KATTN_MEMORY_HOST));
  TRY(kattn_problem_set_tensor(problem, KATTN_LSE, lse, KATTN_F32, 3, lse_extents, NULL,
                               KATTN_MEMORY_HOST));
  TRY(kattn_problem_set_causal(problem, 1));
  TRY(kattn_selected_backend(problem, &backend));
  TRY(kattn_forward(problem, NULL)); /* host memory: done when it returns */
  TRY(kattn_backward(problem, NULL));
  for (int b = 0; b < B; ++b)
    for (int n = 0; n < N; ++n)
      naive_attention(x[Q], x[K], x[V], x[DOUT], b, n, scale, ref[OUT], ref[DQ], ref[DK], ref[DV]);
  printf("attention_c: kokkos-attention %s, backend %d, B=%d T=%d N=%d H=%d causal, fp32:\n",
         kattn_version(), (int)backend, B, T, N, H);
  for (int t = OUT; t < NT; ++t)
    ok &= close_to(names[t], x[t], ref[t], 1e-4);
  TRY(kattn_problem_destroy(problem));
  TRY(kattn_finalize());
  for (int t = 0; t < NT; ++t) {
    free(x[t]);
    free(ref[t]);
  }
  if (!ok)
    fprintf(stderr, "attention_c: a result differs from the plain loop\n");
  return ok ? 0 : 1;
}
