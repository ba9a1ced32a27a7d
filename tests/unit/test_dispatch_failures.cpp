// What dispatch does with exceptions from backends: kattn errors pass through unchanged, any
// other exception becomes BackendFailure naming the backend.
#include <doctest/doctest.h>

#include "common/dispatch_fixture.hpp"

using namespace kattn;
using namespace kattn::test;

namespace {
template <class F>
std::string failure_message(F&& f) {
  std::string msg;
  bool failure = false;
  try {
    f();
  } catch (const BackendFailure& e) {
    failure = true;
    msg = e.what();
  } catch (const std::exception& e) {
    msg = std::string("other exception: ") + e.what();
  } catch (...) {
    msg = "non-standard exception escaped";
  }
  INFO(msg);
  CHECK(failure);
  return msg;
}
} // namespace

TEST_CASE("dispatch: std::runtime_error from a forward becomes BackendFailure") {
  EnvGuard no_env("KOKKOSATTN_BACKEND", nullptr);
  FakeSet s({Backend::naive, Backend::reference});
  s.fake(Backend::naive).throw_on_run(FakeBackend::Throw::runtime_error);
  ForwardFixture f;
  const std::string msg = failure_message([&] { run_forward(s.registry, f.p, {}); });
  CHECK(msg.find("backend naive failed in forward: fake device error 42") != std::string::npos);
  CHECK(s.calls(Backend::reference).runs() == 0); // a failure is not a reason to fall back
}

TEST_CASE("dispatch: std::runtime_error from a backward becomes BackendFailure") {
  EnvGuard no_env("KOKKOSATTN_BACKEND", nullptr);
  FakeSet s({Backend::portable});
  s.fake(Backend::portable).throw_on_run(FakeBackend::Throw::runtime_error);
  BackwardFixture b;
  const std::string msg = failure_message([&] { run_backward(s.registry, b.bp, {}); });
  CHECK(msg.find("backend portable failed in backward: fake device error 42") != std::string::npos);
}

TEST_CASE("dispatch: a non-standard exception becomes BackendFailure") {
  EnvGuard no_env("KOKKOSATTN_BACKEND", nullptr);
  FakeSet s({Backend::naive});
  s.fake(Backend::naive).throw_on_run(FakeBackend::Throw::integer);
  ForwardFixture f;
  const std::string msg = failure_message([&] { run_forward(s.registry, f.p, {}); });
  CHECK(msg.find("backend naive failed in forward") != std::string::npos);
}

TEST_CASE("dispatch: a throwing support check becomes BackendFailure") {
  EnvGuard no_env("KOKKOSATTN_BACKEND", nullptr);
  FakeSet s({Backend::cudnn, Backend::naive});
  s.fake(Backend::cudnn).throw_in_supports(FakeBackend::Throw::runtime_error);
  ForwardFixture f;
  const std::string msg = failure_message([&] { (void)explain(s.registry, f.p, {}); });
  CHECK(msg.find("backend cudnn failed in supports(): fake device error 42") != std::string::npos);
}

TEST_CASE("dispatch: kattn errors from a backend pass through unchanged") {
  EnvGuard no_env("KOKKOSATTN_BACKEND", nullptr);
  FakeSet s({Backend::naive});
  s.fake(Backend::naive).throw_on_run(FakeBackend::Throw::unsupported);
  ForwardFixture f;
  const std::string msg = unsupported_message([&] { run_forward(s.registry, f.p, {}); });
  CHECK(msg == "fake backend: no kernel for this case");
}
