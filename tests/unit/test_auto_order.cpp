// The auto policy (kokkosattn/auto_policy.hpp): small forwards try cuda before cudnn, a measured
// lead moves its backend first where that backend supports the problem with the measured kernel,
// everything else keeps preference_order; select() and explain() follow that order.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>

#include "common/dispatch_fixture.hpp"
#include "kokkosattn/auto_policy.hpp"

using namespace kattn;
using namespace kattn::test;

namespace {

Dims dims(std::int64_t B, std::int64_t T, std::int64_t S, std::int64_t N, std::int64_t H) {
  Dims d;
  d.B = B, d.T = T, d.S = S, d.N = N, d.K = N, d.H = d.Hv = H;
  return d;
}

// A bf16 forward described only (the fakes never read data): B 1, one head, T = S = len. The
// inputs may share an address; out may not overlap them (validation refuses that).
ForwardProblem described(std::int64_t len, std::int64_t head_dim) {
  void* const data = reinterpret_cast<void*>(64);
  ForwardProblem p;
  p.q = p.k = p.v = Tensor::contiguous(data, DType::bf16, {1, len, 1, head_dim});
  p.out = Tensor::contiguous(reinterpret_cast<void*>(std::uintptr_t{1} << 40), DType::bf16,
                             {1, len, 1, head_dim});
  return p;
}

std::ptrdiff_t position(const AutoOrder& a, Backend b) {
  return std::find(a.order.begin(), a.order.end(), b) - a.order.begin();
}

} // namespace

TEST_CASE("auto_order: the codelab shape's forward tries cuda before cudnn, and says why") {
  const AutoOrder a = auto_order(dims(4, 128, 128, 8, 64), false); // 0.134 GFLOP
  CHECK(position(a, Backend::cuda) < position(a, Backend::cudnn));
  CHECK(a.rule.find("cuda before cudnn") != std::string::npos);
  // Only the two swap: the others keep their preference_order places.
  for (Backend b : {Backend::hip, Backend::portable, Backend::naive, Backend::reference})
    CHECK(position(a, b) == std::find(preference_order.begin(), preference_order.end(), b) -
                                preference_order.begin());
}

TEST_CASE("auto_order: the threshold is 2^30 FLOP (4 B N T S H), inclusive") {
  // 4 * 1 * 1 * 4096 * 4096 * 16 = 2^30 exactly: small; head dim 17 is above it.
  CHECK_FALSE(auto_order(dims(1, 4096, 4096, 1, 16), false).rule.empty());
  const AutoOrder big = auto_order(dims(1, 4096, 4096, 1, 17), false);
  CHECK(big.rule.empty());
  CHECK(big.order == preference_order);
}

TEST_CASE("auto_order: large forwards and every backward keep preference_order") {
  CHECK(auto_order(dims(4, 4096, 4096, 16, 128), false).order == preference_order);
  const AutoOrder bwd = auto_order(dims(4, 128, 128, 8, 64), true);
  CHECK(bwd.order == preference_order);
  CHECK(bwd.rule.empty());
}

TEST_CASE("dispatch: auto follows auto_order (small forward -> cuda; its backward -> cudnn)") {
  EnvGuard no_env("KOKKOSATTN_BACKEND", nullptr);
  FakeSet s({Backend::cudnn, Backend::cuda, Backend::reference});
  ForwardFixture f;
  const Selection sel = select(s.registry, f.p, {});
  REQUIRE(sel.impl != nullptr);
  CHECK(sel.impl->id() == Backend::cuda);
  CHECK_FALSE(sel.order_rule.empty());
  const std::vector<BackendVerdict> v = explain(s.registry, f.p, {});
  REQUIRE(v.size() == preference_order.size());
  CHECK(v[0].backend == Backend::cuda);
  CHECK(v[1].backend == Backend::cudnn);
  BackwardFixture b;
  const Selection bsel = select(s.registry, b.bp, {});
  CHECK(bsel.impl->id() == Backend::cudnn);
  CHECK(bsel.order_rule.empty());
}

