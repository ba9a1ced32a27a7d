// The portable backward (dq, dk, dv, dbias) against the fp64 reference's gradients on every
// host execution context. Tolerances: gradient_tol() in test_portable_helpers.hpp.
#include <doctest/doctest.h>

#include <cstring>
#include <limits>
#include <utility>

#include "test_portable_helpers.hpp"

using namespace kattn;
using namespace kattn::test;

namespace {
constexpr DType all_dtypes[] = {DType::f64, DType::f32, DType::f16, DType::bf16};
} // namespace

TEST_CASE("semantics/dtypes: portable backward, every dtype, lengths across tiles") {
  for (DType t : all_dtypes) {
    INFO(to_string(t));
    check_portable_backward(spec_of(2, 70, 75, 2, 2, 16, 24, t));
  }
}

TEST_CASE("portable backward: BRIEF.md's non-tile shapes") {
  for (auto [T, S] : {std::pair{1, 1}, std::pair{239, 1}, std::pair{799, 3}, std::pair{113, 203}})
    for (DType t : {DType::f32, DType::f64}) {
      INFO(to_string(t), " T=", T, " S=", S);
      check_portable_backward(spec_of(1, T, S, 1, 1, 8, 8, t));
    }
}

TEST_CASE("semantics/causal: portable backward, both alignments, T > S zeroes masked rows") {
  for (auto al : {Alignment::top_left, Alignment::bottom_right})
    for (auto [T, S] : {std::pair{130, 100}, std::pair{40, 150}}) {
      Spec s = spec_of(1, T, S, 2, 1, 16, 16);
      s.opt.causal = true;
      s.opt.alignment = al;
      INFO(to_string(al), " T=", T, " S=", S);
      check_portable_backward(s);
    }
}

TEST_CASE("semantics/window: portable backward with sliding windows") {
  for (auto [l, r] : {std::pair{7, 0}, std::pair{70, 3}, std::pair{-1, 2}, std::pair{4, -1}}) {
    Spec s = spec_of(1, 100, 140, 2, 1, 8, 8);
    s.opt.window_left = l;
    s.opt.window_right = r;
    s.opt.alignment = Alignment::bottom_right;
    INFO("window (", l, ", ", r, ")");
    check_portable_backward(s);
  }
}

TEST_CASE("semantics/gqa: portable backward sums dk, dv over the query heads of a group") {
  check_portable_backward(spec_of(2, 40, 70, 6, 2, 16, 16));
  check_portable_backward(spec_of(1, 40, 70, 4, 1, 16, 8, DType::f64)); // MQA, Hv != H
}

TEST_CASE("semantics/bias_broadcast: portable dbias of every broadcast shape") {
  for (bool bb : {false, true})
    for (bool bn : {false, true}) {
      Spec s = spec_of(2, 70, 40, 3, 1, 8, 8);
      s.bias = true;
      s.bias_bcast_b = bb;
      s.bias_bcast_n = bn;
      s.bias_dtype = bb ? DType::f32 : DType::f64;
      s.opt.causal = true;
      INFO("bias [", bb ? "1" : "B", ", ", bn ? "1" : "N", ", T, S]");
      check_portable_backward(s);
    }
}

TEST_CASE("semantics/bias_broadcast: portable dbias in f16 / bf16 with same-dtype inputs") {
  for (DType t : {DType::f16, DType::bf16}) {
    Spec s = spec_of(2, 20, 30, 2, 2, 16, 16, t);
    s.bias = s.bias_bcast_n = true;
    s.bias_dtype = t;
    INFO(to_string(t));
    check_portable_backward(s);
  }
}

TEST_CASE("semantics/softcap: portable backward applies 1 - tanh^2") {
  for (DType t : {DType::f32, DType::f64}) {
    Spec s = spec_of(2, 30, 70, 2, 1, 16, 16, t);
    s.opt.softcap = 1.2;
    s.q_mult = 2.0;
    s.bias = true;
    s.bias_bcast_b = true;
    INFO(to_string(t));
    check_portable_backward(s);
  }
}

TEST_CASE("semantics/alibi: portable backward with ALiBi") {
  Spec s = spec_of(2, 66, 71, 4, 2, 8, 8);
  s.alibi = 2;
  s.opt.causal = true;
  s.opt.alignment = Alignment::bottom_right;
  check_portable_backward(s);
}

TEST_CASE("semantics/bool_mask: portable backward with a boolean mask and fully masked rows") {
  Spec s = spec_of(2, 19, 6, 2, 1, 8, 8);
  s.mask = true;
  s.mask_density = 0.35;
  s.seed = 5;
  check_portable_backward(s);
}

