// Backend choice on registries of fake backends: auto takes the first supporting backend in
// preference order, a forced backend is used or refused (never replaced), and explain() gives
// every backend's verdict. Call counters prove which backends ran.
#include <doctest/doctest.h>

#include "common/dispatch_fixture.hpp"
#include "kokkosattn/auto_policy.hpp"
#include "kokkosattn/validate.hpp"

using namespace kattn;
using namespace kattn::test;

TEST_CASE("dispatch: auto picks the first supporting backend in preference order") {
  EnvGuard no_env("KOKKOSATTN_BACKEND", nullptr);
  FakeSet s({Backend::reference, Backend::naive, Backend::portable});
  ForwardFixture f;
  const Selection sel = select(s.registry, f.p, {});
  REQUIRE(sel.impl != nullptr);
  CHECK(sel.impl->id() == Backend::portable);
  CHECK(sel.how == "auto");
  run_forward(s.registry, f.p, {});
  CHECK(s.calls(Backend::portable).forward == 1);
  CHECK(s.calls(Backend::naive).runs() == 0);
  CHECK(s.calls(Backend::reference).runs() == 0);
}

TEST_CASE("dispatch: auto skips backends whose support check fails") {
  EnvGuard no_env("KOKKOSATTN_BACKEND", nullptr);
  FakeSet s({Backend::cuda, Backend::portable, Backend::naive, Backend::reference});
  s.fake(Backend::cuda).refuse("head dim 8 is not one of 64, 96, 128, 192, 256");
  s.fake(Backend::portable).refuse("no tile config for f32 here");
  ForwardFixture f;
  run_forward(s.registry, f.p, {});
  CHECK(s.calls(Backend::naive).forward == 1);
  CHECK(s.calls(Backend::cuda).runs() + s.calls(Backend::portable).runs() == 0);
  CHECK(s.calls(Backend::cuda).supports_forward == 1);
  CHECK(s.calls(Backend::reference).supports_forward == 0); // never asked: naive came first
  CHECK(f.out.get(0) == FakeBackend::marker);
}

TEST_CASE("dispatch: preference order does not depend on registration order") {
  EnvGuard no_env("KOKKOSATTN_BACKEND", nullptr);
  FakeSet s({Backend::reference, Backend::hip, Backend::cudnn, Backend::naive});
  ForwardFixture f;
  CHECK(select(s.registry, f.p, {}).impl->id() == Backend::cudnn);
}

TEST_CASE("dispatch: backward asks the backward support check") {
  EnvGuard no_env("KOKKOSATTN_BACKEND", nullptr);
  FakeSet s({Backend::portable, Backend::reference});
  s.fake(Backend::portable).refuse_backward_only("no backward kernel yet");
  BackwardFixture b;
  run_backward(s.registry, b.bp, {});
  CHECK(s.calls(Backend::reference).backward == 1);
  CHECK(s.calls(Backend::portable).supports_backward == 1);
  CHECK(s.calls(Backend::portable).runs() == 0);
  CHECK(b.dq.get(0) == FakeBackend::marker);
  ForwardFixture f; // the forward still goes to portable
  run_forward(s.registry, f.p, {});
  CHECK(s.calls(Backend::portable).forward == 1);
}

TEST_CASE("dispatch: auto with no supporting backend lists every reason") {
  EnvGuard no_env("KOKKOSATTN_BACKEND", nullptr);
  FakeSet s({Backend::naive, Backend::reference});
  s.fake(Backend::naive).refuse("naive says no");
  s.fake(Backend::reference).refuse("reference says no");
  ForwardFixture f;
  const auto before = f.out.raw();
  const std::string msg = unsupported_message([&] { run_forward(s.registry, f.p, {}); });
  for (const char* needle :
       {"no backend can run this problem", "naive: naive says no", "reference: reference says no",
        "cuda: not built into this library", "cudnn: not built into this library",
        "hip: not built into this library", "portable: not built into this library"})
    CHECK_MESSAGE(msg.find(needle) != std::string::npos, needle);
  CHECK(s.total_runs() == 0);
  CHECK(f.out.raw() == before); // outputs untouched
}