TEST_CASE("dispatch: a forced backend ignores the order") {
  EnvGuard no_env("KOKKOSATTN_BACKEND", nullptr);
  FakeSet s({Backend::cudnn, Backend::cuda, Backend::reference});
  ForwardFixture f;
  f.p.options.backend = Backend::cudnn;
  const Selection sel = select(s.registry, f.p, {});
  CHECK(sel.impl->id() == Backend::cudnn);
  CHECK(sel.order_rule.empty());
}

TEST_CASE("dispatch: a measured lead puts its backend first when the kernel matches") {
  EnvGuard no_env("KOKKOSATTN_BACKEND", nullptr);
  FakeSet s({Backend::cudnn, Backend::cuda, Backend::reference});
  s.fake(Backend::cuda).kernel("sm90_fwd_bf16_h64");
  // Head dim 64 non-causal from 8192 keys: a shipped lead of cuda's sm90 kernels.
  const ForwardProblem p = described(8192, 64);
  const Selection sel = select(s.registry, p, {});
  CHECK(sel.impl->id() == Backend::cuda);
  CHECK(sel.kernel == "sm90_fwd_bf16_h64");
  CHECK(sel.order_rule.find("cuda first: its sm90 kernel measured head dim 64 non-causal") == 0);
  CHECK(sel.order_rule.find("benchmarks/results/") != std::string::npos); // names its source
  CHECK(s.calls(Backend::cudnn).supports_forward == 0); // the leader was asked first and served
  CHECK(explain(s.registry, p, {})[0].backend == Backend::cuda);
  CHECK(format_selection(sel).find(" kernel=sm90_fwd_bf16_h64") != std::string::npos);
}

TEST_CASE("dispatch: no lead for another kernel, a shorter problem or another head dim") {
  EnvGuard no_env("KOKKOSATTN_BACKEND", nullptr);
  FakeSet sm80({Backend::cudnn, Backend::cuda});
  sm80.fake(Backend::cuda).kernel("sm80_fwd_bf16_h64");
  CHECK(select(sm80.registry, described(8192, 64), {}).impl->id() == Backend::cudnn);
  FakeSet sm90({Backend::cudnn, Backend::cuda});
  sm90.fake(Backend::cuda).kernel("sm90_fwd_bf16_h64");
  CHECK(select(sm90.registry, described(4096, 64), {}).impl->id() == Backend::cudnn);
  CHECK(select(sm90.registry, described(8192, 96), {}).impl->id() == Backend::cudnn);
}

TEST_CASE("auto_order: a caller's lead table is matched in order, and a refusing leader is "
          "skipped") {
  FakeSet s({Backend::cudnn, Backend::portable, Backend::naive});
  s.fake(Backend::portable).kernel("tile_x").refuse("cannot");
  s.fake(Backend::naive).kernel("three_kernels");
  const MeasuredLead leads[] = {
      {Backend::portable, "tile", 64, false, 1024, "portable wins", "file-a"},
      {Backend::naive, "three", 64, false, 1024, "naive wins", "file-b"},
  };
  const ForwardProblem p = described(2048, 64);
  const Dims d = validate(p);
  const AutoOrder a = auto_order(s.registry, p, d, ExecContext{}, leads);
  CHECK(a.order[0] == Backend::naive);
  CHECK(a.rule == "naive first: its three kernel measured naive wins on the H200 (file-b)");
  CHECK(s.calls(Backend::portable).supports_forward == 1);
}

TEST_CASE("dispatch: a leader that refuses the problem does not block the others") {
  EnvGuard no_env("KOKKOSATTN_BACKEND", nullptr);
  FakeSet s({Backend::cudnn, Backend::cuda, Backend::reference});
  s.fake(Backend::cuda).kernel("sm90_fwd_bf16_h64").refuse("but cannot run it");
  const Selection sel = select(s.registry, described(8192, 64), {});
  CHECK(sel.impl->id() == Backend::cudnn);
  CHECK(sel.order_rule.empty());
  CHECK(s.calls(Backend::cuda).supports_forward == 1);
  CHECK(s.calls(Backend::cuda).runs() == 0);
  // The backward order has no leads.
  BackwardFixture b;
  CHECK(select(s.registry, b.bp, {}).impl->id() == Backend::cudnn);
}