TEST_CASE("semantics/padded: portable backward zeroes padded rows and keys") {
  Spec s = spec_of(3, 100, 80, 2, 1, 8, 8);
  s.q_lens = {100, 65, 1};
  s.k_lens = {80, 7, 2};
  s.bias = true;
  s.opt.causal = true;
  s.opt.alignment = Alignment::bottom_right;
  check_portable_backward(s);
}

TEST_CASE("semantics/packed_varlen: portable backward on packed sequences") {
  for (DType t : {DType::f32, DType::bf16}) {
    Spec s;
    s.dtype = t;
    s.packed = true;
    s.q_lens = {70, 1, 33, 0};
    s.k_lens = {65, 140, 33, 5};
    s.N = 4, s.K = 2, s.H = 16, s.Hv = 8;
    s.opt.causal = true;
    s.opt.alignment = Alignment::bottom_right;
    INFO(to_string(t));
    check_portable_backward(s);
  }
}

TEST_CASE("semantics/dropout: portable backward uses the reference's mask") {
  // f64: a single different keep decision would change a gradient by O(1e-2); 1e-10 catches it.
  Spec s = spec_of(2, 40, 70, 2, 1, 8, 8, DType::f64);
  s.opt.dropout_p = 0.25;
  s.opt.dropout_seed = 99;
  s.opt.dropout_offset = 3;
  s.bias = true;
  check_portable_backward(s);
  Spec f = spec_of(1, 70, 40, 2, 2, 16, 16);
  f.opt.dropout_p = 0.4;
  f.opt.dropout_seed = 5;
  check_portable_backward(f);
}

TEST_CASE("semantics/strides: portable backward on heads-major strided views") {
  Spec s = spec_of(2, 67, 69, 4, 2, 16, 24);
  s.heads_major = true;
  s.opt.causal = true;
  check_portable_backward(s);
}

TEST_CASE("portable backward: head dims 64 and 128, T = 1 decode") {
  for (std::int64_t h : {64, 128}) {
    Spec s = spec_of(1, 1, 130, 2, 1, h, h);
    s.opt.causal = true;
    s.opt.alignment = Alignment::bottom_right;
    INFO("H=", h);
    check_portable_backward(s);
  }
}

TEST_CASE("portable backward: deterministic, bitwise repeatable") {
  Spec s = spec_of(2, 90, 100, 4, 2, 16, 16);
  s.bias = s.bias_bcast_b = true;
  s.opt.deterministic = true;
  s.opt.dropout_p = 0.1;
  Attn a(s);
  const BackwardProblem bp = a.backward_problem(true);
  const Dims d = validate(bp);
  std::vector<std::vector<std::byte>> runs;
  for (int run = 0; run < 3; ++run) {
    poison(a.dq.view);
    poison(a.dbias.view());
    portable_backend().backward(bp, d, ExecContext{});
    std::vector<std::byte> bytes = a.dq.storage.raw();
    const std::vector<std::byte> db = a.dbias.raw();
    bytes.insert(bytes.end(), db.begin(), db.end());
    runs.push_back(std::move(bytes));
  }
  CHECK(runs[0] == runs[1]);
  CHECK(runs[0] == runs[2]);
}

TEST_CASE("semantics/sinks: portable forward and backward (dsinks) on the host contexts") {
  for (DType t : all_dtypes) {
    INFO(to_string(t));
    Spec s = spec_of(2, 70, 75, 4, 2, 16, 24, t);
    s.sinks = true;
    check_portable(s);
    check_portable_backward(s);
  }
  // Keyless rows (bottom-right causal, T > S): out 0, LSE = the sink.
  Spec k = spec_of(1, 40, 20, 2, 1, 8, 8, DType::f32);
  k.sinks = true;
  k.opt.causal = true;
  k.opt.alignment = Alignment::bottom_right;
  check_portable(k);
  check_portable_backward(k);
  // A -inf sink is no sink: on keyless rows its LSE is -inf too, and its dsinks 0, not
  // exp(-inf - -inf) * 0 = NaN (found by the front end's sinks test on OpenMP).
  k.sink_values = {-std::numeric_limits<double>::infinity(), 0.25};
  check_portable(k);
  check_portable_backward(k);
  // Packed varlen with an empty sequence, softcap.
  Spec v = spec_of(1, 1, 1, 2, 1, 16, 16, DType::f32);
  v.sinks = true;
  v.packed = true;
  v.q_lens = {33, 0, 70};
  v.k_lens = {40, 5, 65};
  v.opt.softcap = 5.0;
  check_portable(v);
  check_portable_backward(v);
}
