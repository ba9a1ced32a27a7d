// The portable backend on Kokkos::Cuda through device pointers: the GPU kernel of
// backends/portable/portable_device_forward_kernel.hpp (value head dims up to 128) and the
// team-scratch tiles beyond, against the fp64 reference on the same rounded inputs (tolerances:
// gpu/device_check.hpp).
#include <doctest/doctest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <string>
#include <utility>

#include "common/dispatch_fixture.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/device_check.hpp"
#include "gpu/device_forward.hpp"
#include "unit/test_portable_helpers.hpp"

using namespace kattn;
using namespace kattn::test;

namespace {

std::string check_on_device(const Spec& spec) {
  return check_on_device(portable_backend(), spec);
}

constexpr DType all_dtypes[] = {DType::f64, DType::f32, DType::f16, DType::bf16};

} // namespace

TEST_CASE("portable/device: every dtype, value head dims 64, 128 and past the register tiles") {
  for (DType t : all_dtypes) {
    INFO(to_string(t));
    // 130 rows and 200 keys: partial row blocks and key tiles; GQA 4/2.
    CHECK(check_on_device(spec_of(2, 130, 200, 4, 2, 64, 64, t)) == "portable_device_fwd_hv64");
    CHECK(check_on_device(spec_of(1, 70, 129, 2, 1, 128, 128, t)) == "portable_device_fwd_hv128");
    CHECK(check_on_device(spec_of(1, 33, 65, 2, 2, 96, 40, t)) == "portable_device_fwd_hv64");
    CHECK(check_on_device(spec_of(1, 40, 70, 2, 1, 72, 100, t)) == "portable_device_fwd_hv128");
    CHECK(check_on_device(spec_of(1, 40, 50, 2, 1, 32, 160, t)) == "portable_tiles_fwd");
  }
}

// The staging reads whole quads of a row only when the head dim has unit stride, the token
// stride is a multiple of 4 and the first row is aligned; else element by element. Both paths,
// with head dims off the quads (H % 4 != 0, a partial last chunk, Hv < the register tile).
TEST_CASE("portable/device: head dims off the quads, odd token strides, sequence-major storage") {
  for (DType t : all_dtypes) {
    INFO(to_string(t));
    // H = 33, Hv = 63: odd token strides, element path for q, k and v.
    CHECK(check_on_device(spec_of(1, 70, 90, 2, 1, 33, 63, t)) == "portable_device_fwd_hv64");
    // H = 36, Hv = 100 (one head): quads with a partial second chunk of the head dim.
    CHECK(check_on_device(spec_of(1, 70, 90, 1, 1, 36, 100, t)) == "portable_device_fwd_hv128");
    // H = 68, Hv = 127, GQA: quads for q and k, elements for v.
    CHECK(check_on_device(spec_of(1, 50, 77, 2, 1, 68, 127, t)) == "portable_device_fwd_hv128");
    Spec s = spec_of(1, 45, 67, 2, 1, 64, 64, t); // token dimension contiguous: elements
    s.seq_major = true;
    s.opt.causal = true;
    CHECK(check_on_device(s) == "portable_device_fwd_hv64");
  }
}

TEST_CASE("portable/device: T = 1, long rows, MQA, permuted storage") {
  check_on_device(spec_of(2, 1, 300, 4, 1, 64, 64));
  check_on_device(spec_of(1, 600, 700, 2, 1, 128, 128));
  Spec s = spec_of(2, 67, 69, 4, 2, 64, 64, DType::bf16);
  s.heads_major = true;
  check_on_device(s);
  Spec o = spec_of(1, 65, 64, 2, 2, 64, 64, DType::f64);
  o.out_pad = 3;
  check_on_device(o);
}

TEST_CASE("portable/device: causal in both alignments, windows, fully masked rows") {
  for (DType t : {DType::f32, DType::f64, DType::bf16})
    for (auto [T, S] : {std::pair{130, 130}, std::pair{40, 150}, std::pair{150, 40}})
      for (Alignment a : {Alignment::top_left, Alignment::bottom_right}) {
        Spec s = spec_of(1, T, S, 2, 1, 64, 64, t);
        s.opt.causal = true;
        s.opt.alignment = a;
        INFO(to_string(t), " T=", T, " S=", S);
        check_on_device(s);
      }
  Spec w = spec_of(1, 200, 230, 2, 1, 128, 128);
  w.opt.window_left = 50;
  w.opt.window_right = 7;
  w.opt.alignment = Alignment::bottom_right;
  check_on_device(w);
}

TEST_CASE("portable/device: softcap, bias, ALiBi and masks together; an explicit scale") {
  for (DType t : {DType::f32, DType::f64, DType::f16}) {
    Spec s = spec_of(2, 70, 90, 4, 2, 64, 64, t);
    s.opt.softcap = 5.0;
    s.bias = true;
    s.bias_bcast_b = true;
    s.bias_dtype = DType::f32;
    s.mask = true;
    s.mask_bcast_n = true;
    s.alibi = 2;
    s.opt.causal = true;
    INFO(to_string(t));
    check_on_device(s);
  }
  Spec sc = spec_of(1, 80, 80, 2, 1, 128, 128);
  sc.opt.scale = 0.3;
  check_on_device(sc);
}

TEST_CASE("portable/device: padded and packed varlen, dropout") {
  Spec pad = spec_of(3, 100, 140, 2, 1, 64, 64);
  pad.q_lens = {100, 37, 0};
  pad.k_lens = {140, 0, 65};
  check_on_device(pad);
  for (DType t : {DType::f32, DType::bf16}) {
    Spec pk = spec_of(0, 0, 0, 2, 2, 128, 128, t);
    pk.packed = true;
    pk.q_lens = {5, 0, 130, 64};
    pk.k_lens = {80, 3, 129, 0};
    check_on_device(pk);
  }
  Spec f = spec_of(1, 40, 90, 2, 2, 64, 64);
  f.opt.dropout_p = 0.1;
  f.opt.dropout_seed = 3;
  f.opt.causal = true;
  check_on_device(f);
}

TEST_CASE("portable/device: KOKKOSATTN_PORTABLE_KERNEL forces the tiles or the device kernel") {
  {
    EnvGuard env("KOKKOSATTN_PORTABLE_KERNEL", "tiles");
    CHECK(check_on_device(spec_of(1, 70, 90, 2, 1, 64, 64)) == "portable_tiles_fwd");
  }
  EnvGuard env("KOKKOSATTN_PORTABLE_KERNEL", "device");
  CHECK(check_on_device(spec_of(1, 70, 90, 2, 1, 64, 64)) == "portable_device_fwd_hv64");
  Attn wide(spec_of(1, 5, 7, 2, 1, 32, 160));
  const ForwardProblem p = wide.forward_problem();
  DeviceCopy q(wide.q.view), k(wide.k.view), v(wide.v.view), out(wide.out.view);
  ForwardProblem dp = p;
  dp.q = q.view(), dp.k = k.view(), dp.v = v.view(), dp.out = out.view();
  dp.extras.lse = {};
  ExecContext x;
  x.device = Device::cuda;
  const Support s = portable_backend().supports(dp, validate(dp), x);
  CHECK_FALSE(s.ok);
  CHECK(s.reason.find("value head dims up to 128, got Hv=160") != std::string::npos);
}
