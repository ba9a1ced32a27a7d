// The C API's problem handles: tensors set by role, options by setter (kokkosattn.h).
#include <string>

#include "c_api_problem.hpp"
#include "c_api_status.hpp"

namespace kattn::c_api {
namespace {

// The C enums are the library's in the same order: a reordering breaks the build, not callers.
static_assert(KATTN_F64 == int(DType::f64) && KATTN_F32 == int(DType::f32) &&
              KATTN_F16 == int(DType::f16) && KATTN_BF16 == int(DType::bf16) &&
              KATTN_F8_E4M3 == int(DType::f8_e4m3) && KATTN_F8_E5M2 == int(DType::f8_e5m2) &&
              KATTN_I32 == int(DType::i32) && KATTN_BOOL == int(DType::boolean));
static_assert(KATTN_MEMORY_HOST == int(MemorySpace::host) &&
              KATTN_MEMORY_CUDA == int(MemorySpace::cuda_device) &&
              KATTN_MEMORY_HIP == int(MemorySpace::hip_device));
static_assert(KATTN_BACKEND_AUTO == int(Backend::automatic) &&
              KATTN_BACKEND_REFERENCE == int(Backend::reference) &&
              KATTN_BACKEND_NAIVE == int(Backend::naive) &&
              KATTN_BACKEND_PORTABLE == int(Backend::portable) &&
              KATTN_BACKEND_CUDNN == int(Backend::cudnn) &&
              KATTN_BACKEND_CUDA == int(Backend::cuda) && KATTN_BACKEND_HIP == int(Backend::hip));
static_assert(KATTN_ALIGN_TOP_LEFT == int(Alignment::top_left) &&
              KATTN_ALIGN_BOTTOM_RIGHT == int(Alignment::bottom_right));

Tensor& tensor_of(BackwardProblem& p, kattn_role_t role) {
  ForwardProblem& f = p.forward;
  switch (role) {
  case KATTN_Q:
    return f.q;
  case KATTN_K:
    return f.k;
  case KATTN_V:
    return f.v;
  case KATTN_OUT:
    return f.out;
  case KATTN_LSE:
    return f.extras.lse;
  case KATTN_BIAS:
    return f.extras.bias;
  case KATTN_MASK:
    return f.extras.mask;
  case KATTN_ALIBI_SLOPES:
    return f.extras.alibi_slopes;
  case KATTN_SEQLENS_Q:
    return f.extras.seqlens_q;
  case KATTN_SEQLENS_K:
    return f.extras.seqlens_k;
  case KATTN_CU_SEQLENS_Q:
    return f.extras.cu_seqlens_q;
  case KATTN_CU_SEQLENS_K:
    return f.extras.cu_seqlens_k;
  case KATTN_DOUT:
    return p.dout;
  case KATTN_DQ:
    return p.dq;
  case KATTN_DK:
    return p.dk;
  case KATTN_DV:
    return p.dv;
  case KATTN_DBIAS:
    return p.dbias;
  case KATTN_FP8_DESCALE_Q:
    return f.extras.fp8.descale_q;
  case KATTN_FP8_DESCALE_K:
    return f.extras.fp8.descale_k;
  case KATTN_FP8_DESCALE_V:
    return f.extras.fp8.descale_v;
  case KATTN_FP8_DESCALE_S:
    return f.extras.fp8.descale_s;
  case KATTN_FP8_SCALE_S:
    return f.extras.fp8.scale_s;
  case KATTN_FP8_SCALE_O:
    return f.extras.fp8.scale_o;
  case KATTN_FP8_AMAX_S:
    return f.extras.fp8.amax_s;
  case KATTN_FP8_AMAX_O:
    return f.extras.fp8.amax_o;
  case KATTN_FP8_DESCALE_O:
    return p.fp8.descale_o;
  case KATTN_FP8_DESCALE_DOUT:
    return p.fp8.descale_dout;
  case KATTN_FP8_DESCALE_DP:
    return p.fp8.descale_dp;
  case KATTN_FP8_SCALE_DP:
    return p.fp8.scale_dp;
  case KATTN_FP8_SCALE_DQ:
    return p.fp8.scale_dq;
  case KATTN_FP8_SCALE_DK:
    return p.fp8.scale_dk;
  case KATTN_FP8_SCALE_DV:
    return p.fp8.scale_dv;
  case KATTN_FP8_AMAX_DQ:
    return p.fp8.amax_dq;
  case KATTN_FP8_AMAX_DK:
    return p.fp8.amax_dk;
  case KATTN_FP8_AMAX_DV:
    return p.fp8.amax_dv;
  case KATTN_FP8_AMAX_DP:
    return p.fp8.amax_dp;
  default: // an unknown value (the range enumerators included)
    break;
  }
  throw InvalidArgument("role: expected a kattn_role_t (KATTN_Q .. KATTN_FP8_AMAX_DP), got " +
                        std::to_string(int(role)));
}

Tensor make_tensor(void* data, kattn_dtype_t dtype, int rank, const std::int64_t* extents,
                   const std::int64_t* strides, kattn_memory_t memory) {
  Tensor t;
  if (rank < 0 || rank > Tensor::max_rank)
    throw InvalidArgument("rank: expected 0 to " + std::to_string(Tensor::max_rank) + ", got " +
                          std::to_string(rank));
  t.space = memory_of(memory);
  t.dtype = dtype_of(dtype, "dtype");
  t.data = data;
  t.rank = rank;
  if (rank == 0)
    return t;
  require(extents, "extents");
  // Row-major strides when none are given, from the last dimension out (checked: validation
  // refuses a span past int64, but these strides are computed before it sees them).
  std::int64_t run = 1;
  for (int d = rank - 1; d >= 0; --d) {
    if (extents[d] < 0)
      throw InvalidArgument("extents[" + std::to_string(d) + "]: expected >= 0, got " +
                            std::to_string(extents[d]));
    t.extent[d] = extents[d];
    if (strides != nullptr) {
      t.stride[d] = strides[d];
    } else {
      t.stride[d] = run;
      if (extents[d] > 0 && __builtin_mul_overflow(run, extents[d], &run))
        throw InvalidArgument("extents: expected a tensor of fewer than 2^63 elements");
    }
  }
  return t;
}

} // namespace

BackwardProblem& problem_of(kattn_problem_t h, const char* name) {
  require(h, name);
  return h->p;
}

DType dtype_of(kattn_dtype_t d, const char* name) {
  if (int(d) < KATTN_F64 || int(d) > KATTN_BOOL)
    throw InvalidArgument(std::string(name) + ": expected a kattn_dtype_t (KATTN_F64 .. " +
                          "KATTN_BOOL), got " + std::to_string(int(d)));
  return static_cast<DType>(d);
}

MemorySpace memory_of(kattn_memory_t m) {
  if (m != KATTN_MEMORY_HOST && m != KATTN_MEMORY_CUDA && m != KATTN_MEMORY_HIP)
    throw InvalidArgument("memory: expected KATTN_MEMORY_HOST, _CUDA or _HIP, got " +
                          std::to_string(int(m)));
  return static_cast<MemorySpace>(m);
}

Backend backend_of(kattn_backend_t b) {
  if (int(b) < KATTN_BACKEND_AUTO || int(b) > KATTN_BACKEND_HIP)
    throw InvalidArgument("backend: expected a kattn_backend_t (KATTN_BACKEND_AUTO .. " +
                          std::string("KATTN_BACKEND_HIP), got ") + std::to_string(int(b)));
  return static_cast<Backend>(b);
}

kattn_backend_t c_backend(Backend b) {
  return static_cast<kattn_backend_t>(b);
}

} // namespace kattn::c_api

