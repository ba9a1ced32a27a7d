// naive's two products straight on the caller's fp32/fp64 tensors, on Kokkos::Cuda with Kokkos
// Kernels' cuBLAS: one cublas{S,D}gemmBatched per product over every (batch, query head), its
// operand pointers written on the device by one small kernel. The packed path
// (naive_gemm.hpp) copies q, k and v head-major before the products and out back after: four
// kernels that moved ~150 us of the 2 ms forward at the codelab's T = 2048 on the H100, and
// half of the launches at small T. A head's rows are strided in [B, L, heads, D] storage, which
// a GEMM takes as its leading dimension; the batches are not one stride apart (b and n), hence
// pointer arrays rather than a strided batch. GQA reads KV head n / group.
//
// Served when the storage is the accumulation type, every head dim has unit stride, the
// leading dimensions fit cuBLAS' int, and no key lengths are given (the packed path zeroes v
// past a sequence's keys so that padding never meets a zero weight; the scores of those keys
// are masked by the softmax whatever they hold).
#pragma once

#include <Kokkos_Core.hpp>

#include <climits>
#include <cstddef>
#include <type_traits>

#include "kokkos_common/light_launch.hpp"
#include "naive/naive_batched_gemm.hpp"
#include "naive/naive_params.hpp"
#include "naive/naive_scratch.hpp"

namespace kattn::naive::detail {

#if KATTN_NAIVE_CUBLAS_BATCH

// Row-major C_i = alpha * A_i op(B_i) for pointer arrays (device memory), as cublas_batched.
template <class Acc>
void cublas_pointer_batched(const Kokkos::Cuda& exec, SecondOp op, Index batch, Index m, Index n,
                            Index k, Acc alpha, const Acc* const* a, Index lda, const Acc* const* b,
                            Index ldb, Acc* const* c, Index ldc) {
  cublasHandle_t handle = KokkosBlas::Impl::CudaBlasSingleton::singleton().handle;
  check_cublas(cublasSetStream(handle, exec.cuda_stream()), "cublasSetStream");
  const cublasOperation_t op_b = op == SecondOp::transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  const Acc beta = 0;
  const auto i = [](Index x) { return static_cast<int>(x); };
  if constexpr (std::is_same_v<Acc, float>)
    check_cublas(cublasSgemmBatched(handle, op_b, CUBLAS_OP_N, i(n), i(m), i(k), &alpha, b, i(ldb),
                                    a, i(lda), &beta, c, i(ldc), i(batch)),
                 "cublasSgemmBatched");
  else
    check_cublas(cublasDgemmBatched(handle, op_b, CUBLAS_OP_N, i(n), i(m), i(k), &alpha, b, i(ldb),
                                    a, i(lda), &beta, c, i(ldc), i(batch)),
                 "cublasDgemmBatched");
}

// A head's rows of x [B, L, heads, D] as a GEMM operand: its leading dimension (the row
// stride; any value >= D for a single row), or 0 when a GEMM cannot take it.
template <class V>
Index operand_ld(const V& x) {
  const auto L = static_cast<Index>(x.extent(1)), D = static_cast<Index>(x.extent(3));
  if (D > 1 && x.stride(3) != 1)
    return 0;
  const Index ld = L == 1 ? D : static_cast<Index>(x.stride(1));
  return ld >= D && ld <= INT_MAX ? ld : 0;
}

template <class Mem, class Acc>
bool direct_products_serve(const Params& a, const Strided4<const Acc, Mem>& q,
                           const Strided4<const Acc, Mem>& k, const Strided4<const Acc, Mem>& v,
                           const Strided4<Acc, Mem>& out) {
  const Index most = INT_MAX;
  return !a.lens_k.data && a.B * a.N > 0 && a.B * a.N <= most && a.T > 0 && a.T <= most &&
         a.S > 0 && a.S <= most && a.H > 0 && a.H <= most && a.Hv > 0 && a.Hv <= most &&
         operand_ld(q) && operand_ld(k) && operand_ld(v) && operand_ld(out);
}

// The operands of both products for each (b, n), e = b * N + n: q, k, v, out and the scores,
// GEMM 1's output and (as P after the softmax) GEMM 2's input.
template <class Acc>
struct DirectOperands {
  const Acc** q;
  const Acc** k;
  Acc** s;
  const Acc** v;
  Acc** o;
};

inline std::size_t direct_operand_bytes(const Params& a) {
  return 5 * aligned_bytes(static_cast<std::size_t>(a.B * a.N), sizeof(void*));
}

template <class Acc>
DirectOperands<Acc> direct_operands_at(unsigned char* base, const Params& a) {
  const std::size_t one = aligned_bytes(static_cast<std::size_t>(a.B * a.N), sizeof(void*));
  const auto at = [&](int i) { return base + static_cast<std::size_t>(i) * one; };
  return {reinterpret_cast<const Acc**>(at(0)), reinterpret_cast<const Acc**>(at(1)),
          reinterpret_cast<Acc**>(at(2)), reinterpret_cast<const Acc**>(at(3)),
          reinterpret_cast<Acc**>(at(4))};
}

// scores = scale * q.k as [B, N, T, S]; writes the operand pointers of both products first.
template <class Mem, class Acc>
void direct_scores(const Kokkos::Cuda& exec, const Strided4<const Acc, Mem>& q,
                   const Strided4<const Acc, Mem>& k, const Strided4<const Acc, Mem>& v,
                   const Strided4<Acc, Mem>& out, const Params& a, const DirectOperands<Acc>& ops,
                   Acc* scores) {
  const Index N = a.N, group = a.group, TS = a.T * a.S;
  Kokkos::parallel_for(
      "KokkosAttn::naive::operands",
      kokkos_common::light_launch(
          Kokkos::RangePolicy<Kokkos::Cuda, Kokkos::IndexType<Index>>(exec, 0, a.B * N)),
      KOKKOS_LAMBDA(const Index e) {
        const Index b = e / N, n = e % N, kh = n / group;
        ops.q[e] = &q(b, 0, n, 0);
        ops.k[e] = &k(b, 0, kh, 0);
        ops.s[e] = scores + e * TS;
        ops.v[e] = &v(b, 0, kh, 0);
        ops.o[e] = &out(b, 0, n, 0);
      });
  cublas_pointer_batched(exec, SecondOp::transposed, a.B * N, a.T, a.S, a.H,
                         static_cast<Acc>(a.scale), ops.q, operand_ld(q), ops.k, operand_ld(k),
                         ops.s, a.S);
}

// out = P v, P the probabilities left in the scores by the softmax.
template <class Mem, class Acc>
void direct_out(const Kokkos::Cuda& exec, const Strided4<const Acc, Mem>& v,
                const Strided4<Acc, Mem>& out, const Params& a, const DirectOperands<Acc>& ops) {
  cublas_pointer_batched(exec, SecondOp::plain, a.B * a.N, a.T, a.Hv, a.S, Acc(1), ops.s, a.S,
                         ops.v, operand_ld(v), ops.o, operand_ld(out));
}

#endif

} // namespace kattn::naive::detail
