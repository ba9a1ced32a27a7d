// Strided batches of row-major GEMMs for the naive forward's two products:
//   C_i = alpha * A_i * op(B_i),  A_i m x k, C_i m x n, i < batch, every matrix dense row-major,
// op(B) = B^T with B_i stored n x k (scores = Q K^T), or B with B_i stored k x n (out = P V).
// On Kokkos::Cuda with Kokkos Kernels' cuBLAS TPL the whole batch is one
// cublas{S,D}gemmStridedBatched on exec's stream, with Kokkos Kernels' own handle: one launch
// instead of B * KV-heads, which is what made the per-matrix KokkosBlas::gemm 7-60x slower than
// JAX at the codelab's shapes on the H200. Kokkos Kernels 4.7's KokkosBatched::BatchedGemm has no
// cuBLAS path, hence the direct call. Elsewhere (host TPL BLAS, HIP, sizes past int) each matrix
// is a KokkosBlas::gemm on exec.
#pragma once

#include <KokkosBlas3_gemm.hpp>
#include <Kokkos_Core.hpp>

#include <climits>
#include <string>
#include <type_traits>

#include "kokkos_common/light_launch.hpp"
#include "kokkosattn/errors.hpp"
#include "naive/naive_params.hpp"

#if defined(KOKKOS_ENABLE_CUDA) && defined(KOKKOSKERNELS_ENABLE_TPL_CUBLAS)
#include <KokkosBlas_tpl_spec.hpp>
#include <cublas_v2.h>
#define KATTN_NAIVE_CUBLAS_BATCH 1
#else
#define KATTN_NAIVE_CUBLAS_BATCH 0
#endif

namespace kattn::naive::detail {

enum class SecondOp { transposed, plain };

template <class Acc, class Mem>
using Matrix =
    Kokkos::View<Acc**, Kokkos::LayoutRight, Mem, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

#if KATTN_NAIVE_CUBLAS_BATCH
inline void check_cublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw BackendFailure(std::string("naive: ") + what +
                         " failed: " + cublasGetStatusString(status));
}

// Row-major C = A op(B) is column-major C^T = op(B)^T A^T: cuBLAS gets the operands swapped.
template <class Acc>
void cublas_batched(const Kokkos::Cuda& exec, SecondOp op, Index batch, Index m, Index n, Index k,
                    Acc alpha, const Acc* a, Index sa, const Acc* b, Index sb, Acc* c, Index sc) {
  cublasHandle_t handle = KokkosBlas::Impl::CudaBlasSingleton::singleton().handle;
  check_cublas(cublasSetStream(handle, exec.cuda_stream()), "cublasSetStream");
  const cublasOperation_t op_b = op == SecondOp::transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int ldb = static_cast<int>(op == SecondOp::transposed ? k : n);
  const Acc beta = 0;
  if constexpr (std::is_same_v<Acc, float>)
    check_cublas(cublasSgemmStridedBatched(handle, op_b, CUBLAS_OP_N, static_cast<int>(n),
                                           static_cast<int>(m), static_cast<int>(k), &alpha, b, ldb,
                                           sb, a, static_cast<int>(k), sa, &beta, c,
                                           static_cast<int>(n), sc, static_cast<int>(batch)),
                 "cublasSgemmStridedBatched");
  else
    check_cublas(cublasDgemmStridedBatched(handle, op_b, CUBLAS_OP_N, static_cast<int>(n),
                                           static_cast<int>(m), static_cast<int>(k), &alpha, b, ldb,
                                           sb, a, static_cast<int>(k), sa, &beta, c,
                                           static_cast<int>(n), sc, static_cast<int>(batch)),
                 "cublasDgemmStridedBatched");
}
#endif

template <class ExecSpace, class Acc>
void batched_gemm(const ExecSpace& exec, SecondOp op, Index batch, Index m, Index n, Index k,
                  Acc alpha, const Acc* a, Index sa, const Acc* b, Index sb, Acc* c, Index sc) {
  if (batch == 0 || m == 0 || n == 0)
    return;
  using Mem = typename ExecSpace::memory_space;
  if (k == 0) { // an empty sum (no keys): C = 0, which not every BLAS writes when k = 0
    const Index mn = m * n;
    Kokkos::parallel_for(
        "KokkosAttn::naive::gemm_k0",
        kokkos_common::light_launch(
            Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>(exec, 0, batch * mn)),
        KOKKOS_LAMBDA(const Index e) { c[(e / mn) * sc + e % mn] = Acc(0); });
    return;
  }
#if KATTN_NAIVE_CUBLAS_BATCH
  if constexpr (std::is_same_v<ExecSpace, Kokkos::Cuda>) {
    if (m <= INT_MAX && n <= INT_MAX && k <= INT_MAX && batch <= INT_MAX)
      return cublas_batched(exec, op, batch, m, n, k, alpha, a, sa, b, sb, c, sc);
  }
#endif
  const bool t = op == SecondOp::transposed;
  for (Index i = 0; i < batch; ++i) {
    const Matrix<const Acc, Mem> ai(a + i * sa, m, k);
    const Matrix<const Acc, Mem> bi(b + i * sb, t ? n : k, t ? k : n);
    const Matrix<Acc, Mem> ci(c + i * sc, m, n);
    KokkosBlas::gemm(exec, "N", t ? "T" : "N", alpha, ai, bi, Acc(0), ci);
  }
}

} // namespace kattn::naive::detail
