/* The C examples' shape and their check: causal attention and its gradients in a plain loop in
 * double precision, and the comparison of a result with it. Included by attention_c.c (host
 * arrays, fp32) and attention_c_cuda.c (device arrays, bf16, a stream). */
#ifndef KOKKOSATTN_EXAMPLES_NAIVE_ATTENTION_H
#define KOKKOSATTN_EXAMPLES_NAIVE_ATTENTION_H

#include <kokkosattn.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Returns 1 from the calling function, with the library's message, when a call fails. */
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

/* Whether max |got - want| <= tol * max |want| (printed). */
static int close_to(const char* name, const float* got, const double* want, double tol) {
  double err = 0, big = 0;
  for (size_t i = 0; i < SIZE; ++i) {
    err = fmax(err, fabs(got[i] - want[i]));
    big = fmax(big, fabs(want[i]));
  }
  printf("  %-4s max|diff| %.3g (max|ref| %.3g)\n", name, err, big);
  return err <= tol * big;
}

#endif
