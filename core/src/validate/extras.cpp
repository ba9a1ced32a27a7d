// The optional tensors of Extras: the varlen layout and its sequence lengths (the only tensor
// data validation reads, and only from host memory), lse, bias, mask and ALiBi slopes; and the
// backward's dbias.
#include <algorithm>
#include <cstdint>

#include "checks.hpp"
#include "kokkosattn/detail/host_access.hpp"

namespace kattn::validation {
namespace {

// Offsets of one packed varlen side; returns the longest sequence when readable.
struct Offsets {
  std::int64_t batch = 0;
  std::int64_t longest = 0;
};

Offsets check_cu_seqlens(const Tensor& cu, const std::string& name, std::int64_t total,
                         const std::string& total_name, std::int64_t max_seqlen,
                         const std::string& max_name) {
  if (cu.rank != 1 || ext(cu, 0) < 1)
    fail(name + ": expected rank 1 [B+1] with B >= 0, got " + shape_or_rank(cu, 1));
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

void check_lse(const ForwardProblem& p, const Dims& d) {
  const Tensor& lse = p.extras.lse;
  const bool ok =
      d.packed ? lse.rank == 2 && ext(lse, 0) == d.N && ext(lse, 1) == ext(p.q, 0)
               : lse.rank == 3 && ext(lse, 0) == d.B && ext(lse, 1) == d.N && ext(lse, 2) == d.T;
  if (!ok)
    fail("extras.lse: expected shape " +
         (d.packed ? "[N, total_q] = [" + str(d.N) + ", " + str(ext(p.q, 0)) + "]"
                   : "[B, N, T] = [" + str(d.B) + ", " + str(d.N) + ", " + str(d.T) + "]") +
         ", got " + shape_of(lse));
  check_storage(lse, "extras.lse", d.packed ? Names{"N", "total_q"} : Names{"B", "N", "T"});
  expect_dtype(lse, "extras.lse", DType::f32, "");
}

// bias and mask: [B|1, N|1, T, S].
void check_score_shaped(const Tensor& t, const std::string& name, const Dims& d) {
  const bool ok = t.rank == 4 && (ext(t, 0) == d.B || ext(t, 0) == 1) &&
                  (ext(t, 1) == d.N || ext(t, 1) == 1) && ext(t, 2) == d.T && ext(t, 3) == d.S;
  if (!ok)
    fail(name + ": expected shape [B|1, N|1, T, S] = [" + str(d.B) + "|1, " + str(d.N) + "|1, " +
         str(d.T) + ", " + str(d.S) + "], got " + shape_or_rank(t, 4));
  check_storage(t, name, {"B|1", "N|1", "T", "S"});
}

void check_alibi_slopes(const Tensor& a, const Dims& d) {
  const bool ok =
      (a.rank == 1 && ext(a, 0) == d.N) || (a.rank == 2 && ext(a, 0) == d.B && ext(a, 1) == d.N);
  if (!ok)
    fail("extras.alibi_slopes: expected shape [N] = [" + str(d.N) + "] or [B, N] = [" + str(d.B) +
         ", " + str(d.N) + "], got " + shape_of(a));
  check_storage(a, "extras.alibi_slopes", a.rank == 1 ? Names{"N"} : Names{"B", "N"});
  expect_dtype(a, "extras.alibi_slopes", DType::f32, "");
}

void check_sinks(const Tensor& s, const Dims& d) {
  if (s.rank != 1 || ext(s, 0) != d.N)
    fail("extras.sinks: expected shape [N] = [" + str(d.N) + "], got " + shape_of(s));
  check_storage(s, "extras.sinks", Names{"N"});
  expect_dtype(s, "extras.sinks", DType::f32, "");
}

} // namespace

Dims varlen_mode(const Extras& e) {
  Dims d;
  d.packed = e.cu_seqlens_q.defined() || e.cu_seqlens_k.defined();
  d.padded = e.seqlens_q.defined() || e.seqlens_k.defined();
  d.paged = e.page_table.defined();
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
  if (d.paged && d.packed)
    fail("extras.page_table: expected not given with cu_seqlens (a paged KV cache takes batched "
         "q with extras.seqlens_k), got " +
         e.page_table.shape_string());
  if (d.paged && !e.seqlens_k.defined())
    fail("extras.seqlens_k: expected with extras.page_table (a paged KV cache needs each "
         "sequence's key count), got none");
  if (!d.packed && (e.max_seqlen_q != 0 || e.max_seqlen_k != 0))
    fail(std::string(e.max_seqlen_q != 0 ? "extras.max_seqlen_q" : "extras.max_seqlen_k") +
         ": expected 0 without cu_seqlens (only packed varlen uses it), got " +
         str(e.max_seqlen_q != 0 ? e.max_seqlen_q : e.max_seqlen_k));
  return d;
}

void check_lengths(const ForwardProblem& p, Dims& d) {
  const Extras& e = p.extras;
  if (!d.packed) {
    if (e.seqlens_q.defined())
      check_seqlens(e.seqlens_q, "extras.seqlens_q", d.B, d.T, "T");
    if (e.seqlens_k.defined())
      check_seqlens(e.seqlens_k, "extras.seqlens_k", d.B, d.S,
                    d.paged ? "S = max_pages_per_seq * page_size" : "S");
    return;
  }
  const Offsets oq = check_cu_seqlens(e.cu_seqlens_q, "extras.cu_seqlens_q", ext(p.q, 0), "total_q",
                                      e.max_seqlen_q, "extras.max_seqlen_q");
  if (e.cu_seqlens_k.rank != 1 || ext(e.cu_seqlens_k, 0) != oq.batch + 1)
    fail("extras.cu_seqlens_k: expected shape [B+1] = [" + str(oq.batch + 1) +
         "] like extras.cu_seqlens_q, got " + shape_of(e.cu_seqlens_k));
  const Offsets ok = check_cu_seqlens(e.cu_seqlens_k, "extras.cu_seqlens_k", ext(p.k, 0), "total_k",
                                      e.max_seqlen_k, "extras.max_seqlen_k");
  d.B = oq.batch;
  d.T = oq.longest;
  d.S = ok.longest;
}

void check_extras(const ForwardProblem& p, const Dims& d) {
  const Extras& e = p.extras;
  if (e.lse.defined())
    check_lse(p, d);
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
  if (e.alibi_slopes.defined())
    check_alibi_slopes(e.alibi_slopes, d);
  if (e.sinks.defined())
    check_sinks(e.sinks, d);
}

namespace {

// A gradient output of an optional input: only with the input, and shaped, typed and laid out
// like it.
void check_gradient_of(const Tensor& grad, const char* grad_name, const Tensor& input,
                       const char* input_name, const char* what) {
  if (!grad.defined())
    return;
  if (!input.defined())
    fail(std::string(grad_name) + ": expected only with " + input_name +
         " (it is the gradient of the " + what + "), got " + grad.shape_string() + " without " +
         input_name);
  check_like(grad, grad_name, input, input_name);
}

} // namespace

void check_dbias(const BackwardProblem& p) {
  check_gradient_of(p.dbias, "dbias", p.forward.extras.bias, "extras.bias", "bias");
}

void check_dsinks(const BackwardProblem& p) {
  check_gradient_of(p.dsinks, "dsinks", p.forward.extras.sinks, "extras.sinks", "sinks");
}

} // namespace kattn::validation
