// Validation of problems against docs/semantics.md: presence, ranks, extents, dtypes, memory
// spaces, strides and option values. Reads no tensor data except the i32 length tensors when
// they are in host memory. Every failure is an InvalidArgument naming the argument, what was
// expected and what came.
#include "kokkosattn/validate.hpp"

#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "kokkosattn/detail/host_access.hpp"
#include "kokkosattn/errors.hpp"

namespace kattn {
namespace {

using Names = std::vector<std::string>;

[[noreturn]] void fail(const std::string& msg) {
  throw InvalidArgument(msg);
}

std::string str(DType t) {
  return std::string(to_string(t));
}
std::string str(MemorySpace m) {
  return std::string(to_string(m));
}
std::string str(std::int64_t v) {
  return std::to_string(v);
}
std::string str(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

bool rank_in_range(const Tensor& t) {
  return t.rank >= 0 && t.rank <= Tensor::max_rank;
}

// Shape text that is safe even for out-of-range ranks.
std::string shape_of(const Tensor& t) {
  return rank_in_range(t) ? t.shape_string() : "(rank " + str(std::int64_t{t.rank}) + ")";
}

std::string bracket(const Names& dims) {
  std::string s = "[";
  for (std::size_t i = 0; i < dims.size(); ++i)
    s += (i ? ", " : "") + dims[i];
  return s + "]";
}

std::int64_t ext(const Tensor& t, int d) {
  return t.extent[static_cast<std::size_t>(d)];
}
std::int64_t strd(const Tensor& t, int d) {
  return t.stride[static_cast<std::size_t>(d)];
}

// Checks shared by every given tensor once its rank is right: data pointer, positive extents,
// non-negative strides.
void check_storage(const Tensor& t, const std::string& name, const Names& dims) {
  if (t.data == nullptr)
    fail(name + ": expected a non-null data pointer for a tensor of shape " + t.shape_string() +
         ", got nullptr");
  for (int d = 0; d < t.rank; ++d)
    if (ext(t, d) < 1)
      fail(name + ": expected extent " + dims[static_cast<std::size_t>(d)] + " >= 1 at dim " +
           str(std::int64_t{d}) + " (zero-length and negative extents are invalid), got " +
           t.shape_string());
  for (int d = 0; d < t.rank; ++d)
    if (strd(t, d) < 0)
      fail(name + ": expected non-negative strides, got strides " + t.stride_string() +
           " for shape " + t.shape_string());
}

// A required tensor of a fixed layout. `alternative` is appended to the expectation.
void check_layout(const Tensor& t, const std::string& name, const Names& dims,
                  const std::string& alternative = {}) {
  const int rank = static_cast<int>(dims.size());
  if (!t.defined() || t.rank != rank)
    fail(name + ": expected rank " + str(std::int64_t{rank}) + " " + bracket(dims) + alternative +
         ", got " +
         (t.rank == 0 ? std::string("none (rank 0)")
                      : "rank " + str(std::int64_t{t.rank}) + " " + shape_of(t)));
  check_storage(t, name, dims);
}

// Outputs must not write one element through two indices: a zero stride on a dim of extent > 1
// would make every backend race with itself.
void check_no_self_alias(const Tensor& t, const std::string& name) {
  for (int d = 0; d < t.rank; ++d)
    if (strd(t, d) == 0 && ext(t, d) > 1)
      fail(name +
           ": expected a non-zero stride on every dim of extent > 1 (an output must not "
           "alias itself), got strides " +
           t.stride_string() + " for shape " + t.shape_string());
}

void expect_extent(const Tensor& t, const std::string& name, int d, const std::string& symbol,
                   std::int64_t want, const std::string& source) {
  if (ext(t, d) != want)
    fail(name + ": expected extent " + symbol + "=" + str(want) + " at dim " +
         str(std::int64_t{d}) + " (from " + source + "), got " + t.shape_string());
}

void expect_dtype(const Tensor& t, const std::string& name, DType want, const std::string& like) {
  if (t.dtype != want)
    fail(name + ": expected dtype " + str(want) + (like.empty() ? "" : " like " + like) + ", got " +
         str(t.dtype));
}

// Optional tensors: a data pointer without a rank is a forgotten shape, not "not given".
void check_not_half_given(const Tensor& t, const std::string& name) {
  if (!rank_in_range(t))
    fail(name + ": expected rank 0 (not given) to " + str(std::int64_t{Tensor::max_rank}) +
         ", got rank " + str(std::int64_t{t.rank}));
  if (t.rank == 0 && t.data != nullptr)
    fail(name + ": expected rank > 0 for a tensor with a data pointer (or a null pointer for "
                "\"not given\"), got rank 0");
}

// Offsets of one packed varlen side; returns the longest sequence when readable.
struct Offsets {
  std::int64_t batch = 0;
  std::int64_t longest = 0;
};

Offsets check_cu_seqlens(const Tensor& cu, const std::string& name, std::int64_t total,
                         const std::string& total_name, std::int64_t max_seqlen,
                         const std::string& max_name) {
  if (cu.rank != 1 || ext(cu, 0) < 2)
    fail(name + ": expected rank 1 [B+1] with B >= 1, got " +
         (cu.rank == 1 ? cu.shape_string()
                       : "rank " + str(std::int64_t{cu.rank}) + " " + shape_of(cu)));
  check_storage(cu, name, {"B+1"});
  expect_dtype(cu, name, DType::i32, "");
  Offsets o;
  o.batch = ext(cu, 0) - 1;
  if (max_seqlen < 0)
    fail(max_name + ": expected >= 0 (0 = read off " + name + "), got " + str(max_seqlen));
  if (max_seqlen > total)
    fail(max_name + ": expected <= " + total_name + " = " + str(total) + ", got " +
         str(max_seqlen));
  if (cu.space != MemorySpace::host) {
    // Device-resident offsets cannot be read here; the caller must say how long sequences get.
    if (max_seqlen == 0)
      fail(max_name + ": expected a value > 0 when " + name + " is in device memory (" +
           str(cu.space) + "), got 0");
    o.longest = max_seqlen;
    return o;
  }
  std::int64_t prev = load_int(cu, 0);
  if (prev != 0)
    fail(name + ": expected " + name + "[0] = 0, got " + str(prev));
  std::int64_t longest = 0;
  for (std::int64_t b = 1; b <= o.batch; ++b) {
    const std::int64_t cur = load_int(cu, b * strd(cu, 0));
    if (cur < prev)
      fail(name + ": expected non-decreasing offsets, got " + str(cur) + " at index " + str(b) +
           " after " + str(prev) + " at index " + str(b - 1));
    longest = std::max(longest, cur - prev);
    prev = cur;
  }
  if (prev != total)
    fail(name + ": expected the last offset to equal " + total_name + " = " + str(total) +
         ", got " + str(prev) + " at index " + str(o.batch));
  if (max_seqlen > 0 && max_seqlen < longest)
    fail(max_name + ": expected >= the longest sequence in " + name + " (" + str(longest) +
         "), got " + str(max_seqlen));
  o.longest = max_seqlen > 0 ? max_seqlen : longest;
  return o;
}

void check_seqlens(const Tensor& lens, const std::string& name, std::int64_t B, std::int64_t limit,
                   const std::string& limit_name) {
  if (lens.rank != 1 || ext(lens, 0) != B)
    fail(name + ": expected shape [B] = [" + str(B) + "], got " + shape_of(lens));
  check_storage(lens, name, {"B"});
  expect_dtype(lens, name, DType::i32, "");
  if (lens.space != MemorySpace::host)
    return;
  for (std::int64_t b = 0; b < B; ++b) {
    const std::int64_t len = load_int(lens, b * strd(lens, 0));
    if (len < 0 || len > limit)
      fail(name + ": expected values in [0, " + limit_name + "] = [0, " + str(limit) + "], got " +
           str(len) + " at index " + str(b));
  }
}

// bias and mask: [B|1, N|1, T, S].
void check_score_shaped(const Tensor& t, const std::string& name, const Dims& d) {
  const bool ok = t.rank == 4 && (ext(t, 0) == d.B || ext(t, 0) == 1) &&
                  (ext(t, 1) == d.N || ext(t, 1) == 1) && ext(t, 2) == d.T && ext(t, 3) == d.S;
  if (!ok)
    fail(
        name + ": expected shape [B|1, N|1, T, S] = [" + str(d.B) + "|1, " + str(d.N) + "|1, " +
        str(d.T) + ", " + str(d.S) + "], got " +
        (t.rank == 4 ? t.shape_string() : "rank " + str(std::int64_t{t.rank}) + " " + shape_of(t)));
  check_storage(t, name, {"B|1", "N|1", "T", "S"});
}

void check_options(const Options& o) {
  if (o.scale && !(std::isfinite(*o.scale) && *o.scale > 0.0))
    fail("options.scale: expected a finite value > 0, got " + str(*o.scale));
  if (!(std::isfinite(o.softcap) && o.softcap >= 0.0))
    fail("options.softcap: expected a finite value >= 0 (0 = off), got " + str(o.softcap));
  if (!(o.dropout_p >= 0.0 && o.dropout_p < 1.0))
    fail("options.dropout_p: expected a probability in [0, 1), got " + str(o.dropout_p));
  if (o.window_left < -1)
    fail("options.window_left: expected >= -1, got " + str(o.window_left));
  if (o.window_right < -1)
    fail("options.window_right: expected >= -1, got " + str(o.window_right));
  if (o.causal && o.window_right != -1 && o.window_right != 0)
    fail("options.window_right: expected -1 or 0 with options.causal = true (causal means "
         "window_right = 0), got " +
         str(o.window_right));
  if (to_string(o.backend) != "unknown")
    return;
  fail("options.backend: expected one of auto, cudnn, cuda, hip, portable, naive, reference, got "
       "value " +
       str(static_cast<std::int64_t>(o.backend)));
}

// Philox counters are 32-bit words: bh = b*N+n, i, j/4 and offset must each fit one.
void check_dropout_limits(const Options& o, const Dims& d) {
  if (o.dropout_p == 0.0)
    return;
  constexpr std::int64_t two32 = std::int64_t{1} << 32;
  constexpr std::int64_t two34 = std::int64_t{1} << 34;
  if (d.B > (two32 - 1) / d.N)
    fail("options.dropout_p: expected B*N < 2^32 with dropout (Philox counter), got B*N = " +
         str(d.B) + "*" + str(d.N));
  if (d.T >= two32)
    fail("options.dropout_p: expected T < 2^32 with dropout (Philox counter), got T = " + str(d.T));
  if (d.S >= two34)
    fail("options.dropout_p: expected S < 2^34 with dropout (Philox counter), got S = " + str(d.S));
  if (o.dropout_offset >= static_cast<std::uint64_t>(two32))
    fail("options.dropout_offset: expected < 2^32 (Philox counter), got " +
         std::to_string(o.dropout_offset));
}

struct NamedTensor {
  const Tensor* t;
  const char* name;
};

std::vector<NamedTensor> fp8_tensors(const Fp8Scales& f) {
  return {{&f.descale_q, "extras.fp8.descale_q"}, {&f.descale_k, "extras.fp8.descale_k"},
          {&f.descale_v, "extras.fp8.descale_v"}, {&f.descale_s, "extras.fp8.descale_s"},
          {&f.scale_s, "extras.fp8.scale_s"},     {&f.scale_o, "extras.fp8.scale_o"},
          {&f.amax_s, "extras.fp8.amax_s"},       {&f.amax_o, "extras.fp8.amax_o"}};
}

// FP8 problems may carry per-tensor factors (f32 [1]); other problems carry none. amax_s and
// amax_o are outputs. Memory spaces are checked with the other tensors.
void check_fp8_scales(const ForwardProblem& p) {
  const std::vector<NamedTensor> scales = fp8_tensors(p.extras.fp8);
  if (!is_fp8(p.q.dtype)) {
    for (const NamedTensor& n : scales)
      if (n.t->defined())
        fail(std::string(n.name) + ": expected not given unless q is f8_e4m3 or f8_e5m2, got " +
             n.t->shape_string() + " with q of dtype " + str(p.q.dtype));
    return;
  }
  for (const NamedTensor& n : scales) {
    if (!n.t->defined())
      continue; // optional: a missing descale/scale is 1, a missing amax is not reported
    if (n.t->rank != 1 || ext(*n.t, 0) != 1)
      fail(std::string(n.name) + ": expected shape [1] (one per-tensor factor), got " +
           shape_of(*n.t));
    check_storage(*n.t, n.name, {"1"});
    expect_dtype(*n.t, n.name, DType::f32, "");
  }
}

void check_one_space(const std::vector<NamedTensor>& given) {
  const Tensor& first = *given.front().t;
  for (const NamedTensor& n : given)
    if (n.t->defined() && n.t->space != first.space)
      fail(std::string(n.name) + ": expected memory space " + str(first.space) + " like " +
           given.front().name + ", got " + str(n.t->space));
}

Dims validate_forward(const ForwardProblem& p, bool out_is_output) {
  const Extras& e = p.extras;
  std::vector<NamedTensor> all = {
      {&p.q, "q"},
      {&p.k, "k"},
      {&p.v, "v"},
      {&p.out, "out"},
      {&e.lse, "extras.lse"},
      {&e.bias, "extras.bias"},
      {&e.mask, "extras.mask"},
      {&e.alibi_slopes, "extras.alibi_slopes"},
      {&e.seqlens_q, "extras.seqlens_q"},
      {&e.seqlens_k, "extras.seqlens_k"},
      {&e.cu_seqlens_q, "extras.cu_seqlens_q"},
      {&e.cu_seqlens_k, "extras.cu_seqlens_k"},
  };
  for (const NamedTensor& n : fp8_tensors(e.fp8))
    all.push_back(n);
  for (const NamedTensor& n : all)
    check_not_half_given(*n.t, n.name);
  check_options(p.options);

  Dims d;
  d.packed = e.cu_seqlens_q.defined() || e.cu_seqlens_k.defined();
  d.padded = e.seqlens_q.defined() || e.seqlens_k.defined();
  if (d.packed && !e.cu_seqlens_q.defined())
    fail("extras.cu_seqlens_q: expected with extras.cu_seqlens_k (packed varlen needs both), got "
         "none");
  if (d.packed && !e.cu_seqlens_k.defined())
    fail("extras.cu_seqlens_k: expected with extras.cu_seqlens_q (packed varlen needs both), got "
         "none");
  if (d.packed && d.padded)
    fail(std::string(e.seqlens_q.defined() ? "extras.seqlens_q" : "extras.seqlens_k") +
         ": expected not given with extras.cu_seqlens_q/k (padded and packed varlen are "
         "mutually exclusive), got " +
         (e.seqlens_q.defined() ? e.seqlens_q : e.seqlens_k).shape_string());
  if (!d.packed && (e.max_seqlen_q != 0 || e.max_seqlen_k != 0))
    fail(std::string(e.max_seqlen_q != 0 ? "extras.max_seqlen_q" : "extras.max_seqlen_k") +
         ": expected 0 without cu_seqlens (only packed varlen uses it), got " +
         str(e.max_seqlen_q != 0 ? e.max_seqlen_q : e.max_seqlen_k));

  // q, k, v, out: ranks and storage, then the sizes they agree on.
  if (d.packed) {
    const std::string why = " (packed varlen: cu_seqlens given)";
    check_layout(p.q, "q", {"total_q", "N", "H"}, why);
    check_layout(p.k, "k", {"total_k", "K", "H"}, why);
    check_layout(p.v, "v", {"total_k", "K", "Hv"}, why);
    check_layout(p.out, "out", {"total_q", "N", "Hv"}, why);
  } else {
    check_layout(p.q, "q", {"B", "T", "N", "H"}, " (or rank 3 [total_q, N, H] with cu_seqlens)");
    check_layout(p.k, "k", {"B", "S", "K", "H"});
    check_layout(p.v, "v", {"B", "S", "K", "Hv"});
    check_layout(p.out, "out", {"B", "T", "N", "Hv"});
  }
  if (!is_floating(p.q.dtype))
    fail("q: expected a floating dtype (f64, f32, f16, bf16, f8_e4m3, f8_e5m2), got " +
         str(p.q.dtype));
  expect_dtype(p.k, "k", p.q.dtype, "q");
  expect_dtype(p.v, "v", p.q.dtype, "q");
  expect_dtype(p.out, "out", p.q.dtype, "q");
  check_fp8_scales(p);

  const int o = d.packed ? 1 : 2; // dim of the heads
  d.N = ext(p.q, o);
  d.H = ext(p.q, o + 1);
  d.K = ext(p.k, o);
  d.Hv = ext(p.v, o + 1);
  if (!d.packed) {
    d.B = ext(p.q, 0);
    d.T = ext(p.q, 1);
    d.S = ext(p.k, 1);
    expect_extent(p.k, "k", 0, "B", d.B, "q");
    expect_extent(p.v, "v", 0, "B", d.B, "q");
    expect_extent(p.v, "v", 1, "S", d.S, "k");
    expect_extent(p.out, "out", 0, "B", d.B, "q");
    expect_extent(p.out, "out", 1, "T", d.T, "q");
  } else {
    expect_extent(p.v, "v", 0, "total_k", ext(p.k, 0), "k");
    expect_extent(p.out, "out", 0, "total_q", ext(p.q, 0), "q");
  }
  expect_extent(p.k, "k", o + 1, "H", d.H, "q");
  expect_extent(p.v, "v", o, "K", d.K, "k");
  expect_extent(p.out, "out", o, "N", d.N, "q");
  expect_extent(p.out, "out", o + 1, "Hv", d.Hv, "v");
  if (d.N % d.K != 0)
    fail("k: expected extent K at dim " + str(std::int64_t{o}) + " to divide N=" + str(d.N) +
         " (GQA/MQA), got K=" + str(d.K) + " in " + p.k.shape_string());

  // Sequence lengths: packed offsets fix B, T, S; padded lengths must fit T, S.
  if (d.packed) {
    const Offsets oq = check_cu_seqlens(e.cu_seqlens_q, "extras.cu_seqlens_q", ext(p.q, 0),
                                        "total_q", e.max_seqlen_q, "extras.max_seqlen_q");
    if (e.cu_seqlens_k.rank != 1 || ext(e.cu_seqlens_k, 0) != oq.batch + 1)
      fail("extras.cu_seqlens_k: expected shape [B+1] = [" + str(oq.batch + 1) +
           "] like extras.cu_seqlens_q, got " + shape_of(e.cu_seqlens_k));
    const Offsets ok = check_cu_seqlens(e.cu_seqlens_k, "extras.cu_seqlens_k", ext(p.k, 0),
                                        "total_k", e.max_seqlen_k, "extras.max_seqlen_k");
    d.B = oq.batch;
    d.T = oq.longest;
    d.S = ok.longest;
  } else {
    if (e.seqlens_q.defined())
      check_seqlens(e.seqlens_q, "extras.seqlens_q", d.B, d.T, "T");
    if (e.seqlens_k.defined())
      check_seqlens(e.seqlens_k, "extras.seqlens_k", d.B, d.S, "S");
  }

  if (e.lse.defined()) {
    const bool ok = d.packed
                        ? e.lse.rank == 2 && ext(e.lse, 0) == d.N && ext(e.lse, 1) == ext(p.q, 0)
                        : e.lse.rank == 3 && ext(e.lse, 0) == d.B && ext(e.lse, 1) == d.N &&
                              ext(e.lse, 2) == d.T;
    if (!ok)
      fail("extras.lse: expected shape " +
           (d.packed ? "[N, total_q] = [" + str(d.N) + ", " + str(ext(p.q, 0)) + "]"
                     : "[B, N, T] = [" + str(d.B) + ", " + str(d.N) + ", " + str(d.T) + "]") +
           ", got " + shape_of(e.lse));
    check_storage(e.lse, "extras.lse", d.packed ? Names{"N", "total_q"} : Names{"B", "N", "T"});
    expect_dtype(e.lse, "extras.lse", DType::f32, "");
  }

  for (const NamedTensor& n :
       {NamedTensor{&e.bias, "extras.bias"}, NamedTensor{&e.mask, "extras.mask"}}) {
    if (!n.t->defined())
      continue;
    if (d.packed)
      fail(std::string(n.name) +
           ": expected not given with cu_seqlens (a [B, N, T, S] tensor is not defined for "
           "packed varlen; use padded batches), got " +
           n.t->shape_string());
    check_score_shaped(*n.t, n.name, d);
  }
  if (e.bias.defined() && (!is_floating(e.bias.dtype) || is_fp8(e.bias.dtype)))
    fail("extras.bias: expected a floating dtype (f64, f32, f16, bf16), got " + str(e.bias.dtype));
  if (e.mask.defined())
    expect_dtype(e.mask, "extras.mask", DType::boolean, "");

  if (e.alibi_slopes.defined()) {
    const Tensor& a = e.alibi_slopes;
    const bool ok =
        (a.rank == 1 && ext(a, 0) == d.N) || (a.rank == 2 && ext(a, 0) == d.B && ext(a, 1) == d.N);
    if (!ok)
      fail("extras.alibi_slopes: expected shape [N] = [" + str(d.N) + "] or [B, N] = [" + str(d.B) +
           ", " + str(d.N) + "], got " + shape_of(a));
    check_storage(a, "extras.alibi_slopes", a.rank == 1 ? Names{"N"} : Names{"B", "N"});
    expect_dtype(a, "extras.alibi_slopes", DType::f32, "");
  }

  check_one_space(all);
  if (out_is_output) {
    check_no_self_alias(p.out, "out");
    if (e.lse.defined())
      check_no_self_alias(e.lse, "extras.lse");
  }

  d.scale = p.options.scale ? *p.options.scale : 1.0 / std::sqrt(static_cast<double>(d.H));
  d.window_left = p.options.window_left;
  d.window_right = p.options.causal ? 0 : p.options.window_right;
  check_dropout_limits(p.options, d);
  return d;
}

// A gradient tensor: same shape, dtype (unless `same_dtype` is false: FP8 backwards, checked by
// check_fp8_gradient_dtypes) and memory space as its counterpart.
void check_like(const Tensor& t, const std::string& name, const Tensor& ref,
                const std::string& ref_name, bool same_dtype = true) {
  if (!t.defined())
    fail(name + ": expected a tensor of shape " + ref.shape_string() + " like " + ref_name +
         ", got none (rank 0)");
  bool same_shape = t.rank == ref.rank;
  for (int d = 0; same_shape && d < t.rank; ++d)
    same_shape = ext(t, d) == ext(ref, d);
  if (!same_shape)
    fail(name + ": expected shape " + ref.shape_string() + " like " + ref_name + ", got " +
         shape_of(t));
  Names dims;
  for (int d = 0; d < t.rank; ++d)
    dims.push_back("dim" + str(std::int64_t{d}));
  check_storage(t, name, dims);
  if (same_dtype)
    expect_dtype(t, name, ref.dtype, ref_name);
  if (t.space != ref.space)
    fail(name + ": expected memory space " + str(ref.space) + " like " + ref_name + ", got " +
         str(t.space));
}

std::vector<NamedTensor> fp8_backward_tensors(const Fp8BackwardScales& f) {
  return {{&f.descale_o, "fp8.descale_o"},   {&f.descale_dout, "fp8.descale_dout"},
          {&f.descale_dp, "fp8.descale_dp"}, {&f.scale_dp, "fp8.scale_dp"},
          {&f.scale_dq, "fp8.scale_dq"},     {&f.scale_dk, "fp8.scale_dk"},
          {&f.scale_dv, "fp8.scale_dv"},     {&f.amax_dq, "fp8.amax_dq"},
          {&f.amax_dk, "fp8.amax_dk"},       {&f.amax_dv, "fp8.amax_dv"},
          {&f.amax_dp, "fp8.amax_dp"}};
}

// FP8 backward gradients: dout in either FP8 format (TransformerEngine's HYBRID recipe pairs an
// e4m3 forward with e5m2 gradients); dq, dk, dv share one dtype, dout's format or f16 / bf16.
void check_fp8_gradient_dtypes(const BackwardProblem& p) {
  const DType q = p.forward.q.dtype;
  if (!is_fp8(p.dout.dtype))
    fail("dout: expected dtype f8_e4m3 or f8_e5m2 with q of dtype " + str(q) +
         " (FP8 backward), got " + str(p.dout.dtype));
  const DType g = p.dq.dtype;
  if (g != p.dout.dtype && g != DType::f16 && g != DType::bf16)
    fail("dq: expected dtype " + str(p.dout.dtype) +
         " like dout, or f16 / bf16 (FP8 backward gradients), got " + str(g));
  expect_dtype(p.dk, "dk", g, "dq");
  expect_dtype(p.dv, "dv", g, "dq");
}

// The FP8 backward's factors (f32 [1], each optional, in q's memory space; amax_* are outputs).
// None for other problems; no scale_dq/dk/dv for f16/bf16 gradients (they are not scaled).
void check_fp8_backward_scales(const BackwardProblem& p) {
  const Tensor& q = p.forward.q;
  const std::vector<NamedTensor> scales = fp8_backward_tensors(p.fp8);
  for (const NamedTensor& n : scales) {
    if (!n.t->defined())
      continue; // optional: a missing descale/scale is 1, a missing amax is not reported
    if (!is_fp8(q.dtype))
      fail(std::string(n.name) + ": expected not given unless q is f8_e4m3 or f8_e5m2, got " +
           n.t->shape_string() + " with q of dtype " + str(q.dtype));
    if (n.t->rank != 1 || ext(*n.t, 0) != 1)
      fail(std::string(n.name) + ": expected shape [1] (one per-tensor factor), got " +
           shape_of(*n.t));
    check_storage(*n.t, n.name, {"1"});
    expect_dtype(*n.t, n.name, DType::f32, "");
    if (n.t->space != q.space)
      fail(std::string(n.name) + ": expected memory space " + str(q.space) + " like q, got " +
           str(n.t->space));
  }
  if (!is_fp8(q.dtype) || is_fp8(p.dq.dtype))
    return;
  for (const NamedTensor& n : scales)
    if (n.t->defined() &&
        (n.t == &p.fp8.scale_dq || n.t == &p.fp8.scale_dk || n.t == &p.fp8.scale_dv))
      fail(std::string(n.name) + ": expected not given with dq of dtype " + str(p.dq.dtype) +
           " (f16 / bf16 gradients are not scaled), got " + n.t->shape_string());
}

} // namespace

Dims validate(const ForwardProblem& p) {
  return validate_forward(p, /*out_is_output=*/true);
}

Dims validate(const BackwardProblem& p) {
  for (const NamedTensor& n :
       {NamedTensor{&p.dout, "dout"}, NamedTensor{&p.dq, "dq"}, NamedTensor{&p.dk, "dk"},
        NamedTensor{&p.dv, "dv"}, NamedTensor{&p.dbias, "dbias"}})
    check_not_half_given(*n.t, n.name);
  for (const NamedTensor& n : fp8_backward_tensors(p.fp8))
    check_not_half_given(*n.t, n.name);
  const ForwardProblem& f = p.forward;
  const Dims d = validate_forward(f, /*out_is_output=*/false);
  const bool fp8 = is_fp8(f.q.dtype); // gradient dtypes: check_fp8_gradient_dtypes
  check_like(p.dout, "dout", f.out, "out", !fp8);
  check_like(p.dq, "dq", f.q, "q", !fp8);
  check_like(p.dk, "dk", f.k, "k", !fp8);
  check_like(p.dv, "dv", f.v, "v", !fp8);
  if (fp8)
    check_fp8_gradient_dtypes(p);
  check_fp8_backward_scales(p);
  if (p.dbias.defined()) {
    if (!f.extras.bias.defined())
      fail("dbias: expected only with extras.bias (it is the gradient of the bias), got " +
           p.dbias.shape_string() + " without extras.bias");
    check_like(p.dbias, "dbias", f.extras.bias, "extras.bias");
  }
  check_no_self_alias(p.dq, "dq");
  check_no_self_alias(p.dk, "dk");
  check_no_self_alias(p.dv, "dv");
  if (p.dbias.defined())
    check_no_self_alias(p.dbias, "dbias");
  return d;
}

} // namespace kattn
