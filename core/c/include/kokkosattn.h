/* kokkosattn.h: the C API of kokkos-attention (C99; C++ callers include it as well).
 *
 * Scaled dot-product attention, softmax(q k^T * scale + bias/mask) v, and its gradients on raw
 * pointers (host, CUDA or HIP device memory) with the semantics of docs/semantics.md, for codes
 * that cannot call the KokkosAttn:: templates on Kokkos::Views: C, Fortran (fortran/, a module
 * over this header), C++ built without Kokkos' headers.
 *
 *   kattn_initialize();                          Kokkos too, unless the program already did
 *   kattn_problem_t p; kattn_problem_create(&p);
 *   kattn_problem_set_tensor(p, KATTN_Q, q, KATTN_BF16, 4, extents, NULL, KATTN_MEMORY_CUDA);
 *   ...  k, v, out (NULL strides: row-major, i.e. [B, T, N, H] with H fastest)
 *   kattn_problem_set_causal(p, 1);
 *   if (kattn_forward(p, stream) != KATTN_OK) fprintf(stderr, "%s\n", kattn_last_error());
 *   kattn_problem_destroy(p); kattn_finalize();
 *
 * Every function returns a kattn_status_t; on failure nothing was written to any output and
 * kattn_last_error() (per thread) says which argument was wrong, what was expected and what
 * came. Work is enqueued on `stream` (cudaStream_t / hipStream_t; NULL: the default stream) and
 * not waited for, as a CUDA library call would: synchronise the stream before reading results.
 * Host memory runs on the host (Kokkos' default host execution space) and has returned when the
 * call does. Extents and strides are 64-bit and counted in elements, outermost first, as in
 * docs/semantics.md: q [B, T, N, H], k [B, S, K, H], v [B, S, K, Hv], out [B, T, N, Hv], lse
 * [B, N, T]; packed varlen (KATTN_CU_SEQLENS_Q/K given): rank 3 [tokens, heads, dim].
 * A problem holds pointers, not data: the memory must stay valid until the work has run.
 * A problem may be used from one thread at a time; different problems from different threads. */
#ifndef KOKKOSATTN_H
#define KOKKOSATTN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KATTN_VERSION_MAJOR 0
#define KATTN_VERSION_MINOR 1
#define KATTN_VERSION_PATCH 0

/* (*) Not values: the *_RANGE_MIN_ / *_RANGE_MAX_ enumerators make every int a valid value of
 * the argument enums, so that the library can refuse an unknown one with
 * KATTN_ERROR_INVALID_ARGUMENT instead of reading an enum out of its range (undefined in C++). */
typedef enum kattn_status {
  KATTN_OK = 0,
  KATTN_ERROR_INVALID_ARGUMENT = 1, /* shape, dtype, layout, option or argument not allowed */
  KATTN_ERROR_UNSUPPORTED = 2,      /* valid, but the (forced) backend cannot serve it */
  KATTN_ERROR_BACKEND_FAILURE = 3,  /* a CUDA/HIP/cuDNN call or a device allocation failed */
  KATTN_ERROR_OUT_OF_MEMORY = 4,    /* a host allocation failed */
  KATTN_ERROR_INTERNAL = 5,         /* anything else: a bug, please report it */
  KATTN_ERROR_NOT_INITIALIZED = 6   /* kattn_initialize() (or Kokkos::initialize) first */
} kattn_status_t;

typedef enum kattn_dtype {
  KATTN_F64 = 0,
  KATTN_F32 = 1,
  KATTN_F16 = 2,
  KATTN_BF16 = 3,
  KATTN_F8_E4M3 = 4,
  KATTN_F8_E5M2 = 5,
  KATTN_I32 = 6,  /* sequence lengths, cu_seqlens */
  KATTN_BOOL = 7, /* masks: one byte per element, non-zero = attend */
  KATTN_DTYPE_RANGE_MIN_ = INT32_MIN,
  KATTN_DTYPE_RANGE_MAX_ = INT32_MAX /* (*) */
} kattn_dtype_t;

