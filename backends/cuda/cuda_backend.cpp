// The cuda backend's registry entry: host-side support checks (nothing touches tensor data),
// then the kernel family's own check (choose_kernel, whose kernel name supports() reports), and
// the forward.
#include "cuda/cuda_backend.hpp"

#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "kattn_cuda/flash_fwd.hpp"
#include "kokkosattn/dispatch.hpp"
#include "kokkosattn/errors.hpp"
#include "kokkosattn/validate.hpp"

namespace kattn::cuda {
namespace {

using cuda_kernels::ElemType;
using cuda_kernels::FlashFwdParams;

std::string str(std::string_view s) {
  return std::string(s);
}

Support host_checks(const ForwardProblem& p, const Dims& d, const ExecContext& x) {
  if (x.device != Device::cuda)
    return Support::no("needs a CUDA execution context (ExecContext::device == cuda)");
  const std::pair<const char*, const Tensor*> main[] = {
      {"q", &p.q}, {"k", &p.k}, {"v", &p.v}, {"out", &p.out}};
  for (const auto& [name, t] : main) {
    if (t->space != MemorySpace::cuda_device)
      return Support::no(std::string(name) + ": expected cuda_device memory, got " +
                         str(to_string(t->space)));
    if (t->dtype != DType::bf16 && t->dtype != DType::f16)
      return Support::no(std::string(name) + ": expected bf16 or f16, got " +
                         str(to_string(t->dtype)));
    if (t->stride[static_cast<std::size_t>(t->rank - 1)] != 1)
      return Support::no(std::string(name) + ": expected head-dim stride 1, got " +
                         std::to_string(t->stride[static_cast<std::size_t>(t->rank - 1)]));
  }
  const Extras& e = p.extras;
  const std::pair<const char*, const Tensor*> small[] = {{"lse", &e.lse},
                                                         {"seqlens_q", &e.seqlens_q},
                                                         {"seqlens_k", &e.seqlens_k},
                                                         {"cu_seqlens_q", &e.cu_seqlens_q},
                                                         {"cu_seqlens_k", &e.cu_seqlens_k}};
  for (const auto& [name, t] : small) {
    if (!t->defined())
      continue;
    if (t->space != MemorySpace::cuda_device)
      return Support::no(std::string(name) + ": expected cuda_device memory, got " +
                         str(to_string(t->space)));
    if (t->rank == 1 && t->stride[0] != 1)
      return Support::no(std::string(name) + ": expected a contiguous tensor, got stride " +
                         std::to_string(t->stride[0]));
  }
  if (e.bias.defined())
    return Support::no("additive bias not implemented in the cuda backend");
  if (e.mask.defined())
    return Support::no("boolean mask not implemented in the cuda backend");
  if (e.alibi_slopes.defined())
    return Support::no("ALiBi not implemented in the cuda backend");
  if (p.options.dropout_p > 0.0)
    return Support::no("dropout not implemented in the cuda backend");
  constexpr std::int64_t int_max = std::numeric_limits<int>::max();
  if (d.T > int_max || d.S > int_max || d.B > int_max || d.N > int_max)
    return Support::no("B, T, S and N must fit in 32 bits");
  return Support::yes();
}

class CudaBackend final : public BackendImpl {
public:
  Backend id() const override { return Backend::cuda; }
  std::string description() const override {
    return "hand-written flash-attention forward: " + cuda_kernels::built_families();
  }

