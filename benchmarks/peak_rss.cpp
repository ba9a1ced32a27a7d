// Peak host memory of one forward pass. Each measurement is a fresh process, so one backend's
// allocations (or the allocator's cached pages) cannot inflate another's figure.
#include "peak_rss.hpp"

#include <benchmark/benchmark.h>
#include <spawn.h>
#include <sys/wait.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "bench_shapes.hpp"

extern char** environ;

namespace kattn_bench {

namespace {

constexpr const char* child_flag = "--rss-child";

struct ChildResult {
  double peak_bytes = -1; // the child's VmHWM
  double forward_ms = -1; // the child's one forward pass (none for `inputs`)
};

// The peak resident set of this process's address space. Not getrusage's ru_maxrss: Linux
// carries that across exec, so a spawned child would report its parent's peak when higher.
double vm_hwm_bytes() {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (!f)
    return -1;
  char line[256];
  double kib = -1;
  while (std::fgets(line, sizeof line, f))
    if (std::strncmp(line, "VmHWM:", 6) == 0)
      kib = std::atof(line + 6);
  std::fclose(f);
  return kib * 1024.0;
}

// Runs this executable as a child; its stdout (a pipe) carries "<peak bytes> <forward ms>".
ChildResult run_child(const std::string& what, int T, bool causal) {
  std::string t = std::to_string(T), c = causal ? "1" : "0";
  std::string exe = "/proc/self/exe", flag = child_flag, w = what;
  char* argv[] = {exe.data(), flag.data(), w.data(), t.data(), c.data(), nullptr};
  int fds[2];
  if (pipe(fds) != 0)
    return {};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  std::string out;
  char buf[256];
  for (ssize_t got; spawned == 0 && (got = read(fds[0], buf, sizeof buf)) > 0;)
    out.append(buf, std::size_t(got));
  close(fds[0]);
  if (spawned != 0)
    return {};
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return {};
  ChildResult r;
  if (std::sscanf(out.c_str(), "%lf %lf", &r.peak_bytes, &r.forward_ms) < 1)
    return {};
  return r;
}

void peak_rss(benchmark::State& state, std::string what) {
  const int T = int(state.range(0));
  const bool causal = state.range(1) != 0;
  ChildResult r;
  for (auto _ : state)
    r = run_child(what, T, causal);
  if (r.peak_bytes < 0) {
    state.SkipWithError("the child process failed");
    return;
  }
  state.counters["peak_bytes"] = r.peak_bytes;
  if (r.forward_ms >= 0)
    state.counters["forward_ms"] = r.forward_ms;
}

} // namespace

void register_peak_rss_benchmarks() {
  for (const char* what : {"inputs", "naive", "portable"})
    benchmark::RegisterBenchmark(std::string("peak_rss/") + what, peak_rss, std::string(what))
        ->Args({4096, 0})
        ->ArgNames({"T", "causal"})
        ->Iterations(1)
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
}

bool is_rss_child(int argc, char* argv[]) {
  return argc == 5 && std::strcmp(argv[1], child_flag) == 0;
}

int rss_child_main(int argc, char* argv[]) {
  const std::string what = argv[2];
  const int T = std::atoi(argv[3]);
  const bool causal = std::atoi(argv[4]) != 0;
  int kokkos_argc = 1; // Kokkos must not see the child's own arguments
  Kokkos::ScopeGuard guard(kokkos_argc, argv);
  (void)argc;
  const Inputs in(T);
  double ms = -1;
  if (what == "naive" || what == "portable") {
    Kokkos::Timer timer;
    run_forward(in, what == "naive" ? kattn::Backend::naive : kattn::Backend::portable, causal);
    ms = timer.seconds() * 1e3;
  } else if (what != "inputs") {
    return 2;
  }
  std::printf("%.0f %.3f\n", vm_hwm_bytes(), ms);
  return 0;
}

} // namespace kattn_bench
