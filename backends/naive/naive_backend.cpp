// The naive backend as a registry entry: what it supports, and which Kokkos execution space
// instantiation runs a problem.
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>

#include "kokkos_common/kokkos_target.hpp"
#include "kokkosattn/builtin_backends.hpp"
#include "kokkosattn/detail/checked_size.hpp"
#include "kokkosattn/detail/float_scale.hpp"
#include "kokkosattn/errors.hpp"
#include "naive/naive_backend.hpp"
#include "naive/naive_forward.hpp"

namespace kattn::naive {
namespace {

namespace kc = kattn::kokkos_common;

// Which library runs the two products, for description() (and so explain()).
std::string products_description(Products products) {
  if (products == Products::loops)
    return have_kokkos_kernels ? "products as hand-written loops (forced)"
                               : "products as hand-written loops (built without Kokkos Kernels)";
  return "products as Kokkos Kernels GEMMs (" + kokkos_kernels_tpls() +
         "; on Kokkos::Cuda with cuBLAS one batch per product, straight on fp32/fp64 tensors "
         "whose head dim has unit stride and on head-major copies otherwise; else "
         "KokkosBlas::gemm per (batch, KV head))";
}

class NaiveBackend final : public BackendImpl {
public:
  explicit NaiveBackend(Products products) : products_(products) {}

  Backend id() const override { return Backend::naive; }

  std::string description() const override {
    return kc::kokkos_description() + "; materialises [B, N, T, S] scores; " +
           products_description(products_);
  }

  Support supports(const ForwardProblem& p, const Dims& d, const ExecContext& x) const override {
    if (d.packed)
      return Support::no("naive: packed varlen (cu_seqlens) is not implemented; use padded "
                         "batches (seqlens_q/seqlens_k), reference or portable");
    if (p.options.dropout_p > 0.0)
      return Support::no("naive: dropout is not implemented; use reference or portable");
    if (p.extras.sinks.defined())
      return Support::no("naive: attention sinks (extras.sinks) are not implemented; use "
                         "reference");
    if (p.q.dtype != DType::f64)
      if (std::string why = float_scale_limit(d, "naive"); !why.empty())
        return Support::no(why);
    // The score matrix, in the widest accumulator (f64): a wrapped size would allocate too little.
    if (!checked_product({d.B, d.N, d.T, d.S, std::int64_t{sizeof(double)}}))
      return Support::no("naive: the [B, N, T, S] = [" + std::to_string(d.B) + ", " +
                         std::to_string(d.N) + ", " + std::to_string(d.T) + ", " +
                         std::to_string(d.S) + "] score matrix exceeds 2^63 bytes; use portable");
    return kc::check_runnable("naive", p.q.dtype, kc::named_tensors(p), x);
  }

  Support supports(const BackwardProblem&, const Dims&, const ExecContext&) const override {
    return Support::no("naive: backward is not implemented; use reference or portable");
  }

  void forward(const ForwardProblem& p, const Dims& d, const ExecContext& x) const override {
    // Direct callers skip dispatch's support check; nothing is written unless it passes.
    const Support s = supports(p, d, x);
    if (!s.ok)
      throw Unsupported(s.reason);
    kc::on_target("naive", x, [&](const auto& exec) { forward_on(exec, p, d, products_); });
  }

  void backward(const BackwardProblem&, const Dims&, const ExecContext&) const override {
    throw Unsupported("naive: backward is not implemented; use reference or portable");
  }

private:
  Products products_;
};

} // namespace

std::unique_ptr<BackendImpl> make_naive_backend(Products products) {
  if (products == Products::gemm && !have_kokkos_kernels)
    throw Unsupported("naive: built without Kokkos Kernels (KokkosAttn_ENABLE_KOKKOSKERNELS=OFF)");
  return std::make_unique<NaiveBackend>(products);
}

std::unique_ptr<BackendImpl> make_naive_backend() {
  return make_naive_backend(have_kokkos_kernels ? Products::gemm : Products::loops);
}

} // namespace kattn::naive