typedef enum kattn_memory {
  KATTN_MEMORY_HOST = 0,
  KATTN_MEMORY_CUDA = 1, /* cudaMalloc'ed */
  KATTN_MEMORY_HIP = 2,  /* hipMalloc'ed */
  KATTN_MEMORY_RANGE_MIN_ = INT32_MIN,
  KATTN_MEMORY_RANGE_MAX_ = INT32_MAX /* (*) */
} kattn_memory_t;

/* Which tensor of the problem kattn_problem_set_tensor sets. */
typedef enum kattn_role {
  KATTN_Q = 0,
  KATTN_K = 1,
  KATTN_V = 2,
  KATTN_OUT = 3,           /* forward output; the backward's input */
  KATTN_LSE = 4,           /* f32 [B, N, T]: forward output (optional), backward input */
  KATTN_BIAS = 5,          /* additive, [B|1, N|1, T, S] */
  KATTN_MASK = 6,          /* KATTN_BOOL [B|1, N|1, T, S], non-zero = attend */
  KATTN_ALIBI_SLOPES = 7,  /* f32 [N] or [B, N] */
  KATTN_SEQLENS_Q = 8,     /* i32 [B]: valid query rows per batch (padded batches) */
  KATTN_SEQLENS_K = 9,     /* i32 [B]: valid keys per batch */
  KATTN_CU_SEQLENS_Q = 10, /* i32 [B + 1]: packed varlen offsets */
  KATTN_CU_SEQLENS_K = 11,
  KATTN_DOUT = 12, /* backward: gradient of out */
  KATTN_DQ = 13,   /* backward outputs */
  KATTN_DK = 14,
  KATTN_DV = 15,
  KATTN_DBIAS = 16, /* backward output, like KATTN_BIAS (optional) */
  /* FP8 problems only (q, k, v e4m3/e5m2; docs/semantics.md): per-tensor factors, each f32 [1]
   * and optional. The forward's, then its outputs amax_s, amax_o: */
  KATTN_FP8_DESCALE_Q = 17,
  KATTN_FP8_DESCALE_K = 18,
  KATTN_FP8_DESCALE_V = 19,
  KATTN_FP8_DESCALE_S = 20,
  KATTN_FP8_SCALE_S = 21,
  KATTN_FP8_SCALE_O = 22,
  KATTN_FP8_AMAX_S = 23,
  KATTN_FP8_AMAX_O = 24,
  /* the backward's factors, then its outputs amax_dq, amax_dk, amax_dv, amax_dp: */
  KATTN_FP8_DESCALE_O = 25,
  KATTN_FP8_DESCALE_DOUT = 26,
  KATTN_FP8_DESCALE_DP = 27,
  KATTN_FP8_SCALE_DP = 28,
  KATTN_FP8_SCALE_DQ = 29,
  KATTN_FP8_SCALE_DK = 30,
  KATTN_FP8_SCALE_DV = 31,
  KATTN_FP8_AMAX_DQ = 32,
  KATTN_FP8_AMAX_DK = 33,
  KATTN_FP8_AMAX_DV = 34,
  KATTN_FP8_AMAX_DP = 35,
  /* Attention sinks (docs/semantics.md rule sinks): per-head logits in the softmax's denominator,
   * f32 [N] (optional), and their gradient, a backward output like them (optional). */
  KATTN_SINKS = 36,
  KATTN_DSINKS = 37,
  /* A paged KV cache (docs/semantics.md rule paged_kv): i32 [B, max_pages_per_seq], sequence b's
   * key j in page page_table[b, j / page_size] of KATTN_K / KATTN_V, which are then
   * [num_pages, page_size, K, H] / [.., Hv]; needs KATTN_SEQLENS_K; forward only. */
  KATTN_PAGE_TABLE = 38,
  /* kattn_append_kv's inputs: a decode step's new keys and values, [B, T_new, K, H] and
   * [B, T_new, K, Hv], appended into KATTN_K / KATTN_V (the cache). */
  KATTN_K_NEW = 39,
  KATTN_V_NEW = 40,
  KATTN_ROLE_RANGE_MIN_ = INT32_MIN,
  KATTN_ROLE_RANGE_MAX_ = INT32_MAX /* (*) */
} kattn_role_t;

