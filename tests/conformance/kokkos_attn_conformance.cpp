// kokkos-attn-conformance: proves that every backend this build has computes the same attention
// as the reference. Regression list first, then a seeded random matrix; see --help.
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <stdexcept>

#include "conformance/cli.hpp"
#include "conformance/conformance_case.hpp"
#include "conformance/reporters.hpp"
#include "conformance/runner.hpp"
#include "kokkosattn/dispatch.hpp"

using namespace kattn;
using namespace kattn::conformance;

namespace {

bool selected(const Case& c, const std::string& filter) {
  if (filter.empty())
    return true;
  if (c.name.find(filter) != std::string::npos || c.description.find(filter) != std::string::npos)
    return true;
  for (const std::string& f : c.features)
    if (f.find(filter) != std::string::npos)
      return true;
  return false;
}

// The backends built into this library, from explain() on a small valid problem.
std::vector<BackendVerdict> built_backends() {
  test::Attn probe(test::Spec{});
  std::vector<BackendVerdict> v = explain(default_registry(), probe.forward_problem(), {});
  std::cout << "backends (explain() on a small f32 problem):\n" << format_explain(v);
  std::vector<BackendVerdict> built;
  for (BackendVerdict& b : v)
    if (b.built)
      built.push_back(std::move(b));
  return built;
}

void write_file(const std::string& path, const std::function<void(std::ostream&)>& f) {
  if (path.empty())
    return;
  const std::filesystem::path p(path);
  if (p.has_parent_path())
    std::filesystem::create_directories(p.parent_path());
  std::ofstream os(p);
  f(os);
  if (!os)
    throw std::runtime_error("could not write " + path);
  std::cout << "wrote " << path << "\n";
}

int run(const CliOptions& cli) {
  const std::vector<BackendVerdict> built = built_backends();
  RunInfo info;
  info.seed = cli.seed;
  std::vector<Backend> backends;
  for (const BackendVerdict& b : built) {
    const std::string name(to_string(b.backend));
    if (!cli.backends.empty() &&
        std::find(cli.backends.begin(), cli.backends.end(), name) == cli.backends.end())
      continue;
    backends.push_back(b.backend);
    info.backends.push_back(name);
    info.backend_descriptions.push_back(b.description);
  }
  for (const std::string& want : cli.backends)
    if (std::find(info.backends.begin(), info.backends.end(), want) == info.backends.end()) {
      std::cerr << "kokkos-attn-conformance: backend \"" << want
                << "\" is not built into this library (see the table above)\n";
      return 2;
    }

  std::vector<Case> regressions;
  if (!cli.single)
    for (Case& c : regression_cases())
      if (selected(c, cli.filter))
        regressions.push_back(std::move(c));
  if (cli.list) {
    for (const Case& c : regressions)
      std::cout << c.name << ": " << c.description << "\n";
    for (std::int64_t i = cli.first_case; i < cli.first_case + cli.cases; ++i) {
      const Case c = random_case(cli.seed, i);
      if (selected(c, cli.filter))
        std::cout << c.name << ": " << c.description << "\n";
    }
    return 0;
  }

  const ExecContext x{}; // host memory, Kokkos::DefaultHostExecutionSpace for Kokkos backends
  std::vector<Result> results;
  std::int64_t failures = 0;
  const auto t0 = std::chrono::steady_clock::now();
  const auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  auto run_and_report = [&](const Case& c) {
    ++info.cases;
    for (Result& r : run_case(c, backends, x)) {
      if (r.status == Status::fail) {
        ++failures;
        std::cout << "FAIL [" << r.backend << "] " << r.case_name << " (seed " << cli.seed
                  << "): " << r.reason << "\n  case: " << r.description
                  << "\n  reproduce: " << reproduce_command(r, cli.seed) << "\n";
      } else if (cli.verbose) {
        std::cout << to_string(r.status) << " [" << r.backend << "] " << r.case_name << ": "
                  << r.description << (r.reason.empty() ? "" : " -- " + r.reason) << "\n";
      }
      results.push_back(std::move(r));
    }
  };
  std::cout << "regression list: " << regressions.size() << " cases\n";
  for (const Case& c : regressions)
    run_and_report(c);
  const double random_start = elapsed();
  std::cout << "random matrix: seed " << cli.seed << ", cases " << cli.first_case << ".."
            << cli.first_case + cli.cases - 1
            << (cli.time_budget > 0
                    ? ", time budget " + std::to_string(static_cast<int>(cli.time_budget)) + " s"
                    : std::string())
            << "\n";
  for (std::int64_t i = cli.first_case; i < cli.first_case + cli.cases; ++i) {
    if (cli.time_budget > 0 && elapsed() - random_start > cli.time_budget) {
      info.stopped_early = "time budget of " + std::to_string(cli.time_budget) +
                           " s reached after random case " + std::to_string(i - 1);
      std::cout << "stopped: " << info.stopped_early << "\n";
      break;
    }
    const Case c = random_case(cli.seed, i);
    if (!selected(c, cli.filter))
      continue;
    run_and_report(c);
    if ((i - cli.first_case + 1) % 250 == 0)
      std::cout << "  ... " << i - cli.first_case + 1 << " random cases, " << failures
                << " failures, " << static_cast<int>(elapsed()) << " s\n"
                << std::flush;
  }
  info.seconds = elapsed();

  write_table(std::cout, info, results);
  std::map<std::string, std::map<std::string, int>> reasons; // backend -> reason -> count
  for (const Result& r : results)
    if (r.status == Status::unsupported || r.status == Status::skipped)
      ++reasons[r.backend][std::string(to_string(r.status)) + ": " + r.reason];
  for (const auto& [backend, m] : reasons)
    for (const auto& [why, n] : m)
      std::cout << "  [" << backend << "] " << n << " x " << why << "\n";
  std::cout << "\n"
            << info.cases << " cases, " << results.size() << " results on " << backends.size()
            << " backends, " << failures << " failures, " << info.seconds << " s\n";
  write_file(cli.json_path, [&](std::ostream& os) { write_json(os, info, results); });
  write_file(cli.junit_path, [&](std::ostream& os) { write_junit(os, info, results); });
  return failures == 0 ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  std::optional<CliOptions> cli;
  try {
    cli = parse_cli(argc, argv);
  } catch (const std::invalid_argument& e) {
    std::cerr << "kokkos-attn-conformance: " << e.what() << "\n";
    return 2;
  }
  if (!cli)
    return 0;
  try {
    return run(*cli);
  } catch (const std::exception& e) {
    std::cerr << "kokkos-attn-conformance: " << e.what() << "\n";
    return 2;
  }
}
