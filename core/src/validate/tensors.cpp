// A tensor's storage, shape, strides and memory space, and the four main tensors q, k, v, out.
#include <optional>
#include <sstream>
#include <tuple>

#include "checks.hpp"
#include "kokkosattn/detail/checked_size.hpp"
#include "kokkosattn/errors.hpp"

namespace kattn::validation {

void fail(const std::string& msg) {
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

std::string bracket(const Names& dims) {
  std::string s = "[";
  for (std::size_t i = 0; i < dims.size(); ++i)
    s += (i ? ", " : "") + dims[i];
  return s + "]";
}

namespace {
bool rank_in_range(const Tensor& t) {
  return t.rank >= 0 && t.rank <= Tensor::max_rank;
}
} // namespace

std::string shape_of(const Tensor& t) {
  return rank_in_range(t) ? t.shape_string() : "(rank " + str(std::int64_t{t.rank}) + ")";
}
std::string rank_and_shape(const Tensor& t) {
  return "rank " + str(std::int64_t{t.rank}) + " " + shape_of(t);
}
std::string shape_or_rank(const Tensor& t, int want) {
  return t.rank == want ? t.shape_string() : rank_and_shape(t);
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

// Checks shared by every given tensor once its rank is right: non-negative extents (0 is an
// empty problem, docs/semantics.md rule empty), a data pointer unless there is no element (a
// zero-size View has none), non-negative strides.
void check_storage(const Tensor& t, const std::string& name, const Names& dims) {
  for (int d = 0; d < t.rank; ++d)
    if (ext(t, d) < 0)
      fail(name + ": expected extent " + dims[static_cast<std::size_t>(d)] + " >= 0 at dim " +
           str(std::int64_t{d}) + ", got " + t.shape_string());
  if (t.data == nullptr && has_elements(t))
    fail(name + ": expected a non-null data pointer for a tensor of shape " + t.shape_string() +
         ", got nullptr");
  for (int d = 0; d < t.rank; ++d)
    if (strd(t, d) < 0)
      fail(name + ": expected non-negative strides, got strides " + t.stride_string() +
           " for shape " + t.shape_string());
  check_addressable(t, name);
}

// Every element addressable in int64: the element count and one past the largest offset
// (sum of (extent - 1) * stride), both in bytes. Backends index with these sums (and copies
// allocate the count): a wrapped one read or wrote outside the tensor.
std::optional<std::int64_t> byte_span(const Tensor& t) {
  if (!has_elements(t))
    return 0;
  std::optional<std::int64_t> end = 1;
  for (int d = 0; d < t.rank && end; ++d) {
    const std::optional<std::int64_t> reach = checked_product({ext(t, d) - 1, strd(t, d)});
    end = reach ? checked_sum(*end, *reach) : std::nullopt;
  }
  return end ? checked_product({*end, static_cast<std::int64_t>(size_bytes(t.dtype))}) : end;
}

void check_addressable(const Tensor& t, const std::string& name) {
  const auto elem = static_cast<std::int64_t>(size_bytes(t.dtype));
  std::optional<std::int64_t> count = elem;
  for (int d = 0; d < t.rank && count; ++d)
    count = checked_product({*count, ext(t, d)});
  if (!count || !byte_span(t))
    fail(name + ": expected a tensor whose size and largest element offset fit in int64 bytes " +
         "(extents times " + str(elem) + "-byte " + str(t.dtype) +
         " elements; sum of (extent - 1) * stride), got shape " + t.shape_string() +
         " with strides " + t.stride_string());
}

// A required tensor of a fixed layout. `alternative` is appended to the expectation.
void check_layout(const Tensor& t, const std::string& name, const Names& dims,
                  const std::string& alternative) {
  const int rank = static_cast<int>(dims.size());
  if (!t.defined() || t.rank != rank)
    fail(name + ": expected rank " + str(std::int64_t{rank}) + " " + bracket(dims) + alternative +
         ", got " + (t.rank == 0 ? std::string("none (rank 0)") : rank_and_shape(t)));
  check_storage(t, name, dims);
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

void expect_space(const Tensor& t, const std::string& name, MemorySpace want,
                  const std::string& like) {
  if (t.space != want)
    fail(name + ": expected memory space " + str(want) + " like " + like + ", got " + str(t.space));
}

void check_one_space(const std::vector<NamedTensor>& given) {
  const NamedTensor& first = given.front();
  for (const NamedTensor& n : given)
    if (n.t->defined())
      expect_space(*n.t, n.name, first.t->space, first.name);
}

// A gradient tensor: same shape, dtype (unless `same_dtype` is false: FP8 backwards, checked by
// check_fp8_gradient_dtypes) and memory space as its counterpart.
void check_like(const Tensor& t, const std::string& name, const Tensor& ref,
                const std::string& ref_name, bool same_dtype) {
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
  expect_space(t, name, ref.space, ref_name);
}

void check_main_layouts(const ForwardProblem& p, const Dims& d) {
  if (d.packed) {
    const std::string why = " (packed varlen: cu_seqlens given)";
    check_layout(p.q, "q", {"total_q", "N", "H"}, why);
    check_layout(p.k, "k", {"total_k", "K", "H"}, why);
    check_layout(p.v, "v", {"total_k", "K", "Hv"}, why);
    check_layout(p.out, "out", {"total_q", "N", "Hv"}, why);
  } else {
    check_layout(p.q, "q", {"B", "T", "N", "H"}, " (or rank 3 [total_q, N, H] with cu_seqlens)");
    if (d.paged) {
      const std::string why = " (a paged KV cache: extras.page_table given)";
      check_layout(p.k, "k", {"num_pages", "page_size", "K", "H"}, why);
      check_layout(p.v, "v", {"num_pages", "page_size", "K", "Hv"}, why);
    } else {
      check_layout(p.k, "k", {"B", "S", "K", "H"});
      check_layout(p.v, "v", {"B", "S", "K", "Hv"});
    }
    check_layout(p.out, "out", {"B", "T", "N", "Hv"});
  }
  if (!is_floating(p.q.dtype))
    fail("q: expected a floating dtype (f64, f32, f16, bf16, f8_e4m3, f8_e5m2), got " +
         str(p.q.dtype));
  expect_dtype(p.k, "k", p.q.dtype, "q");
  expect_dtype(p.v, "v", p.q.dtype, "q");
  expect_dtype(p.out, "out", p.q.dtype, "q");
}

void main_sizes(const ForwardProblem& p, Dims& d) {
  const int o = d.packed ? 1 : 2; // dim of the heads
  d.N = ext(p.q, o);
  d.H = ext(p.q, o + 1);
  d.K = ext(p.k, o);
  d.Hv = ext(p.v, o + 1);
  if (d.paged) {
    d.B = ext(p.q, 0);
    d.T = ext(p.q, 1);
    d.page_size = ext(p.k, 1);
    expect_extent(p.v, "v", 0, "num_pages", ext(p.k, 0), "k");
    expect_extent(p.v, "v", 1, "page_size", d.page_size, "k");
    expect_extent(p.out, "out", 0, "B", d.B, "q");
    expect_extent(p.out, "out", 1, "T", d.T, "q");
    d.S = paged_key_capacity(p, d); // (paged.cpp)
  } else if (!d.packed) {
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
  for (const auto& [t, name, dim, symbol] :
       {std::tuple{&p.q, "q", o + 1, "H"}, std::tuple{&p.v, "v", o + 1, "Hv"}})
    if (ext(*t, dim) < 1)
      fail(std::string(name) + ": expected head dim " + symbol + " >= 1 at dim " +
           str(std::int64_t{dim}) + " (only B, T, S, N, K may be 0), got " + t->shape_string());
  // (K >= 1 even with N = 0: backends divide by the group size N / K.)
  if (d.K == 0)
    fail("k: expected extent K >= 1 at dim " + str(std::int64_t{o}) +
         " (key/value heads; N may be 0), got " + p.k.shape_string());
  if (d.N % d.K != 0)
    fail("k: expected extent K at dim " + str(std::int64_t{o}) + " to divide N=" + str(d.N) +
         " (GQA/MQA), got K=" + str(d.K) + " in " + p.k.shape_string());
}

} // namespace kattn::validation
