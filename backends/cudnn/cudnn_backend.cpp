// The cuDNN backend's registry entry: what it serves (checked without touching data, then
// cuDNN's own check_support, cached per problem key) and the forward.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "cudnn/cudnn.hpp"
#include "cudnn/cudnn_graph.hpp"
#include "cudnn/cudnn_spec.hpp"
#include "cudnn/cudnn_status.hpp"
#include "kokkosattn/dispatch.hpp"
#include "kokkosattn/validate.hpp"

namespace kattn::cudnn {
namespace {

bool aligned16(const Tensor& t) {
  return reinterpret_cast<std::uintptr_t>(t.data) % 16 == 0;
}

// Rows that see no key at all: cuDNN does not promise our "out 0, LSE -inf" for them (and
// refuses most such graphs), so we refuse them here. The visible band [i+d-L, i+d+R] moves
// right by one per row and is never empty, so only the first row (upper end < 0) and the last
// row (lower end > S-1) can miss [0, S-1].
bool has_fully_masked_rows(const ForwardProblem& p, const Dims& d) {
  const std::int64_t diag = p.options.alignment == Alignment::bottom_right ? d.S - d.T : 0;
  if (d.window_right >= 0 && diag + d.window_right < 0)
    return true;
  if (d.window_left >= 0 && d.T - 1 + diag - d.window_left > d.S - 1)
    return true;
  return false;
}

Support host_checks(const ForwardProblem& p, const Dims& d, const ExecContext& x) {
  if (x.device != Device::cuda)
    return Support::no("needs a CUDA execution context (ExecContext::device == cuda)");
  // Layout first: packed tensors are rank 3, so the rank-4 checks below would misreport them.
  if (d.packed)
    return Support::no("packed varlen (cu_seqlens) not implemented in the cudnn backend yet");
  if (d.padded)
    return Support::no("padded lengths (seqlens_q/k) not implemented in the cudnn backend yet");
  const std::pair<const char*, const Tensor*> main[] = {
      {"q", &p.q}, {"k", &p.k}, {"v", &p.v}, {"out", &p.out}};
  for (const auto& [name, t] : main) {
    if (t->space != MemorySpace::cuda_device)
      return Support::no(std::string(name) + ": expected cuda_device memory, got " +
                         std::string(to_string(t->space)));
    if (t->dtype != DType::bf16 && t->dtype != DType::f16)
      return Support::no(std::string(name) + ": expected bf16 or f16, got " +
                         std::string(to_string(t->dtype)));
    if (t->stride[3] != 1)
      return Support::no(std::string(name) + ": expected head-dim stride 1, got " +
                         std::to_string(t->stride[3]));
    if (!aligned16(*t))
      return Support::no(std::string(name) + ": expected a 16-byte aligned pointer");
  }
  if (d.H > 256 || d.H % 8 != 0 || d.Hv > 256 || d.Hv % 8 != 0)
    return Support::no("head dims: expected H and Hv multiples of 8 and <= 256, got H=" +
                       std::to_string(d.H) + " Hv=" + std::to_string(d.Hv));
  if (p.options.softcap > 0.0)
    return Support::no("softcap not implemented in the cudnn backend");
  if (p.options.dropout_p > 0.0)
    return Support::no("dropout not implemented in the cudnn backend (cuDNN's RNG is not our "
                       "Philox stream)");
  if (p.extras.mask.defined())
    return Support::no("boolean mask not supported by the cudnn backend");
  if (p.extras.alibi_slopes.defined())
    return Support::no("ALiBi slopes not supported (cuDNN's ALiBi uses its own fixed slopes)");
  const Tensor& bias = p.extras.bias;
  if (bias.defined()) {
    if (bias.space != MemorySpace::cuda_device)
      return Support::no("bias: expected cuda_device memory");
    if (bias.dtype != p.q.dtype)
      return Support::no("bias: expected the dtype of q (" + std::string(to_string(p.q.dtype)) +
                         "), got " + std::string(to_string(bias.dtype)));
    if (bias.stride[3] != 1 || !aligned16(bias))
      return Support::no("bias: expected key stride 1 and a 16-byte aligned pointer");
  }
  const Tensor& lse = p.extras.lse;
  if (lse.defined() && (lse.space != MemorySpace::cuda_device || !aligned16(lse)))
    return Support::no("lse: expected 16-byte aligned cuda_device memory");
  if (has_fully_masked_rows(p, d))
    return Support::no("the mask leaves query rows with no visible key (e.g. T > S with "
                       "bottom_right causal); cuDNN does not give those rows out 0 / LSE -inf");
  return Support::yes();
}

// Elements from a tensor's first to its last element, plus one.
std::int64_t span(const Tensor& t) {
  std::int64_t last = 0;
  for (int i = 0; i < t.rank; ++i)
    last += (t.extent[static_cast<std::size_t>(i)] - 1) * t.stride[static_cast<std::size_t>(i)];
  return last + 1;
}

// The backward additionally needs the forward's LSE (cuDNN's Stats input), no dbias, and tensors
// spanning fewer than 2^31 elements: beyond that cuDNN 9.19's backward gave wrong dq and dk
// (dv right) on the H200 (conformance case regression/index_past_2^31_elements_bwd).
Support backward_checks(const BackwardProblem& p) {
  const std::pair<const char*, const Tensor*> all[] = {
      {"q", &p.forward.q}, {"k", &p.forward.k}, {"v", &p.forward.v}, {"out", &p.forward.out},
      {"dout", &p.dout},   {"dq", &p.dq},       {"dk", &p.dk},       {"dv", &p.dv}};
  for (const auto& [name, t] : all)
    if (span(*t) >= (std::int64_t{1} << 31))
      return Support::no(std::string(name) + ": spans " + std::to_string(span(*t)) +
                         " elements; the cudnn backward needs fewer than 2^31 (cuDNN 9.19 gave "
                         "wrong dq/dk beyond that)");
  const std::pair<const char*, const Tensor*> grads[] = {
      {"dout", &p.dout}, {"dq", &p.dq}, {"dk", &p.dk}, {"dv", &p.dv}};
  for (const auto& [name, t] : grads) {
    if (t->space != MemorySpace::cuda_device)
      return Support::no(std::string(name) + ": expected cuda_device memory, got " +
                         std::string(to_string(t->space)));
    if (t->stride[3] != 1 || !aligned16(*t))
      return Support::no(std::string(name) +
                         ": expected head-dim stride 1 and a 16-byte aligned pointer");
  }
  if (!p.forward.extras.lse.defined())
    return Support::no("backward needs extras.lse (the forward's LSE, cuDNN's Stats input)");
  if (p.dbias.defined())
    return Support::no("dbias not implemented in the cudnn backend yet");
  return Support::yes();
}

int current_device() {
  int device = 0;
  detail::check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  return device;
}

template <class Problem>
detail::GraphSpec spec_for(const Problem& p, const Dims& d, const ExecContext& x) {
  return detail::make_spec(p, d, current_device(), x.stream);
}

template <class Problem>
Support ask_cudnn(const Problem& p, const Dims& d, const ExecContext& x) {
  try {
    return detail::check_graph(spec_for(p, d, x));
  } catch (const Error& e) { // no GPU, no driver, cudnnCreate failed...
    return Support::no(e.what());
  }
}

class CudnnBackend final : public BackendImpl {
public:
  Backend id() const override { return Backend::cudnn; }
  std::string description() const override { return versions(); }

