// KokkosAttn::as_tensor and make_exec_context: Views and execution spaces in kattn's terms.
#include <doctest/doctest.h>

#include <cstdint>

#include "test_kokkos_helpers.hpp"

using namespace kattn;
using namespace kattn::test;
using KokkosAttn::as_tensor;

TEST_CASE("kokkos/as_tensor: LayoutRight View gives row-major strides, f32, host") {
  View4<float> q("q", 2, 3, 4, 5);
  const Tensor t = as_tensor(q);
  CHECK(t.data == q.data());
  CHECK(t.dtype == DType::f32);
  CHECK(t.rank == 4);
  CHECK(t.shape_string() == "[2, 3, 4, 5]");
  CHECK(t.stride_string() == "[60, 20, 5, 1]");
  CHECK(t.space == MemorySpace::host);
}

TEST_CASE("kokkos/as_tensor: LayoutLeft View gives column-major strides") {
  View4<double, Kokkos::LayoutLeft> q("q", 2, 3, 4, 5);
  const Tensor t = as_tensor(q);
  CHECK(t.dtype == DType::f64);
  CHECK(t.shape_string() == "[2, 3, 4, 5]");
  CHECK(t.stride_string() == "[1, 2, 6, 24]");
}

TEST_CASE("semantics/strides: as_tensor of PyTorch's [B, N, T, H] storage seen as [B, T, N, H]") {
  const std::size_t B = 2, T = 3, N = 4, H = 5;
  View4<float> storage("bnth", B, N, T, H);
  const Kokkos::LayoutStride layout(B, N * T * H, T, H, N, T * H, H, 1);
  const Kokkos::View<float****, Kokkos::LayoutStride, Kokkos::HostSpace> q(storage.data(), layout);
  const Tensor t = as_tensor(q);
  CHECK(t.shape_string() == "[2, 3, 4, 5]");
  CHECK(t.stride_string() == "[60, 5, 15, 1]");
  // A subview keeps its parent's strides and offsets the pointer.
  const auto sub =
      Kokkos::subview(q, Kokkos::ALL, std::pair<int, int>(1, 3), Kokkos::ALL, Kokkos::ALL);
  const Tensor s = as_tensor(sub);
  CHECK(s.shape_string() == "[2, 2, 4, 5]");
  CHECK(s.stride_string() == "[60, 5, 15, 1]");
  CHECK(s.data == static_cast<void*>(storage.data() + 5));
}

TEST_CASE("kokkos/as_tensor: value types map to dtypes; const Views give the same pointer") {
  Kokkos::View<std::int32_t*, Kokkos::HostSpace> lens("lens", 3);
  Kokkos::View<bool****, Kokkos::HostSpace> mask("mask", 1, 1, 2, 2);
  Kokkos::View<std::uint8_t**, Kokkos::HostSpace> mask8("mask8", 2, 2);
  Kokkos::View<const double***, Kokkos::HostSpace> cview =
      Kokkos::View<double***, Kokkos::HostSpace>("c", 1, 2, 3);
  CHECK(as_tensor(lens).dtype == DType::i32);
  CHECK(as_tensor(lens).rank == 1);
  CHECK(as_tensor(mask).dtype == DType::boolean);
  CHECK(as_tensor(mask8).dtype == DType::boolean);
  const Tensor c = as_tensor(cview);
  CHECK(c.dtype == DType::f64);
  CHECK(c.data == static_cast<const void*>(cview.data()));
#if !KOKKOS_HALF_T_IS_FLOAT
  Kokkos::View<Kokkos::Experimental::half_t*, Kokkos::HostSpace> h("h", 2);
  CHECK(as_tensor(h).dtype == DType::f16);
#endif
}

TEST_CASE("kokkos/as_tensor: reinterpreting 16-bit storage as f16/bf16, and size mismatches") {
  Kokkos::View<std::uint16_t****, Kokkos::HostSpace> bits("bits", 1, 2, 3, 4);
  CHECK(as_tensor(bits, DType::bf16).dtype == DType::bf16);
  CHECK(as_tensor(bits, DType::f16).stride_string() == "[24, 12, 4, 1]");
  CHECK_THROWS_AS(as_tensor(bits, DType::f32), InvalidArgument);
  try {
    (void)as_tensor(bits, DType::f32);
  } catch (const InvalidArgument& e) {
    CHECK(std::string(e.what()).find("cannot reinterpret 2-byte elements as f32") !=
          std::string::npos);
  }
}

TEST_CASE("kokkos/exec_context: host execution spaces name themselves and point at the instance") {
  const Kokkos::DefaultHostExecutionSpace host;
  const ExecContext x = KokkosAttn::make_exec_context(host);
  CHECK(x.device == Device::cpu);
  CHECK(x.stream == nullptr);
  CHECK(x.kokkos_space == Kokkos::DefaultHostExecutionSpace::name());
  CHECK(x.kokkos_instance == static_cast<const void*>(&host));
#ifdef KOKKOS_ENABLE_OPENMP
  const Kokkos::OpenMP omp;
  CHECK(KokkosAttn::make_exec_context(omp).kokkos_space == "OpenMP");
#endif
#ifdef KOKKOS_ENABLE_SERIAL
  const Kokkos::Serial serial;
  CHECK(KokkosAttn::make_exec_context(serial).kokkos_space == "Serial");
#endif
}
