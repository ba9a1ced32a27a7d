/* Attention from C through kokkosattn.h: causal self-attention at the codelab's shape on host
 * arrays, q, k, v, out row-major [B, T, N, H] (C's natural order), forward then backward, with
 * every status checked. Device memory works the same way: KATTN_MEMORY_CUDA / _HIP pointers and
 * the stream to enqueue on. Checks out, dq, dk and dv against a plain loop in double precision
 * (naive_attention below) and exits non-zero when one differs by more than its tolerance. */
#include <kokkosattn.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define TRY(call)                                                                                  \
  do {                                                                                             \
    if ((call) != KATTN_OK) {                                                                      \
      fprintf(stderr, "%s failed: %s\n", #call, kattn_last_error());                               \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)

enum { B = 4, T = 128, N = 8, H = 64, SIZE = B * T * N * H };
#define AT(b, t, n, h) ((((size_t)(b) * T + (t)) * N + (n)) * H + (h))

/* One (batch, head) of causal attention and its gradients in double: S = scale q k^T over the
 * keys j <= i, P = softmax(S), out = P v; dP = dout v^T, dS = P (dP - rowsum(dout * out)),
 * dq = scale dS k, dk = scale dS^T q, dv = P^T dout. */
static void naive_attention(const float* q, const float* k, const float* v, const float* dout,
                            int b, int n, double scale, double* out, double* dq, double* dk,
                            double* dv) {
  static double p[T][T], ds[T][T];
  for (int i = 0; i < T; ++i) {
    double m = -INFINITY, l = 0, dsum = 0;
    for (int j = 0; j <= i; ++j) {
      double s = 0;
      for (int h = 0; h < H; ++h)
        s += (double)q[AT(b, i, n, h)] * k[AT(b, j, n, h)];
      p[i][j] = scale * s;
      m = fmax(m, p[i][j]);
    }
    for (int j = 0; j <= i; ++j)
      l += p[i][j] = exp(p[i][j] - m);
    for (int j = 0; j <= i; ++j)
      p[i][j] /= l;
    for (int h = 0; h < H; ++h) {
      double o = 0;
      for (int j = 0; j <= i; ++j)
        o += p[i][j] * v[AT(b, j, n, h)];
      out[AT(b, i, n, h)] = o;
      dsum += o * dout[AT(b, i, n, h)];
    }
    for (int j = 0; j <= i; ++j) {
      double dp = 0;
      for (int h = 0; h < H; ++h)
        dp += (double)dout[AT(b, i, n, h)] * v[AT(b, j, n, h)];
      ds[i][j] = p[i][j] * (dp - dsum);
    }
  }
  for (int i = 0; i < T; ++i)
    for (int j = 0; j <= i; ++j)
      for (int h = 0; h < H; ++h) {
        dq[AT(b, i, n, h)] += scale * ds[i][j] * k[AT(b, j, n, h)];
        dk[AT(b, j, n, h)] += scale * ds[i][j] * q[AT(b, i, n, h)];
        dv[AT(b, j, n, h)] += p[i][j] * dout[AT(b, i, n, h)];
      }
}

/* max |got - want| over max |want|: the library accumulates in fp32 (scores, softmax, sums of
 * T = 128 products), so 1e-4 of the largest value leaves room for its rounding and none for a
 * wrong mask, scale or index. */
static int close_to(const char* name, const float* got, const double* want) {
  double err = 0, big = 0;
  for (size_t i = 0; i < SIZE; ++i) {
    err = fmax(err, fabs(got[i] - want[i]));
    big = fmax(big, fabs(want[i]));
  }
  printf("  %-4s max|diff| %.3g (max|ref| %.3g)\n", name, err, big);
  return err <= 1e-4 * big;
}

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
    ok &= close_to(names[t], x[t], ref[t]);
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
