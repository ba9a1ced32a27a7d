/* Attention from C through kokkosattn.h: causal self-attention of one sequence on host arrays,
 * q, k, v, out row-major [B, T, N, H] (C's natural order), with every status checked. Device
 * memory works the same way: KATTN_MEMORY_CUDA / _HIP pointers and the stream to enqueue on.
 * Prints the backend that ran and exits non-zero unless the first query row (which sees only the
 * first key under the causal mask) equals the first value row. */
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

enum { B = 1, T = 64, N = 4, H = 32 };

int main(void) {
  static float q[B * T * N * H], k[B * T * N * H], v[B * T * N * H], out[B * T * N * H];
  const int64_t extents[4] = {B, T, N, H};
  kattn_problem_t problem;
  kattn_backend_t backend;
  double err = 0;
  for (int i = 0; i < B * T * N * H; ++i) {
    q[i] = (float)sin(0.1 * i);
    k[i] = (float)cos(0.07 * i);
    v[i] = (float)sin(0.03 * i + 1.0);
  }
  TRY(kattn_initialize());
  TRY(kattn_problem_create(&problem));
  TRY(kattn_problem_set_tensor(problem, KATTN_Q, q, KATTN_F32, 4, extents, NULL,
                               KATTN_MEMORY_HOST));
  TRY(kattn_problem_set_tensor(problem, KATTN_K, k, KATTN_F32, 4, extents, NULL,
                               KATTN_MEMORY_HOST));
  TRY(kattn_problem_set_tensor(problem, KATTN_V, v, KATTN_F32, 4, extents, NULL,
                               KATTN_MEMORY_HOST));
  TRY(kattn_problem_set_tensor(problem, KATTN_OUT, out, KATTN_F32, 4, extents, NULL,
                               KATTN_MEMORY_HOST));
  TRY(kattn_problem_set_causal(problem, 1));
  TRY(kattn_selected_backend(problem, &backend));
  TRY(kattn_forward(problem, NULL)); /* host memory: done when it returns */
  for (int i = 0; i < N * H; ++i)    /* row t = 0 of every head */
    err = fmax(err, fabs(out[i] - v[i]));
  printf("attention_c: kokkos-attention %s, backend %d, causal row 0 error %.3g\n", kattn_version(),
         (int)backend, err);
  TRY(kattn_problem_destroy(problem));
  TRY(kattn_finalize());
  return err < 1e-6 ? 0 : 1;
}
