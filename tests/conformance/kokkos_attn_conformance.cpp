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
#include "conformance/device_copy.hpp"
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

// The table, the reasons, the totals and the report files; the exit status.
int report(const CliOptions& cli, const RunInfo& info, const std::vector<Result>& results,
           std::ostream* tsv = nullptr) {
  std::int64_t failures = 0;
  for (const Result& r : results)
    failures += r.status == Status::fail;
  write_table(std::cout, info, results);
  std::map<std::string, std::map<std::string, int>> reasons; // backend -> reason -> count
  for (const Result& r : results)
    if (r.status == Status::unsupported || r.status == Status::skipped)
      ++reasons[r.backend][std::string(to_string(r.status)) + ": " + r.reason];
  for (const auto& [backend, m] : reasons)
    for (const auto& [why, n] : m)
      std::cout << "  [" << backend << "] " << n << " x " << why << "\n";
  if (info.uncounted > 0) {
    std::cout << "\n"
              << info.uncounted
              << " random cases drawn but refused by every backend (--supported-only: not run, "
                 "not counted):\n";
    for (const auto& [backend, m] : info.uncounted_reasons)
      for (const auto& [why, n] : m)
        std::cout << "  [" << backend << "] " << n << " x " << why << "\n";
  }
  std::cout << "\n"
            << info.cases << " cases, " << results.size() << " results on " << info.backends.size()
            << " backends, " << failures << " failures, " << info.seconds << " s\n";
  write_file(cli.json_path, [&](std::ostream& os) { write_json(os, info, results); });
  write_file(cli.junit_path, [&](std::ostream& os) { write_junit(os, info, results); });
  write_file(cli.summary_path, [&](std::ostream& os) { write_summary_json(os, info, results); });
  if (tsv) {
    write_tsv_info(*tsv, info);
    tsv->flush();
    if (!*tsv)
      throw std::runtime_error("could not write " + cli.tsv_path);
    std::cout << "wrote " << cli.tsv_path << "\n";
  }
  return failures == 0 ? 0 : 1;
}

int merge(const CliOptions& cli, const std::string& command) {
  RunInfo info;
  info.command = command;
  info.shards = static_cast<std::int64_t>(cli.merge.size());
  std::vector<Result> results;
  for (const std::string& path : cli.merge) {
    std::ifstream is(path);
    if (!is)
      throw std::runtime_error("--merge: cannot read " + path);
    read_tsv(is, info, results);
  }
  std::cout << "merged " << cli.merge.size() << " shard reports\n";
  return report(cli, info, results);
}