TEST_CASE("dispatch: a forced unsupported backend throws its reason and runs nothing") {
  EnvGuard no_env("KOKKOSATTN_BACKEND", nullptr);
  FakeSet s({Backend::cuda, Backend::naive, Backend::reference});
  s.fake(Backend::cuda).refuse("needs head_dim stride 1, got 4");
  ForwardFixture f;
  f.p.options.backend = Backend::cuda;
  const auto before = f.out.raw();
  const auto lse_before = f.lse.raw();
  const std::string msg = unsupported_message([&] { run_forward(s.registry, f.p, {}); });
  CHECK(msg.find("backend cuda cannot run this problem: needs head_dim stride 1, got 4") !=
        std::string::npos);
  CHECK(msg.find("forced by options") != std::string::npos);
  CHECK(s.total_runs() == 0); // no silent fallback to naive or reference
  CHECK(s.calls(Backend::naive).supports_forward == 0);
  CHECK(f.out.raw() == before);
  CHECK(f.lse.raw() == lse_before);
}

TEST_CASE("dispatch: a forced backend that is not built throws") {
  EnvGuard no_env("KOKKOSATTN_BACKEND", nullptr);
  FakeSet s({Backend::naive, Backend::reference});
  ForwardFixture f;
  f.p.options.backend = Backend::cudnn;
  const std::string msg = unsupported_message([&] { run_forward(s.registry, f.p, {}); });
  CHECK(msg.find("backend cudnn is not built into this library (its registry holds no cudnn "
                 "backend)") != std::string::npos);
  CHECK(s.total_runs() == 0);
}

TEST_CASE("dispatch: a forced supported backend runs even when a preferred one could") {
  EnvGuard no_env("KOKKOSATTN_BACKEND", nullptr);
  FakeSet s({Backend::cuda, Backend::reference});
  BackwardFixture b;
  b.bp.forward.options.backend = Backend::reference;
  const Selection sel = select(s.registry, b.bp, {});
  CHECK(sel.impl->id() == Backend::reference);
  CHECK(sel.how == "forced by options");
  run_backward(s.registry, b.bp, {});
  CHECK(s.calls(Backend::reference).backward == 1);
  CHECK(s.calls(Backend::cuda).runs() == 0);
}

TEST_CASE("dispatch: a backend that gives no reason still gets one in the message") {
  EnvGuard no_env("KOKKOSATTN_BACKEND", nullptr);
  FakeSet s({Backend::naive});
  s.fake(Backend::naive).refuse("");
  ForwardFixture f;
  f.p.options.backend = Backend::naive;
  const std::string msg = unsupported_message([&] { (void)select(s.registry, f.p, {}); });
  CHECK(msg.find("backend naive cannot run this problem: (the backend gave no reason)") !=
        std::string::npos);
}

TEST_CASE("dispatch: validation runs before any backend is asked") {
  EnvGuard no_env("KOKKOSATTN_BACKEND", nullptr);
  FakeSet s({Backend::naive});
  ForwardFixture f;
  f.p.options.dropout_p = 1.5;
  f.p.options.backend = Backend::hip; // not built: still an InvalidArgument, not Unsupported
  CHECK_THROWS_AS(run_forward(s.registry, f.p, {}), InvalidArgument);
  CHECK(s.calls(Backend::naive).supports_forward == 0);
}