typedef enum kattn_backend {
  KATTN_BACKEND_AUTO = 0, /* the fastest backend that serves the problem */
  KATTN_BACKEND_REFERENCE = 1,
  KATTN_BACKEND_NAIVE = 2,
  KATTN_BACKEND_PORTABLE = 3,
  KATTN_BACKEND_CUDNN = 4,
  KATTN_BACKEND_CUDA = 5,
  KATTN_BACKEND_HIP = 6,
  KATTN_BACKEND_RANGE_MIN_ = INT32_MIN,
  KATTN_BACKEND_RANGE_MAX_ = INT32_MAX /* (*) */
} kattn_backend_t;

typedef enum kattn_alignment {
  KATTN_ALIGN_TOP_LEFT = 0,     /* query i sees key i on the diagonal */
  KATTN_ALIGN_BOTTOM_RIGHT = 1, /* query i aligned with key i + S - T (decode) */
  KATTN_ALIGNMENT_RANGE_MIN_ = INT32_MIN,
  KATTN_ALIGNMENT_RANGE_MAX_ = INT32_MAX /* (*) */
} kattn_alignment_t;

typedef struct kattn_problem_s* kattn_problem_t;
typedef struct kattn_plan_s* kattn_plan_t;

/* Library and Kokkos. kattn_initialize initialises Kokkos unless it already is (a host program
 * that uses Kokkos itself keeps its own), and may be called again; kattn_finalize finalises
 * Kokkos only if kattn_initialize initialised it. Destroy plans first. */
kattn_status_t kattn_initialize(void);
kattn_status_t kattn_finalize(void);
/* The message of this thread's last failed call ("" if none); valid until its next call. */
const char* kattn_last_error(void);
/* "0.1.0" */
const char* kattn_version(void);

/* Problems: tensors (pointers + shapes) and options. Defaults as docs/semantics.md. */
kattn_status_t kattn_problem_create(kattn_problem_t* problem);
kattn_status_t kattn_problem_destroy(kattn_problem_t problem); /* NULL: no-op */
/* strides NULL: row-major for the extents. data NULL with rank 0 unsets the tensor. */
kattn_status_t kattn_problem_set_tensor(kattn_problem_t problem, kattn_role_t role, void* data,
                                        kattn_dtype_t dtype, int rank, const int64_t* extents,
                                        const int64_t* strides, kattn_memory_t memory);
kattn_status_t kattn_problem_set_scale(kattn_problem_t problem, double scale);     /* 1/sqrt(H) */
kattn_status_t kattn_problem_set_softcap(kattn_problem_t problem, double softcap); /* 0: off */
kattn_status_t kattn_problem_set_causal(kattn_problem_t problem, int causal);
/* Inclusive bounds; -1 = unbounded. */
kattn_status_t kattn_problem_set_window(kattn_problem_t problem, int64_t left, int64_t right);
kattn_status_t kattn_problem_set_alignment(kattn_problem_t problem, kattn_alignment_t alignment);
kattn_status_t kattn_problem_set_dropout(kattn_problem_t problem, double p, uint64_t seed,
                                         uint64_t offset);