int run(const CliOptions& cli, const std::string& command) {
  if (!cli.merge.empty())
    return merge(cli, command);
  const std::vector<BackendVerdict> built = built_backends();
  RunInfo info;
  info.seed = cli.seed;
  info.mix = cli.mix;
  info.command = command;
  info.shards = cli.shards;
#ifdef KOKKOSATTN_CONFORMANCE_CUDA
  if (cuda_device_present()) {
    info.device = cuda_device_name();
    std::cout << "GPU backends run on device copies: " << info.device << "\n";
  }
#endif
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
  if (!cli.single && cli.shard == 0)
    for (Case& c : regression_cases())
      if (selected(c, cli.filter))
        regressions.push_back(std::move(c));
  const auto mine = [&](std::int64_t i) { return i % cli.shards == cli.shard; };
  if (cli.list) {
    for (const Case& c : regressions)
      std::cout << c.name << ": " << c.description << "\n";
    for (std::int64_t i = cli.first_case; i < cli.first_case + cli.cases; ++i) {
      const Case c = random_case(cli.seed, i, cli.mix);
      if (mine(i) && selected(c, cli.filter))
        std::cout << c.name << ": " << c.description << "\n";
    }
    return 0;
  }

  // Host memory, Kokkos::DefaultHostExecutionSpace for Kokkos backends; the runner stages GPU
  // backends' problems on the device itself.
  const ExecContext x{};
  std::ofstream tsv;
  if (!cli.tsv_path.empty()) {
    const std::filesystem::path tp(cli.tsv_path);
    if (tp.has_parent_path())
      std::filesystem::create_directories(tp.parent_path());
    tsv.open(tp);
    if (!tsv)
      throw std::runtime_error("could not write " + cli.tsv_path);
  }
  std::vector<Result> results;
  std::int64_t failures = 0;
  const auto t0 = std::chrono::steady_clock::now();
  const auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  // Returns whether the case was counted.
  auto run_and_report = [&](const Case& c, bool precheck) {
    std::vector<Result> rs = run_case(c, backends, x, precheck);
    if (precheck && std::all_of(rs.begin(), rs.end(),
                                [](const Result& r) { return r.status == Status::unsupported; })) {
      ++info.uncounted;
      for (const Result& r : rs)
        ++info.uncounted_reasons[r.backend][r.reason];
      return false;
    }
    ++info.cases;
    for (Result& r : rs) {
      if (r.status == Status::fail) {
        ++failures;
        std::cout << "FAIL [" << r.backend << "] " << r.case_name << " (seed " << cli.seed
                  << "): " << r.reason << "\n  case: " << r.description
                  << "\n  reproduce: " << reproduce_command(r, info) << "\n";
      } else if (cli.verbose) {
        std::cout << to_string(r.status) << " [" << r.backend << "] " << r.case_name << ": "
                  << r.description << (r.reason.empty() ? "" : " -- " + r.reason) << "\n";
      }
      if (tsv.is_open())
        write_tsv_result(tsv, r);
      results.push_back(std::move(r));
    }
    if (tsv.is_open())
      tsv.flush(); // a shard that dies later still leaves this case's results
    return true;
  };
  std::cout << "regression list: " << regressions.size() << " cases\n";
  for (const Case& c : regressions)
    run_and_report(c, false);
  const double random_start = elapsed();
  // Without --supported-only, --cases is the index range (split among shards); with it, the
  // number of counted cases (this shard's share), drawing at most 100 x as many indices.
  const bool counting = cli.supported_only && !cli.single;
  const std::int64_t target =
      counting ? (cli.cases + cli.shards - 1 - cli.shard) / cli.shards : cli.cases;
  const std::int64_t last_index = cli.first_case + (counting ? 100 * cli.cases + 1000 : cli.cases);
  std::cout << "random matrix: seed " << cli.seed << ", mix " << to_string(cli.mix) << ", "
            << (counting ? std::to_string(target) + " cases run (supported-only) from index " +
                               std::to_string(cli.first_case)
                         : "cases " + std::to_string(cli.first_case) + ".." +
                               std::to_string(cli.first_case + cli.cases - 1))
            << (cli.shards > 1
                    ? ", shard " + std::to_string(cli.shard) + "/" + std::to_string(cli.shards)
                    : std::string())
            << (cli.time_budget > 0
                    ? ", time budget " + std::to_string(static_cast<int>(cli.time_budget)) + " s"
                    : std::string())
            << "\n";
  std::int64_t counted = 0;
  for (std::int64_t i = cli.first_case; i < last_index && (!counting || counted < target); ++i) {
    if (!mine(i))
      continue;
    if (cli.time_budget > 0 && elapsed() - random_start > cli.time_budget) {
      info.stopped_early = "time budget of " + std::to_string(cli.time_budget) +
                           " s reached before random case " + std::to_string(i);
      std::cout << "stopped: " << info.stopped_early << "\n";
      break;
    }
    const Case c = random_case(cli.seed, i, cli.mix);
    if (!selected(c, cli.filter))
      continue;
    if (!run_and_report(c, counting))
      continue;
    ++counted;
    if (counted % 250 == 0)
      std::cout << "  ... " << counted << " random cases (index " << i << "), " << failures
                << " failures, " << static_cast<int>(elapsed()) << " s\n"
                << std::flush;
  }
  info.seconds = elapsed();
  return report(cli, info, results, tsv.is_open() ? &tsv : nullptr);
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
    std::string command = "kokkos-attn-conformance";
    for (int i = 1; i < argc; ++i)
      command += std::string(" ") + argv[i];
    return run(*cli, command);
  } catch (const std::exception& e) {
    std::cerr << "kokkos-attn-conformance: " << e.what() << "\n";
    return 2;
  }
}
