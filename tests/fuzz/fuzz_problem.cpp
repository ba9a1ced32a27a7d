// libFuzzer target over the problem descriptor (issue 20; make fuzz, docs/building.md): every
// input is validated, explained and selected; valid small problems on host buffers run on the
// reference and portable backends. It stops on an exception outside kattn::Error, an error
// message that names no argument or backend, a failed call that wrote to any buffer, a
// successful one that wrote to an input, and (through the sanitizers) any memory error or UB.
#include <Kokkos_Core.hpp>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

#include "fuzz_inputs.hpp"
#include "kokkosattn/dispatch.hpp"
#include "kokkosattn/errors.hpp"
#include "kokkosattn/registry.hpp"
#include "kokkosattn/validate.hpp"

namespace {

using namespace kattn;

constexpr std::int64_t kMaxWork = 20000; // B * N * T * S * (H + Hv) of a problem that runs

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "fuzz_problem: %s\n", what.c_str());
  std::abort();
}

bool starts_with(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}

// docs/semantics.md rule errors: an InvalidArgument starts with the argument's name; an
// Unsupported or BackendFailure names the backend.
void check_message(const Error& e) {
  const std::string_view m = e.what();
  if (dynamic_cast<const InvalidArgument*>(&e) != nullptr) {
    for (std::string_view name : {"q:", "k:", "v:", "out:", "dout:", "dq:", "dk:", "dv:", "dbias:",
                                  "dsinks:", "extras.", "options."})
      if (starts_with(m, name))
        return;
    finding("InvalidArgument naming no argument: " + std::string(m));
  }
  if (m.find("backend") == std::string_view::npos)
    finding("error naming no backend: " + std::string(m));
}

// Runs f; true when it returned. Only kattn::Error may escape the library.
template <class F>
bool attempt(F&& f) {
  try {
    f();
    return true;
  } catch (const Error& e) {
    check_message(e);
  } catch (const std::exception& e) {
    finding(std::string("non-kattn exception: ") + e.what());
  } catch (...) {
    finding("non-standard exception");
  }
  return false;
}

template <class P>
void exercise(kattn::fuzz::Inputs& in, P& p) {
  const Registry& r = default_registry();
  const ExecContext x;
  Dims d;
  const bool valid = attempt([&] { d = validate(p); });
  attempt([&] { (void)format_explain(explain(r, p, x)); });
  attempt([&] { (void)format_selection(select(r, p, x)); });
  // (From the validated sizes: a mutated extent may make a drawn small problem large.)
  const double work =
      static_cast<double>(d.B) * static_cast<double>(d.N) * static_cast<double>(d.T) *
      static_cast<double>(d.S) *
      (static_cast<double>(d.H) + static_cast<double>(d.Hv)); // (H may be near 2^63)
  if (!valid || !in.runnable || work > kMaxWork)
    return;
  Options& o = [&]() -> Options& {
    if constexpr (std::is_same_v<P, BackwardProblem>)
      return p.forward.options;
    else
      return p.options;
  }();
  for (Backend b : {Backend::reference, Backend::portable}) {
    o.backend = b;
    const auto before = kattn::fuzz::snapshot(in);
    const bool ran = attempt([&] {
      if constexpr (std::is_same_v<P, BackwardProblem>)
        run_backward(r, p, x);
      else
        run_forward(r, p, x);
    });
    const auto after = kattn::fuzz::snapshot(in);
    for (std::size_t i = 0; i < before.size(); ++i)
      if ((!ran || !in.buffers[i].output) && before[i] != after[i])
        finding(std::string(to_string(b)) + (ran ? " wrote to an input" : " failed and wrote") +
                " (buffer " + std::to_string(i) + ") in\n" + kattn::fuzz::describe(in));
  }
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  Kokkos::initialize(Kokkos::InitializationSettings().set_num_threads(1));
  std::atexit([] { Kokkos::finalize(); });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider fdp(data, size);
  kattn::fuzz::Inputs in;
  kattn::fuzz::draw(fdp, in);
  static const bool show = std::getenv("KOKKOSATTN_FUZZ_DESCRIBE") != nullptr; // (replaying)
  if (show)
    std::fprintf(stderr, "%s", kattn::fuzz::describe(in).c_str());
  if (in.backward)
    exercise(in, in.problem);
  else
    exercise(in, in.forward);
  return 0;
}
