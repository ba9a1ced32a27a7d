// auto's order per shape class (kokkosattn/preference.hpp): small forwards try cuda before
// cudnn, everything else keeps preference_order; select() and explain() follow that order.
#include <doctest/doctest.h>

#include <algorithm>

#include "common/dispatch_fixture.hpp"
#include "kokkosattn/preference.hpp"

using namespace kattn;
using namespace kattn::test;

namespace {

Dims dims(std::int64_t B, std::int64_t T, std::int64_t S, std::int64_t N, std::int64_t H) {
  Dims d;
  d.B = B, d.T = T, d.S = S, d.N = N, d.K = N, d.H = d.Hv = H;
  return d;
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

TEST_CASE("dispatch: a backend that leads() a forward is tried first, and the reason is kept") {
  EnvGuard no_env("KOKKOSATTN_BACKEND", nullptr);
  FakeSet s({Backend::cudnn, Backend::portable, Backend::reference});
  s.fake(Backend::portable).lead("portable measured faster here");
  ForwardFixture f;
  const Selection sel = select(s.registry, f.p, {});
  CHECK(sel.impl->id() == Backend::portable);
  CHECK(sel.order_rule == "portable measured faster here");
  CHECK(s.calls(Backend::cudnn).supports_forward == 0); // the leader was asked first and served
  CHECK(explain(s.registry, f.p, {})[0].backend == Backend::portable);
  // The backward order ignores leads().
  BackwardFixture b;
  CHECK(select(s.registry, b.bp, {}).impl->id() == Backend::cudnn);
}

TEST_CASE("dispatch: a leader that refuses the problem does not block the others") {
  EnvGuard no_env("KOKKOSATTN_BACKEND", nullptr);
  FakeSet s({Backend::cudnn, Backend::portable, Backend::reference});
  s.fake(Backend::portable).lead("claims the lead").refuse("but cannot run it");
  ForwardFixture f;
  const Selection sel = select(s.registry, f.p, {});
  CHECK(sel.impl->id() == Backend::cudnn);
  CHECK(s.calls(Backend::portable).supports_forward == 1);
  CHECK(s.calls(Backend::portable).runs() == 0);
}
