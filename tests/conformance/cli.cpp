#include "conformance/cli.hpp"

#include <iostream>
#include <stdexcept>
#include <string_view>

namespace kattn::conformance {

const char* const usage_text =
    R"(kokkos-attn-conformance: every backend of this build against the reference.

Runs the fixed regression list, then a seeded randomized matrix of attention problems on each
backend, judging out / lse / gradients with max|out-ref| <= 2*max|baseline-ref| + atol_floor.

  --seed N           seed of the random matrix (default 1)
  --cases N          random cases (default 4000)
  --mix all|gpu      what the random matrix draws: every feature (all, the default), or the
                     same moved into what the GPU kernel backends serve (gpu: bf16/f16, head
                     dims 64/128/256, longer sequences; no mask, ALiBi or dropout)
  --case I           start at random case I and skip the regression list (reproduce one case:
                     --case I --cases 1)
  --time-budget S    stop drawing random cases after S seconds (default: no limit)
  --backend NAME     only this backend (repeat or comma-separate for several)
  --filter TEXT      only cases whose name, description or features contain TEXT
  --json PATH        JSON report (default report/conformance.json; "" = none)
  --junit PATH       JUnit XML report (default report/conformance.junit.xml; "" = none)
  --summary-json P   compact summary JSON: counts per backend and feature, unsupported
                     reasons, failures with their reproduce commands (default: none)
  --supported-only   random cases that every selected backend refuses (explain(), asked
                     before the reference is computed) are drawn but not counted or run;
                     --cases then counts the cases run, and the refusals are tallied apart
  --shard K/N        take only random cases whose index % N == K (the regression list runs
                     in shard 0): N processes share one matrix; combine them with --merge
  --tsv PATH         one line per result (input of --merge; default: none)
  --merge F...       report (table, --json, --junit, --summary-json) on --tsv files of the
                     shards of one run instead of running; checks' numbers are not kept
  --list             print the selected cases and exit
  --verbose          one line per result
  --help             this text

Exit status: 0 all judged results passed, 1 some failed, 2 bad usage.
)";

namespace {
std::int64_t to_int(std::string_view flag, const std::string& v) {
  std::size_t used = 0;
  long long x = 0;
  try {
    x = std::stoll(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != v.size() || x < 0)
    throw std::invalid_argument(std::string(flag) + ": expected a non-negative integer, got \"" +
                                v + "\"");
  return x;
}
} // namespace

std::optional<CliOptions> parse_cli(int argc, char** argv) {
  CliOptions o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        throw std::invalid_argument(std::string(a) + ": expected a value");
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      std::cout << usage_text;
      return std::nullopt;
    } else if (a == "--seed") {
      o.seed = static_cast<std::uint64_t>(to_int(a, value()));
    } else if (a == "--cases") {
      o.cases = to_int(a, value());
    } else if (a == "--case") {
      o.first_case = to_int(a, value());
      o.single = true;
    } else if (a == "--mix") {
      const std::string v = i + 1 < argc ? argv[++i] : "";
      if (v != "all" && v != "gpu")
        throw std::invalid_argument("--mix: expected all or gpu, got \"" + v + "\"");
      o.mix = v == "gpu" ? Mix::gpu : Mix::all;
    } else if (a == "--time-budget") {
      const std::string v = value();
      try {
        o.time_budget = std::stod(v);
      } catch (const std::exception&) {
        throw std::invalid_argument("--time-budget: expected seconds, got \"" + v + "\"");
      }
    } else if (a == "--backend") {
      std::string v = value();
      for (std::size_t start = 0; start <= v.size();) {
        const std::size_t comma = std::min(v.find(',', start), v.size());
        if (comma > start)
          o.backends.push_back(v.substr(start, comma - start));
        start = comma + 1;
      }
    } else if (a == "--filter") {
      o.filter = value();
    } else if (a == "--json") {
      o.json_path = value();
    } else if (a == "--junit") {
      o.junit_path = value();
    } else if (a == "--summary-json") {
      o.summary_path = value();
    } else if (a == "--tsv") {
      o.tsv_path = value();
    } else if (a == "--supported-only") {
      o.supported_only = true;
    } else if (a == "--shard") {
      const std::string v = value();
      const std::size_t slash = v.find('/');
      if (slash == std::string::npos)
        throw std::invalid_argument("--shard: expected K/N, got \"" + v + "\"");
      o.shard = to_int(a, v.substr(0, slash));
      o.shards = to_int(a, v.substr(slash + 1));
      if (o.shards < 1 || o.shard >= o.shards)
        throw std::invalid_argument("--shard: expected 0 <= K < N, got \"" + v + "\"");
    } else if (a == "--merge") {
      while (i + 1 < argc && std::string_view(argv[i + 1]).rfind("--", 0) != 0)
        o.merge.emplace_back(argv[++i]);
      if (o.merge.empty())
        throw std::invalid_argument("--merge: expected one or more --tsv files");
    } else if (a == "--list") {
      o.list = true;
    } else if (a == "--verbose" || a == "-v") {
      o.verbose = true;
    } else if (a.rfind("--kokkos", 0) == 0) {
      continue; // Kokkos::initialize's own flags
    } else {
      throw std::invalid_argument("unknown argument \"" + std::string(a) + "\" (see --help)");
    }
  }
  return o;
}

} // namespace kattn::conformance
