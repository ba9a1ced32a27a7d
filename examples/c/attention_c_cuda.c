/* Attention from C on the GPU: the codelab's shape as attention_c.c, but bf16 arrays in CUDA
 * memory (cudaMalloc) and both calls enqueued on the caller's stream, which is what a C
 * simulation code holding device arrays does. bf16 is what the GPU kernels serve; explain()
 * names the kernel each direction runs. out, dq, dk and dv are copied back and checked against
 * the plain loop in double precision (naive_attention.h) on the same bf16-rounded inputs.
 * Exits 77 (skipped) when there is no CUDA device. */
#include <cuda_runtime_api.h>
#include <kokkosattn.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "naive_attention.h"

#define CUDA_TRY(call)                                                                             \
  do {                                                                                             \
    cudaError_t err_ = (call);                                                                     \
    if (err_ != cudaSuccess) {                                                                     \
      fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(err_));                         \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)

/* fp32 -> bf16 by round to nearest even (inputs here are finite), and back. */
static uint16_t to_bf16(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (uint16_t)(u >> 16);
}
static float from_bf16(uint16_t h) {
  const uint32_t u = (uint32_t)h << 16;
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}

/* The first line of explain()'s text: the backend and kernel that run, and why. */
static int print_choice(kattn_problem_t problem, int backward) {
  static char text[4096];
  TRY(kattn_explain(problem, backward, text, sizeof text, NULL));
  text[strcspn(text, "\n")] = '\0';
  printf("  %s: %s\n", backward ? "backward" : "forward", text);
  return 0;
}

int main(void) {
  enum { Q, K, V, DOUT, OUT, DQ, DK, DV, NT };
  static const kattn_role_t roles[NT] = {KATTN_Q,   KATTN_K,  KATTN_V,  KATTN_DOUT,
                                         KATTN_OUT, KATTN_DQ, KATTN_DK, KATTN_DV};
  static const char* names[NT] = {"q", "k", "v", "dout", "out", "dq", "dk", "dv"};
  const int64_t extents[4] = {B, T, N, H}, lse_extents[3] = {B, N, T};
  const double scale = 1.0 / sqrt((double)H);
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    printf("attention_c_cuda: SKIPPED, no CUDA device\n");
    return 77;
  }
  float* x[NT];
  double* ref[NT];
  uint16_t* staging = malloc(SIZE * sizeof(uint16_t));
  void* dev[NT];
  float* lse = NULL;
  cudaStream_t stream;
  CUDA_TRY(cudaStreamCreate(&stream));
  for (int t = 0; t < NT; ++t) {
    x[t] = malloc(SIZE * sizeof(float));
    ref[t] = calloc(SIZE, sizeof(double));
    if (staging == NULL || x[t] == NULL || ref[t] == NULL)
      return 1;
    CUDA_TRY(cudaMalloc(&dev[t], SIZE * sizeof(uint16_t)));
    /* inputs in [-1, 1], rounded to bf16 once so that the loop sees what the GPU sees; outputs
     * poisoned (0xffff is a bf16 NaN) */
    for (size_t i = 0; i < SIZE; ++i) {
      staging[i] = t < OUT ? to_bf16((float)sin(0.1 * i + t)) : 0xffffu;
      x[t][i] = from_bf16(staging[i]);
    }
    CUDA_TRY(
        cudaMemcpyAsync(dev[t], staging, SIZE * sizeof(uint16_t), cudaMemcpyHostToDevice, stream));
    CUDA_TRY(cudaStreamSynchronize(stream)); /* staging is reused */
  }
  CUDA_TRY(cudaMalloc((void**)&lse, B * N * T * sizeof(float)));

  kattn_problem_t problem;
  TRY(kattn_initialize());
  TRY(kattn_problem_create(&problem));
  for (int t = 0; t < NT; ++t)
    TRY(kattn_problem_set_tensor(problem, roles[t], dev[t], KATTN_BF16, 4, extents, NULL,
                                 KATTN_MEMORY_CUDA));
  TRY(kattn_problem_set_tensor(problem, KATTN_LSE, lse, KATTN_F32, 3, lse_extents, NULL,
                               KATTN_MEMORY_CUDA));
  TRY(kattn_problem_set_causal(problem, 1));
  printf("attention_c_cuda: kokkos-attention %s, B=%d T=%d N=%d H=%d causal, bf16 on the GPU:\n",
         kattn_version(), B, T, N, H);
  if (print_choice(problem, 0) || print_choice(problem, 1))
    return 1;
  TRY(kattn_forward(problem, stream));  /* enqueued on the stream: returns before the GPU is done */
  TRY(kattn_backward(problem, stream)); /* reads out and lse from the forward, in stream order */
  for (int t = OUT; t < NT; ++t) {
    CUDA_TRY(
        cudaMemcpyAsync(staging, dev[t], SIZE * sizeof(uint16_t), cudaMemcpyDeviceToHost, stream));
    CUDA_TRY(cudaStreamSynchronize(stream));
    for (size_t i = 0; i < SIZE; ++i)
      x[t][i] = from_bf16(staging[i]);
  }

  for (int b = 0; b < B; ++b)
    for (int n = 0; n < N; ++n)
      naive_attention(x[Q], x[K], x[V], x[DOUT], b, n, scale, ref[OUT], ref[DQ], ref[DK], ref[DV]);
  /* bf16 results: each output element is rounded (2^-9 relative), and the kernels round P and
   * dS to bf16 before their products (2^-9 each, summed over <= 128 keys with mixed signs);
   * 2e-2 of the largest value covers both with room, while a wrong mask, scale or index is off
   * by O(1) of it. */
  int ok = 1;
  for (int t = OUT; t < NT; ++t)
    ok &= close_to(names[t], x[t], ref[t], 2e-2);

  TRY(kattn_problem_destroy(problem));
  TRY(kattn_finalize());
  for (int t = 0; t < NT; ++t) {
    CUDA_TRY(cudaFree(dev[t]));
    free(x[t]);
    free(ref[t]);
  }
  CUDA_TRY(cudaFree(lse));
  CUDA_TRY(cudaStreamDestroy(stream));
  free(staging);
  if (!ok)
    fprintf(stderr, "attention_c_cuda: a result differs from the plain loop\n");
  return ok ? 0 : 1;
}
