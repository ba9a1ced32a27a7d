// The rules behind kattn::validate (kokkosattn/validate.hpp), one concern per file:
//   tensors.cpp  a tensor's storage, shape, strides and memory space; q, k, v, out
//   options.cpp  option values and what they resolve to in Dims
//   extras.cpp   the optional tensors: sequence lengths, lse, bias, mask, ALiBi, dbias
//   paged.cpp    a paged KV cache: the page table, its capacity and the pages it names
//   aliasing.cpp outputs that alias themselves, each other or an input
//   fp8.cpp      the FP8 scaling factors and the FP8 backward's gradient dtypes
//   validate.cpp the order in which a forward and a backward problem meet them
// Private to core/src/validate (not installed). Every failure is an InvalidArgument naming the
// argument, what was expected and what came; a new check goes into its concern's file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kokkosattn/detail/empty_sides.hpp" // has_elements
#include "kokkosattn/problem.hpp"

namespace kattn::validation {

using Names = std::vector<std::string>;

struct NamedTensor {
  const Tensor* t;
  const char* name;
};

// Message parts (tensors.cpp).
[[noreturn]] void fail(const std::string& msg);
std::string str(DType t);
std::string str(MemorySpace m);
std::string str(std::int64_t v);
std::string str(double v);
std::string bracket(const Names& dims);
std::string shape_of(const Tensor& t); // safe even for out-of-range ranks
std::string rank_and_shape(const Tensor& t);
// The shape when t has rank `want`, else its rank and shape.
std::string shape_or_rank(const Tensor& t, int want);

inline std::int64_t ext(const Tensor& t, int d) {
  return t.extent[static_cast<std::size_t>(d)];
}
inline std::int64_t strd(const Tensor& t, int d) {
  return t.stride[static_cast<std::size_t>(d)];
}

// One tensor (tensors.cpp).
void check_not_half_given(const Tensor& t, const std::string& name);
void check_storage(const Tensor& t, const std::string& name, const Names& dims);
void check_addressable(const Tensor& t, const std::string& name); // (check_storage calls it)
// One past the largest element offset, in bytes; nothing when it overflows int64.
std::optional<std::int64_t> byte_span(const Tensor& t);
void check_layout(const Tensor& t, const std::string& name, const Names& dims,
                  const std::string& alternative = {});
void expect_extent(const Tensor& t, const std::string& name, int d, const std::string& symbol,
                   std::int64_t want, const std::string& source);
void expect_dtype(const Tensor& t, const std::string& name, DType want, const std::string& like);
void expect_space(const Tensor& t, const std::string& name, MemorySpace want,
                  const std::string& like);
void check_one_space(const std::vector<NamedTensor>& given);
void check_like(const Tensor& t, const std::string& name, const Tensor& ref,
                const std::string& ref_name, bool same_dtype = true);

// q, k, v, out (tensors.cpp): ranks, storage and dtypes (by d's layout: packed, paged or
// batched); then the sizes they agree on, into d (N, K, H, Hv, and B, T, S unless packed).
void check_main_layouts(const ForwardProblem& p, const Dims& d);
void main_sizes(const ForwardProblem& p, Dims& d);

// Outputs and memory (aliasing.cpp): an output's own strides, then outputs against the other
// outputs and every input (byte ranges, same memory space).
void check_no_self_alias(const Tensor& t, const std::string& name);
void check_disjoint(const std::vector<NamedTensor>& outputs,
                    const std::vector<NamedTensor>& inputs);

// Options (options.cpp).
void check_options(const Options& o);
// The resolved scale and window into d, then the dropout limits on d's sizes.
void resolve_options(const Options& o, Dims& d);

// Extras (extras.cpp).
// Which varlen layout the extras choose (d.packed, d.padded), and that they choose one.
Dims varlen_mode(const Extras& e);
// Packed offsets fix d.B, d.T, d.S; padded lengths must fit T and S.
void check_lengths(const ForwardProblem& p, Dims& d);
void check_extras(const ForwardProblem& p, const Dims& d); // lse, bias, mask, alibi, sinks
void check_dbias(const BackwardProblem& p);
void check_dsinks(const BackwardProblem& p);

// A paged KV cache (paged.cpp): the page table's shape and dtype, and S = max_pages_per_seq *
// page_size (main_sizes calls it); then the page ids the sequences use (host memory only).
std::int64_t paged_key_capacity(const ForwardProblem& p, const Dims& d);
void check_page_ids(const ForwardProblem& p, const Dims& d);

// FP8 (fp8.cpp).
std::vector<NamedTensor> fp8_tensors(const Fp8Scales& f);
std::vector<NamedTensor> fp8_backward_tensors(const Fp8BackwardScales& f);
void check_fp8_scales(const ForwardProblem& p);
void check_fp8_gradient_dtypes(const BackwardProblem& p);
void check_fp8_backward_scales(const BackwardProblem& p);

} // namespace kattn::validation