  Support supports(const ForwardProblem& p, const Dims& d, const ExecContext& x) const override {
    if (Support s = host_checks(p, d, x); !s.ok)
      return s;
    const cuda_kernels::KernelChoice c = cuda_kernels::choose_kernel(make_params(p, d));
    if (c.family == cuda_kernels::KernelFamily::none)
      return Support::no(c.reason);
    return Support::yes(c.name);
  }
  Support supports(const BackwardProblem&, const Dims&, const ExecContext&) const override {
    return Support::no("backward not implemented in the cuda backend (forward only)");
  }
  void forward(const ForwardProblem& p, const Dims& d, const ExecContext& x) const override {
    cuda_kernels::flash_fwd(make_params(p, d), static_cast<CUstream_st*>(x.stream));
  }
  void backward(const BackwardProblem&, const Dims&, const ExecContext&) const override {
    throw Unsupported("backward not implemented in the cuda backend (forward only)");
  }
};

const Registry& only_cuda() {
  static const Registry r = [] {
    Registry reg;
    reg.add(make_cuda_backend());
    return reg;
  }();
  return r;
}

} // namespace

FlashFwdParams make_params(const ForwardProblem& p, const Dims& d) {
  FlashFwdParams f;
  f.dtype = p.q.dtype == DType::f16 ? ElemType::f16 : ElemType::bf16;
  f.q = p.q.data;
  f.k = p.k.data;
  f.v = p.v.data;
  f.out = p.out.data;
  // Batched tensors are [B, L, heads, dim]; packed ones [L, heads, dim] (no batch stride).
  auto strides = [&](const Tensor& t, std::int64_t& b, std::int64_t& r, std::int64_t& h) {
    if (d.packed) {
      b = 0, r = t.stride[0], h = t.stride[1];
    } else {
      b = t.stride[0], r = t.stride[1], h = t.stride[2];
    }
  };
  strides(p.q, f.q_batch_stride, f.q_row_stride, f.q_head_stride);
  strides(p.k, f.k_batch_stride, f.k_row_stride, f.k_head_stride);
  strides(p.v, f.v_batch_stride, f.v_row_stride, f.v_head_stride);
  strides(p.out, f.o_batch_stride, f.o_row_stride, f.o_head_stride);
  const Tensor& lse = p.extras.lse;
  if (lse.defined()) {
    f.lse = static_cast<float*>(lse.data);
    if (d.packed) { // [N, total]
      f.lse_batch_stride = 0, f.lse_head_stride = lse.stride[0], f.lse_row_stride = lse.stride[1];
    } else { // [B, N, T]
      f.lse_batch_stride = lse.stride[0], f.lse_head_stride = lse.stride[1];
      f.lse_row_stride = lse.stride[2];
    }
  }
  f.B = static_cast<int>(d.B);
  f.T = static_cast<int>(d.T);
  f.S = static_cast<int>(d.S);
  f.N = static_cast<int>(d.N);
  f.K = static_cast<int>(d.K);
  f.H = static_cast<int>(d.H);
  f.Hv = static_cast<int>(d.Hv);
  const Extras& e = p.extras;
  if (d.packed) {
    f.cu_seqlens_q = static_cast<const int*>(e.cu_seqlens_q.data);
    f.cu_seqlens_k = static_cast<const int*>(e.cu_seqlens_k.data);
    f.total_q = p.q.extent[0];
    f.total_k = p.k.extent[0];
  }
  if (e.seqlens_q.defined())
    f.seqlens_q = static_cast<const int*>(e.seqlens_q.data);
  if (e.seqlens_k.defined())
    f.seqlens_k = static_cast<const int*>(e.seqlens_k.data);
  f.scale = static_cast<float>(d.scale);
  f.softcap = static_cast<float>(p.options.softcap);
  // Windows wider than any sequence are unbounded; keeps the kernel's int arithmetic safe.
  auto clamp = [](std::int64_t w) {
    return w < 0 || w > std::numeric_limits<int>::max() / 4 ? -1 : static_cast<int>(w);
  };
  f.window_left = clamp(d.window_left);
  f.window_right = clamp(d.window_right);
  f.bottom_right = p.options.alignment == Alignment::bottom_right;
  return f;
}

std::unique_ptr<BackendImpl> make_cuda_backend() {
  return std::make_unique<CudaBackend>();
}

void forward(const ForwardProblem& p, CUstream_st* stream) {
  ForwardProblem forced = p;
  forced.options.backend = Backend::cuda;
  ExecContext x;
  x.device = Device::cuda;
  x.stream = stream;
  run_forward(only_cuda(), forced, x);
}

std::string kernel_for(const ForwardProblem& p, std::string* why) {
  const Dims d = validate(p);
  const cuda_kernels::KernelChoice c = cuda_kernels::choose_kernel(make_params(p, d));
  if (why)
    *why = c.reason;
  return c.family == cuda_kernels::KernelFamily::none ? std::string() : c.name;
}

} // namespace kattn::cuda
