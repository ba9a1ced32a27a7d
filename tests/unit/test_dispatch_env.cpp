// The environment knobs of dispatch: KOKKOSATTN_BACKEND forces a backend for `auto` runs,
// KOKKOSATTN_LOG=1 prints one line naming the backend. Variables are set and restored inside
// each test (EnvGuard).
#include <doctest/doctest.h>

#include <iostream>
#include <sstream>

#include "common/dispatch_fixture.hpp"

using namespace kattn;
using namespace kattn::test;

namespace {
// Captures what is written to std::cerr while alive.
class CerrCapture {
public:
  CerrCapture() : old_(std::cerr.rdbuf(buf_.rdbuf())) {}
  ~CerrCapture() { std::cerr.rdbuf(old_); }
  std::string text() const { return buf_.str(); }

private:
  std::ostringstream buf_;
  std::streambuf* old_;
};

std::size_t count_lines(const std::string& s) {
  std::size_t n = 0;
  for (char c : s)
    n += c == '\n';
  return n;
}
} // namespace

TEST_CASE("dispatch: KOKKOSATTN_BACKEND forces a backend for auto runs") {
  EnvGuard env("KOKKOSATTN_BACKEND", "reference");
  FakeSet s({Backend::naive, Backend::reference});
  ForwardFixture f;
  CHECK(requested_backend(f.p.options) == Backend::reference);
  const Selection sel = select(s.registry, f.p, {});
  CHECK(sel.impl->id() == Backend::reference);
  CHECK(sel.how == "forced by KOKKOSATTN_BACKEND");
  run_forward(s.registry, f.p, {});
  CHECK(s.calls(Backend::reference).forward == 1);
  CHECK(s.calls(Backend::naive).runs() == 0);
}

TEST_CASE("dispatch: an explicit backend in the options wins over KOKKOSATTN_BACKEND") {
  EnvGuard env("KOKKOSATTN_BACKEND", "reference");
  Options o;
  o.backend = Backend::naive;
  CHECK(requested_backend(o) == Backend::naive);
}

TEST_CASE("dispatch: KOKKOSATTN_BACKEND of auto or empty means auto") {
  Options o;
  {
    EnvGuard env("KOKKOSATTN_BACKEND", "auto");
    CHECK(requested_backend(o) == Backend::automatic);
  }
  {
    EnvGuard env("KOKKOSATTN_BACKEND", "");
    CHECK(requested_backend(o) == Backend::automatic);
  }
  {
    EnvGuard env("KOKKOSATTN_BACKEND", nullptr);
    CHECK(requested_backend(o) == Backend::automatic);
  }
}

TEST_CASE("dispatch: an unknown name in KOKKOSATTN_BACKEND is an InvalidArgument") {
  EnvGuard env("KOKKOSATTN_BACKEND", "flash9");
  FakeSet s({Backend::naive});
  ForwardFixture f;
  const auto before = f.out.raw();
  check_invalid([&] { run_forward(s.registry, f.p, {}); },
                {"KOKKOSATTN_BACKEND: expected one of auto, cudnn, cuda, hip, portable, naive, "
                 "reference, got \"flash9\""});
  CHECK(s.total_runs() == 0);
  CHECK(f.out.raw() == before);
}

TEST_CASE("dispatch: a backend forced by KOKKOSATTN_BACKEND never falls back") {
  EnvGuard env("KOKKOSATTN_BACKEND", "portable");
  FakeSet s({Backend::portable, Backend::naive, Backend::reference});
  s.fake(Backend::portable).refuse("softcap not supported");
  ForwardFixture f;
  f.p.options.softcap = 30.0;
  const auto before = f.out.raw();
  const std::string msg = unsupported_message([&] { run_forward(s.registry, f.p, {}); });
  CHECK(msg.find("backend portable cannot run this problem: softcap not supported") !=
        std::string::npos);
  CHECK(msg.find("forced by KOKKOSATTN_BACKEND") != std::string::npos);
  CHECK(s.total_runs() == 0);
  CHECK(f.out.raw() == before);
}

TEST_CASE("dispatch: KOKKOSATTN_LOG=1 prints one line naming the backend") {
  EnvGuard no_env("KOKKOSATTN_BACKEND", nullptr);
  EnvGuard log("KOKKOSATTN_LOG", "1");
  FakeSet s({Backend::naive, Backend::reference});
  ForwardFixture f;
  std::string text;
  {
    CerrCapture cap;
    run_forward(s.registry, f.p, {});
    text = cap.text();
  }
  INFO(text);
  CHECK(count_lines(text) == 1);
  CHECK(text.find("[kokkos-attention] forward: backend=naive (auto) B=2 T=6 S=5 N=4 K=2 H=8 "
                  "Hv=3 dtype=f32") == 0);
}

TEST_CASE("dispatch: KOKKOSATTN_LOG=1 names a forced backend of a backward run") {
  EnvGuard no_env("KOKKOSATTN_BACKEND", nullptr);
  EnvGuard log("KOKKOSATTN_LOG", "1");
  FakeSet s({Backend::naive, Backend::reference});
  BackwardFixture b(DType::bf16);
  b.bp.forward.options.backend = Backend::reference;
  std::string text;
  {
    CerrCapture cap;
    run_backward(s.registry, b.bp, {});
    text = cap.text();
  }
  INFO(text);
  CHECK(count_lines(text) == 1);
  CHECK(text.find("[kokkos-attention] backward: backend=reference (forced by options)") == 0);
  CHECK(text.find("dtype=bf16") != std::string::npos);
}

TEST_CASE("dispatch: no log line without KOKKOSATTN_LOG or with KOKKOSATTN_LOG=0") {
  EnvGuard no_env("KOKKOSATTN_BACKEND", nullptr);
  FakeSet s({Backend::naive});
  ForwardFixture f;
  for (const char* value : {static_cast<const char*>(nullptr), "0"}) {
    EnvGuard log("KOKKOSATTN_LOG", value);
    CerrCapture cap;
    run_forward(s.registry, f.p, {});
    CHECK(cap.text().empty());
  }
  CHECK(s.calls(Backend::naive).forward == 2);
}
