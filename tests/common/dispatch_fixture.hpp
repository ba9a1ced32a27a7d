// Test helper for dispatch tests: a registry of fake backends with per-backend call counters,
// a scoped environment variable, and a catcher for Unsupported messages.
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <string>

#include "common/fake_backend.hpp"
#include "common/validate_fixture.hpp"

namespace kattn::test {

// Sets (or, with nullptr, unsets) an environment variable and restores it on scope exit.
class EnvGuard {
public:
  EnvGuard(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name))
      old_ = old;
    if (value)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~EnvGuard() {
    if (old_)
      ::setenv(name_.c_str(), old_->c_str(), 1);
    else
      ::unsetenv(name_.c_str());
  }
  EnvGuard(const EnvGuard&) = delete;
  EnvGuard& operator=(const EnvGuard&) = delete;

private:
  std::string name_;
  std::optional<std::string> old_;
};

// One accepting fake backend per id given, each with its own counters.
class FakeSet {
public:
  FakeSet(std::initializer_list<Backend> ids) {
    for (Backend b : ids) {
      auto calls = std::make_shared<FakeCalls>();
      auto impl = std::make_unique<FakeBackend>(b, calls);
      fakes_[b] = impl.get();
      calls_[b] = calls;
      registry.add(std::move(impl));
    }
  }
  FakeBackend& fake(Backend b) { return *fakes_.at(b); }
  const FakeCalls& calls(Backend b) const { return *calls_.at(b); }
  int total_runs() const {
    int n = 0;
    for (const auto& c : calls_)
      n += c.second->runs();
    return n;
  }

  Registry registry;

private:
  std::map<Backend, FakeBackend*> fakes_; // owned by registry
  std::map<Backend, std::shared_ptr<FakeCalls>> calls_;
};

// Calls f, checks it throws kattn::Unsupported and returns the message.
template <class F>
std::string unsupported_message(F&& f) {
  std::string msg;
  bool unsupported = false;
  try {
    f();
  } catch (const Unsupported& e) {
    unsupported = true;
    msg = e.what();
  } catch (const std::exception& e) {
    msg = std::string("other exception: ") + e.what();
  }
  INFO("message: " << msg);
  CHECK(unsupported);
  return msg;
}

} // namespace kattn::test
