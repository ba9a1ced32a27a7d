// codelab_demo: the seed codelab's experiment on every backend this machine has, in the
// codelab's order (docs/demo.md): inputs, naive vs fused, forcing each backend, causal masking,
// timings, sequence and batch sweeps, MHA/GQA/MQA, FP8, memory, decode. Prints aligned tables and
// writes <out>/results.json (docs/benchmarks.md's schema plus the tables) and
// <out>/results.csv; scripts/report/make_report.py turns those into plots and index.html.
// Exits 1 when a backend's output is not close to the reference.
#include <KokkosAttn.hpp>

#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "config.hpp"
#include "demo.hpp"
#include "env_info.hpp"
#include "memory_child.hpp"
#include "terminal.hpp"

namespace {

void make_dir(const std::string& path) {
  std::string partial;
  for (std::size_t i = 0; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') {
      if (!partial.empty())
        mkdir(partial.c_str(), 0755); // an existing directory is fine
    }
    if (i < path.size())
      partial += path[i];
  }
  struct stat st{};
  if (stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw std::runtime_error("cannot create the report directory " + path);
}

bool wanted(const codelab::Config& cfg, const codelab::Impl& impl) {
  if (cfg.backends.empty() || impl.backend == kattn::Backend::reference)
    return true;
  for (const std::string& name : cfg.backends)
    if (name == impl.name())
      return true;
  return false;
}

} // namespace

int main(int argc, char* argv[]) {
  if (codelab::is_memory_child(argc, argv))
    return codelab::memory_child_main(argc, argv);
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
      std::printf("%s", codelab::usage().c_str());
      return 0;
    }
  std::setvbuf(stdout, nullptr, _IOLBF, 0); // tables appear as they are made, also in a pipe
  codelab::Demo d;
  try {
    d.cfg = codelab::parse_args(argc, argv);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "codelab_demo: %s\n%s", e.what(), codelab::usage().c_str());
    return 2;
  }
  int kokkos_argc = 1; // our options are not Kokkos's
  Kokkos::ScopeGuard guard(kokkos_argc, argv);
  const auto start = std::chrono::steady_clock::now();
  try {
    make_dir(d.cfg.out_dir);
    codelab::describe_environment(d.report);
    for (const codelab::Impl& impl : codelab::available_impls())
      if (wanted(d.cfg, impl))
        d.impls.push_back(impl);
    std::string gpu = "no GPU";
    for (const auto& [k, v] : d.report.env)
      if (k == "gpu")
        gpu = v;
    std::printf("kokkos-attention codelab demo (%s): %s, %s threads; GPU: %s\n",
                d.report.run_id.c_str(), Kokkos::DefaultHostExecutionSpace::name(),
                std::to_string(Kokkos::DefaultHostExecutionSpace().concurrency()).c_str(),
                gpu.c_str());
    if (d.cfg.quick)
      std::printf("--quick: tiny sweeps\n");

    codelab::step_inputs(d);
    codelab::step_accuracy(d);
    codelab::step_forcing(d);
    codelab::step_causal(d);
    codelab::step_default(d);
    codelab::step_sweeps(d);
    codelab::step_heads(d);
    codelab::step_fp8(d);
    codelab::step_memory(d);
    codelab::step_decode(d);
    if (d.cfg.full)
      codelab::step_flash(d);

    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    d.report.add_env("loadavg_after", codelab::load_average());
    d.report.add_env("demo_seconds", codelab::format("%.1f", seconds));
    d.report.add_env("demo_mode", d.cfg.full ? "full" : d.cfg.quick ? "quick" : "default");
    d.report.add_env("timing", "median of up to " + std::to_string(d.cfg.policy.repeats) +
                                   " repeats after " + std::to_string(d.cfg.policy.warmups) +
                                   " warm-up (fewer past " +
                                   codelab::format("%g", d.cfg.policy.budget_s) + " s per cell)");
    d.report.write_json(d.cfg.out_dir + "/results.json");
    d.report.write_csv(d.cfg.out_dir + "/results.csv");
    for (const auto& [id, line] : d.report.messages)
      std::printf("\n%s\n", line.c_str());
    std::printf("\nwrote %s/results.json and %s/results.csv in %.1f s\n", d.cfg.out_dir.c_str(),
                d.cfg.out_dir.c_str(), seconds);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "codelab_demo: %s\n", e.what());
    return 2;
  }
  if (!d.all_close)
    std::printf("FAILED: a backend's output is not close to the reference\n");
  return d.all_close ? 0 : 1;
}