  Support supports(const ForwardProblem& p, const Dims& d, const ExecContext& x) const override {
    if (Support s = host_checks(p, d, x); !s.ok)
      return s;
    return ask_cudnn(p, d, x);
  }
  Support supports(const BackwardProblem& p, const Dims& d, const ExecContext& x) const override {
    if (Support s = host_checks(p.forward, d, x); !s.ok)
      return s;
    if (Support s = backward_checks(p); !s.ok)
      return s;
    return ask_cudnn(p, d, x);
  }
  void forward(const ForwardProblem& p, const Dims& d, const ExecContext& x) const override {
    detail::execute_graph(spec_for(p, d, x), p);
  }
  void backward(const BackwardProblem& p, const Dims& d, const ExecContext& x) const override {
    detail::execute_graph(spec_for(p, d, x), p);
  }
};

} // namespace

std::unique_ptr<BackendImpl> make_cudnn_backend() {
  return std::make_unique<CudnnBackend>();
}

namespace {

// A registry of its own keeps the entries framework-free (the default one has Kokkos backends).
const Registry& only_cudnn() {
  static const Registry r = [] {
    Registry reg;
    reg.add(make_cudnn_backend());
    return reg;
  }();
  return r;
}

ExecContext cuda_context(CUstream_st* stream) {
  ExecContext x;
  x.device = Device::cuda;
  x.stream = stream;
  return x;
}

} // namespace

void forward(const ForwardProblem& p, CUstream_st* stream) {
  ForwardProblem forced = p;
  forced.options.backend = Backend::cudnn;
  run_forward(only_cudnn(), forced, cuda_context(stream));
}

void backward(const BackwardProblem& p, CUstream_st* stream) {
  BackwardProblem forced = p;
  forced.forward.options.backend = Backend::cudnn;
  run_backward(only_cudnn(), forced, cuda_context(stream));
}

std::string versions() {
  try {
    return detail::library_versions();
  } catch (const std::exception& e) {
    return std::string("cuDNN unavailable: ") + e.what();
  }
}

std::size_t cached_graphs() {
  return detail::graph_cache_size();
}
std::size_t graphs_built() {
  return detail::graphs_built();
}

} // namespace kattn::cudnn