kattn_status_t kattn_problem_set_deterministic(kattn_problem_t problem, int deterministic);
kattn_status_t kattn_problem_set_backend(kattn_problem_t problem, kattn_backend_t backend);
/* Packed varlen: the longest sequences (required when cu_seqlens live in device memory). */
kattn_status_t kattn_problem_set_max_seqlens(kattn_problem_t problem, int64_t max_q, int64_t max_k);
/* 0: never run through row-major copies of tensors whose layout a GPU kernel cannot read. */
kattn_status_t kattn_problem_set_layout_copies(kattn_problem_t problem, int allow);
/* f32 problems: 1 lets a kernel round its tensor-core operands to TF32 (PyTorch's allow_tf32);
 * 0 (default) keeps fp32 accuracy. kattn_explain names the mode that runs. */
kattn_status_t kattn_problem_set_allow_tf32(kattn_problem_t problem, int allow);

/* Runs: out (and lse) from q, k, v; dq, dk, dv (and dbias) from dout. */
kattn_status_t kattn_forward(kattn_problem_t problem, void* stream);
kattn_status_t kattn_backward(kattn_problem_t problem, void* stream);
/* A decode step's keys (docs/semantics.md, paged_kv): KATTN_K_NEW and KATTN_V_NEW written into
 * the cache KATTN_K / KATTN_V (paged through KATTN_PAGE_TABLE when set, else [B, S, K, H|Hv])
 * at positions seqlens_k[b] + t, then KATTN_SEQLENS_K (required) grows by T_new, on `stream`.
 * A decode step is kattn_append_kv then kattn_forward on the same problem. Bad input (no room,
 * pages missing, dtypes, aliasing) is refused with nothing written. */
kattn_status_t kattn_append_kv(kattn_problem_t problem, void* stream);
/* Waits until the work enqueued on `stream` (NULL: the default stream) for memory of the given
 * kind has finished: for callers without a runtime API of their own (Fortran with OpenMP
 * offload). Host memory: Kokkos' default host execution space is fenced. Unsupported where the
 * library's Kokkos has no space for the memory (use the vendor runtime there). */
kattn_status_t kattn_synchronize(kattn_memory_t memory, void* stream);
/* The backend the forward (backward: nonzero) would run and why, every backend's verdict. At
 * most `size` bytes including the terminating 0 go to `text` (may be NULL with size 0);
 * *needed (if not NULL) gets the full length + 1. A valid problem that no backend can run gives
 * KATTN_ERROR_UNSUPPORTED, each backend's reason in kattn_last_error() (as kattn_forward). */
kattn_status_t kattn_explain(kattn_problem_t problem, int backward, char* text, size_t size,
                             size_t* needed);
/* Which backend the forward would run (KATTN_BACKEND_AUTO when the problem writes nothing). */
kattn_status_t kattn_selected_backend(kattn_problem_t problem, kattn_backend_t* backend);

/* Plans: the forward validated and its backend chosen once, on one stream; then run on new
 * q, k, v, out pointers of the planned shapes, strides and memory (the problem's other tensors
 * are reused as they were at planning). The plan keeps a copy of the problem. */
kattn_status_t kattn_plan_create(kattn_plan_t* plan, kattn_problem_t problem, void* stream);
kattn_status_t kattn_plan_execute(kattn_plan_t plan, const void* q, const void* k, const void* v,
                                  void* out);
/* Backward plans, for training loops: the backward validated and its backend chosen once; then
 * run on new q, k, v, out, dout, dq, dk, dv pointers (lse, lengths, bias and dbias reused as
 * planned). Executing a plan of the other direction is an invalid argument. */
kattn_status_t kattn_plan_create_backward(kattn_plan_t* plan, kattn_problem_t problem,
                                          void* stream);
kattn_status_t kattn_plan_execute_backward(kattn_plan_t plan, const void* q, const void* k,
                                           const void* v, const void* out, const void* dout,
                                           void* dq, void* dk, void* dv);
kattn_status_t kattn_plan_backend(kattn_plan_t plan, kattn_backend_t* backend);
kattn_status_t kattn_plan_destroy(kattn_plan_t plan); /* NULL: no-op */

#ifdef __cplusplus
}
#endif

#endif /* KOKKOSATTN_H */
