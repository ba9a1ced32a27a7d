// Validation of packed variable-length batches: cu_seqlens offsets (read when in host memory),
// their pairing with the token dimension, and what packed batches cannot take.
// PackedFixture: sequences of (4, 5) queries and (3, 4) keys, N=4, K=2, H=8, Hv=3.
#include <doctest/doctest.h>

#include "common/validate_fixture.hpp"

using namespace kattn;
using namespace kattn::test;

TEST_CASE("semantics/errors: non-monotonic cu_seqlens_q") {
  PackedFixture f;
  HostTensor cu(DType::i32, {4});
  PackedFixture::set_offsets(cu, {0, 6, 4, 9});
  HostTensor cu_k(DType::i32, {4});
  PackedFixture::set_offsets(cu_k, {0, 3, 5, 7});
  f.p.extras.cu_seqlens_q = cu;
  f.p.extras.cu_seqlens_k = cu_k;
  expect_invalid(f.p,
                 {"extras.cu_seqlens_q: expected non-decreasing offsets, got 4 at index 2 after 6 "
                  "at index 1"},
                 f.outputs());
}

TEST_CASE("semantics/errors: cu_seqlens_k ending before the last token") {
  PackedFixture f;
  PackedFixture::set_offsets(f.cu_k, {0, 3, 6});
  expect_invalid(f.p,
                 {"extras.cu_seqlens_k: expected the last offset to equal total_k = 7, got 6 at "
                  "index 2"},
                 f.outputs());
}

TEST_CASE("semantics/errors: cu_seqlens_q not starting at 0") {
  PackedFixture f;
  PackedFixture::set_offsets(f.cu_q, {1, 4, 9});
  expect_invalid(f.p, {"extras.cu_seqlens_q: expected extras.cu_seqlens_q[0] = 0, got 1"},
                 f.outputs());
}

TEST_CASE("semantics/errors: cu_seqlens_k of another batch size than cu_seqlens_q") {
  PackedFixture f;
  HostTensor cu_k(DType::i32, {4});
  PackedFixture::set_offsets(cu_k, {0, 3, 5, 7});
  f.p.extras.cu_seqlens_k = cu_k;
  expect_invalid(f.p,
                 {"extras.cu_seqlens_k: expected shape [B+1] = [3] like extras.cu_seqlens_q, "
                  "got [4]"},
                 f.outputs());
}

TEST_CASE("semantics/errors: cu_seqlens of no entry") {
  PackedFixture f;
  f.p.extras.cu_seqlens_q.extent[0] = 0;
  expect_invalid(f.p, {"extras.cu_seqlens_q: expected rank 1 [B+1] with B >= 0, got [0]"},
                 f.outputs());
}

TEST_CASE("semantics/errors: cu_seqlens_q without cu_seqlens_k") {
  PackedFixture f;
  f.p.extras.cu_seqlens_k = Tensor{};
  expect_invalid(f.p, {"extras.cu_seqlens_k: expected with extras.cu_seqlens_q", "got none"},
                 f.outputs());
}

TEST_CASE("semantics/errors: cu_seqlens of dtype f32") {
  PackedFixture f;
  f.p.extras.cu_seqlens_q.dtype = DType::f32;
  expect_invalid(f.p, {"extras.cu_seqlens_q: expected dtype i32, got f32"}, f.outputs());
}

TEST_CASE("semantics/errors: padded and packed varlen together") {
  PackedFixture f;
  HostTensor lens(DType::i32, {2});
  lens.set_int(0, 4);
  lens.set_int(1, 5);
  f.p.extras.seqlens_q = lens;
  expect_invalid(f.p,
                 {"extras.seqlens_q: expected not given with extras.cu_seqlens_q/k",
                  "mutually exclusive", "got [2]"},
                 f.outputs());
}

TEST_CASE("semantics/errors: batched q of rank 4 with cu_seqlens") {
  PackedFixture f;
  ForwardFixture batched;
  f.p.q = batched.p.q;
  expect_invalid(f.p,
                 {"q: expected rank 3 [total_q, N, H] (packed varlen: cu_seqlens given), got "
                  "rank 4 [2, 6, 4, 8]"},
                 f.outputs());
}

TEST_CASE("semantics/errors: packed out with another token count than q") {
  PackedFixture f;
  f.p.out.extent[0] = 8;
  expect_invalid(f.p, {"out: expected extent total_q=9 at dim 0 (from q), got [8, 4, 3]"},
                 f.outputs());
}

TEST_CASE("semantics/errors: bias with packed varlen") {
  PackedFixture f;
  HostTensor bias(DType::f32, {2, 4, 5, 4});
  bias.fill_normal(8);
  f.p.extras.bias = bias;
  expect_invalid(f.p,
                 {"extras.bias: expected not given with cu_seqlens",
                  "not defined for packed varlen; use padded batches"},
                 f.outputs());
}

TEST_CASE("semantics/errors: mask with packed varlen") {
  PackedFixture f;
  HostTensor mask(DType::boolean, {1, 1, 5, 4});
  f.p.extras.mask = mask;
  expect_invalid(f.p,
                 {"extras.mask: expected not given with cu_seqlens",
                  "not defined for packed varlen; use padded batches"},
                 f.outputs());
}

TEST_CASE("semantics/errors: lse of the batched shape with packed varlen") {
  PackedFixture f;
  HostTensor lse(DType::f32, {2, 4, 5});
  lse.poison();
  f.p.extras.lse = lse;
  expect_invalid(f.p, {"extras.lse: expected shape [N, total_q] = [4, 9], got [2, 4, 5]"},
                 {&f.out, &lse});
}

TEST_CASE("semantics/errors: device-resident cu_seqlens without max_seqlen") {
  // Device memory cannot be read here, so the longest sequence must be given. No backend may
  // see this problem: the pointers are host pointers labelled as device memory.
  PackedFixture f;
  for (Tensor* t : {&f.p.q, &f.p.k, &f.p.v, &f.p.out, &f.p.extras.lse, &f.p.extras.cu_seqlens_q,
                    &f.p.extras.cu_seqlens_k})
    t->space = MemorySpace::cuda_device;
  f.p.extras.max_seqlen_k = 4;
  expect_invalid(f.p,
                 {"extras.max_seqlen_q: expected a value > 0 when extras.cu_seqlens_q is in "
                  "device memory (cuda_device), got 0"},
                 f.outputs());
}

TEST_CASE("semantics/errors: max_seqlen shorter than the longest sequence") {
  PackedFixture f;
  f.p.extras.max_seqlen_q = 4; // the second sequence has 5 queries
  expect_invalid(f.p,
                 {"extras.max_seqlen_q: expected >= the longest sequence in extras.cu_seqlens_q "
                  "(5), got 4"},
                 f.outputs());
}

TEST_CASE("semantics/errors: max_seqlen longer than all tokens") {
  PackedFixture f;
  f.p.extras.max_seqlen_k = 8;
  expect_invalid(f.p, {"extras.max_seqlen_k: expected <= total_k = 7, got 8"}, f.outputs());
}