TEST_CASE("dispatch: explain lists all six backends with verdicts") {
  EnvGuard no_env("KOKKOSATTN_BACKEND", nullptr);
  FakeSet s({Backend::portable, Backend::naive, Backend::reference});
  s.fake(Backend::portable).refuse("window not supported").describe("tiled 64x64");
  s.fake(Backend::naive).describe("Kokkos OpenMP");
  ForwardFixture f;
  const std::vector<BackendVerdict> v = explain(s.registry, f.p, {});
  REQUIRE(v.size() == 6);
  // The fixture is a small forward, so auto tries cuda before cudnn (test_auto_order.cpp).
  const AutoOrder order = auto_order(validate(f.p), false);
  for (std::size_t i = 0; i < v.size(); ++i)
    CHECK(v[i].backend == order.order[i]);
  for (std::size_t i : {0u, 1u, 2u}) { // cuda, cudnn, hip
    CHECK_FALSE(v[i].built);
    CHECK_FALSE(v[i].supported);
    CHECK(v[i].reason.find("not built into this library") != std::string::npos);
  }
  CHECK(v[3].built);
  CHECK_FALSE(v[3].supported);
  CHECK(v[3].reason == "window not supported");
  CHECK(v[3].description == "tiled 64x64");
  CHECK(v[4].supported);
  CHECK(v[4].reason.empty());
  CHECK(v[4].description == "Kokkos OpenMP");
  CHECK(v[5].supported);
  CHECK(s.total_runs() == 0); // explaining runs nothing
}

TEST_CASE("dispatch: explain of a backward problem asks the backward check") {
  FakeSet s({Backend::naive, Backend::reference});
  s.fake(Backend::naive).refuse_backward_only("forward only");
  BackwardFixture b;
  const auto v = explain(s.registry, b.bp, {});
  REQUIRE(v.size() == 6);
  CHECK_FALSE(v[4].supported);
  CHECK(v[4].reason == "forward only");
  CHECK(v[5].supported);
  CHECK(s.calls(Backend::naive).supports_forward == 0);
}

TEST_CASE("dispatch: format_explain is an aligned table naming every backend") {
  FakeSet s({Backend::naive, Backend::reference});
  s.fake(Backend::naive).refuse("too big");
  ForwardFixture f;
  const std::string table = format_explain(explain(s.registry, f.p, {}));
  for (Backend b : preference_order)
    CHECK_MESSAGE(table.find(std::string(to_string(b))) != std::string::npos, to_string(b));
  CHECK(table.find("too big") != std::string::npos);
  CHECK(table.find("holds no cuda backend") != std::string::npos);
  // Seven lines (header + six backends); the "built" column starts at the same offset in all.
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (std::size_t nl; (nl = table.find('\n', start)) != std::string::npos; start = nl + 1)
    lines.push_back(table.substr(start, nl - start));
  REQUIRE(lines.size() == 7);
  const std::size_t col = lines[0].find("built");
  REQUIRE(col != std::string::npos);
  for (std::size_t i = 1; i < lines.size(); ++i) {
    INFO(lines[i]);
    CHECK((lines[i].compare(col, 3, "yes") == 0 || lines[i].compare(col, 2, "no") == 0));
    CHECK(lines[i][col - 1] == ' ');
  }
}

TEST_CASE("dispatch: registry add replaces a backend of the same id") {
  auto first = std::make_shared<FakeCalls>(), second = std::make_shared<FakeCalls>();
  Registry r;
  r.add(std::make_unique<FakeBackend>(Backend::naive, first));
  r.add(std::make_unique<FakeBackend>(Backend::reference, first));
  r.add(std::make_unique<FakeBackend>(Backend::naive, second));
  CHECK(r.all().size() == 2);
  CHECK(r.find(Backend::cuda) == nullptr);
  REQUIRE(r.find(Backend::naive) != nullptr);
  EnvGuard no_env("KOKKOSATTN_BACKEND", nullptr);
  ForwardFixture f;
  run_forward(r, f.p, {});
  CHECK(second->forward == 1);
  CHECK(first->forward == 0);
}

TEST_CASE("dispatch: registry refuses a null backend and the auto id") {
  auto calls = std::make_shared<FakeCalls>();
  Registry r;
  CHECK_THROWS_AS(r.add(nullptr), InvalidArgument);
  CHECK_THROWS_AS(r.add(std::make_unique<FakeBackend>(Backend::automatic, calls)), InvalidArgument);
  CHECK(r.all().empty());
}
