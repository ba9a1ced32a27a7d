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

// Each role: its name in messages (the validation's) and the problem's tensor it sets.
struct RoleSlot {
  kattn_role_t role;
  const char* name;
  Tensor& (*of)(kattn_problem_s&);
};
#define KATTN_ROLE(r, n, member)                                                                   \
  RoleSlot {                                                                                       \
    r, n, [](kattn_problem_s& h) -> Tensor& { return h.p.member; }                                 \
  }
#define KATTN_HANDLE_ROLE(r, n, member)                                                            \
  RoleSlot {                                                                                       \
    r, n, [](kattn_problem_s& h) -> Tensor& { return h.member; }                                   \
  }
constexpr RoleSlot kRoles[] = {
    KATTN_ROLE(KATTN_Q, "q", forward.q),
    KATTN_ROLE(KATTN_K, "k", forward.k),
    KATTN_ROLE(KATTN_V, "v", forward.v),
    KATTN_ROLE(KATTN_OUT, "out", forward.out),
    KATTN_ROLE(KATTN_LSE, "lse", forward.extras.lse),
    KATTN_ROLE(KATTN_BIAS, "bias", forward.extras.bias),
    KATTN_ROLE(KATTN_MASK, "mask", forward.extras.mask),
    KATTN_ROLE(KATTN_ALIBI_SLOPES, "alibi_slopes", forward.extras.alibi_slopes),
    KATTN_ROLE(KATTN_SEQLENS_Q, "seqlens_q", forward.extras.seqlens_q),
    KATTN_ROLE(KATTN_SEQLENS_K, "seqlens_k", forward.extras.seqlens_k),
    KATTN_ROLE(KATTN_CU_SEQLENS_Q, "cu_seqlens_q", forward.extras.cu_seqlens_q),
    KATTN_ROLE(KATTN_CU_SEQLENS_K, "cu_seqlens_k", forward.extras.cu_seqlens_k),
    KATTN_ROLE(KATTN_DOUT, "dout", dout),
    KATTN_ROLE(KATTN_DQ, "dq", dq),
    KATTN_ROLE(KATTN_DK, "dk", dk),
    KATTN_ROLE(KATTN_DV, "dv", dv),
    KATTN_ROLE(KATTN_DBIAS, "dbias", dbias),
    KATTN_ROLE(KATTN_FP8_DESCALE_Q, "fp8.descale_q", forward.extras.fp8.descale_q),
    KATTN_ROLE(KATTN_FP8_DESCALE_K, "fp8.descale_k", forward.extras.fp8.descale_k),
    KATTN_ROLE(KATTN_FP8_DESCALE_V, "fp8.descale_v", forward.extras.fp8.descale_v),
    KATTN_ROLE(KATTN_FP8_DESCALE_S, "fp8.descale_s", forward.extras.fp8.descale_s),
    KATTN_ROLE(KATTN_FP8_SCALE_S, "fp8.scale_s", forward.extras.fp8.scale_s),
    KATTN_ROLE(KATTN_FP8_SCALE_O, "fp8.scale_o", forward.extras.fp8.scale_o),
    KATTN_ROLE(KATTN_FP8_AMAX_S, "fp8.amax_s", forward.extras.fp8.amax_s),
    KATTN_ROLE(KATTN_FP8_AMAX_O, "fp8.amax_o", forward.extras.fp8.amax_o),
    KATTN_ROLE(KATTN_FP8_DESCALE_O, "fp8.descale_o", fp8.descale_o),
    KATTN_ROLE(KATTN_FP8_DESCALE_DOUT, "fp8.descale_dout", fp8.descale_dout),
    KATTN_ROLE(KATTN_FP8_DESCALE_DP, "fp8.descale_dp", fp8.descale_dp),
    KATTN_ROLE(KATTN_FP8_SCALE_DP, "fp8.scale_dp", fp8.scale_dp),
    KATTN_ROLE(KATTN_FP8_SCALE_DQ, "fp8.scale_dq", fp8.scale_dq),
    KATTN_ROLE(KATTN_FP8_SCALE_DK, "fp8.scale_dk", fp8.scale_dk),
    KATTN_ROLE(KATTN_FP8_SCALE_DV, "fp8.scale_dv", fp8.scale_dv),
    KATTN_ROLE(KATTN_FP8_AMAX_DQ, "fp8.amax_dq", fp8.amax_dq),
    KATTN_ROLE(KATTN_FP8_AMAX_DK, "fp8.amax_dk", fp8.amax_dk),
    KATTN_ROLE(KATTN_FP8_AMAX_DV, "fp8.amax_dv", fp8.amax_dv),
    KATTN_ROLE(KATTN_FP8_AMAX_DP, "fp8.amax_dp", fp8.amax_dp),
    KATTN_ROLE(KATTN_SINKS, "sinks", forward.extras.sinks),
    KATTN_ROLE(KATTN_DSINKS, "dsinks", dsinks),
    KATTN_ROLE(KATTN_PAGE_TABLE, "page_table", forward.extras.page_table),
    KATTN_HANDLE_ROLE(KATTN_K_NEW, "k_new", k_new),
    KATTN_HANDLE_ROLE(KATTN_V_NEW, "v_new", v_new),
};
#undef KATTN_ROLE
#undef KATTN_HANDLE_ROLE

const RoleSlot& slot_of(kattn_role_t role) {
  for (const RoleSlot& r : kRoles)
    if (r.role == role)
      return r;
  throw InvalidArgument("role: expected a kattn_role_t (KATTN_Q .. KATTN_V_NEW), got " +
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
  return handle_of(h, name).p;
}

kattn_problem_s& handle_of(kattn_problem_t h, const char* name) {
  require(h, name);
  return *h;
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
    kattn_problem_s& h = kattn::c_api::handle_of(problem);
    const kattn::c_api::RoleSlot& slot = kattn::c_api::slot_of(role); // the role checked first
    try {
      slot.of(h) = kattn::c_api::make_tensor(data, dtype, rank, extents, strides, memory);
    } catch (const kattn::InvalidArgument& e) { // which tensor: the caller's role, by name
      throw kattn::InvalidArgument(std::string(slot.name) + ": " + e.what());
    }
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

kattn_status_t kattn_problem_set_allow_tf32(kattn_problem_t problem, int allow) {
  return guarded("kattn_problem_set_allow_tf32",
                 [&] { problem_of(problem).forward.options.allow_tf32 = allow != 0; });
}

} // extern "C"