using kattn::c_api::guarded;
using kattn::c_api::problem_of;

extern "C" {

kattn_status_t kattn_problem_create(kattn_problem_t* problem) {
  return guarded("kattn_problem_create", [&] {
    kattn::c_api::require(problem, "problem");
    *problem = new kattn_problem_s{};
  });
}

kattn_status_t kattn_problem_destroy(kattn_problem_t problem) {
  delete problem;
  return KATTN_OK;
}

kattn_status_t kattn_problem_set_tensor(kattn_problem_t problem, kattn_role_t role, void* data,
                                        kattn_dtype_t dtype, int rank, const int64_t* extents,
                                        const int64_t* strides, kattn_memory_t memory) {
  return guarded("kattn_problem_set_tensor", [&] {
    kattn::BackwardProblem& p = problem_of(problem);
    kattn::Tensor& slot = kattn::c_api::tensor_of(p, role); // the role checked first
    slot = kattn::c_api::make_tensor(data, dtype, rank, extents, strides, memory);
  });
}

kattn_status_t kattn_problem_set_scale(kattn_problem_t problem, double scale) {
  return guarded("kattn_problem_set_scale",
                 [&] { problem_of(problem).forward.options.scale = scale; });
}

kattn_status_t kattn_problem_set_softcap(kattn_problem_t problem, double softcap) {
  return guarded("kattn_problem_set_softcap",
                 [&] { problem_of(problem).forward.options.softcap = softcap; });
}

kattn_status_t kattn_problem_set_causal(kattn_problem_t problem, int causal) {
  return guarded("kattn_problem_set_causal",
                 [&] { problem_of(problem).forward.options.causal = causal != 0; });
}

kattn_status_t kattn_problem_set_window(kattn_problem_t problem, int64_t left, int64_t right) {
  return guarded("kattn_problem_set_window", [&] {
    kattn::Options& o = problem_of(problem).forward.options;
    o.window_left = left;
    o.window_right = right;
  });
}

kattn_status_t kattn_problem_set_alignment(kattn_problem_t problem, kattn_alignment_t alignment) {
  return guarded("kattn_problem_set_alignment", [&] {
    kattn::Options& o = problem_of(problem).forward.options;
    if (alignment != KATTN_ALIGN_TOP_LEFT && alignment != KATTN_ALIGN_BOTTOM_RIGHT)
      throw kattn::InvalidArgument("alignment: expected KATTN_ALIGN_TOP_LEFT or "
                                   "KATTN_ALIGN_BOTTOM_RIGHT, got " +
                                   std::to_string(int(alignment)));
    o.alignment = static_cast<kattn::Alignment>(alignment);
  });
}

kattn_status_t kattn_problem_set_dropout(kattn_problem_t problem, double p, uint64_t seed,
                                         uint64_t offset) {
  return guarded("kattn_problem_set_dropout", [&] {
    kattn::Options& o = problem_of(problem).forward.options;
    o.dropout_p = p;
    o.dropout_seed = seed;
    o.dropout_offset = offset;
  });
}

kattn_status_t kattn_problem_set_deterministic(kattn_problem_t problem, int deterministic) {
  return guarded("kattn_problem_set_deterministic",
                 [&] { problem_of(problem).forward.options.deterministic = deterministic != 0; });
}

kattn_status_t kattn_problem_set_backend(kattn_problem_t problem, kattn_backend_t backend) {
  return guarded("kattn_problem_set_backend", [&] {
    kattn::Options& o = problem_of(problem).forward.options;
    o.backend = kattn::c_api::backend_of(backend);
  });
}

kattn_status_t kattn_problem_set_max_seqlens(kattn_problem_t problem, int64_t max_q,
                                             int64_t max_k) {
  return guarded("kattn_problem_set_max_seqlens", [&] {
    kattn::Extras& e = problem_of(problem).forward.extras;
    e.max_seqlen_q = max_q;
    e.max_seqlen_k = max_k;
  });
}

kattn_status_t kattn_problem_set_layout_copies(kattn_problem_t problem, int allow) {
  return guarded("kattn_problem_set_layout_copies",
                 [&] { problem_of(problem).forward.options.allow_layout_copies = allow != 0; });
}

} // extern "C"
