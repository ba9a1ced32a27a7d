#include "memory_child.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "device.hpp"
#include "host_problem.hpp"

extern char** environ;

namespace codelab {
namespace {

constexpr const char* child_flag = "--memory-child";

// This process's peak resident set (not getrusage's ru_maxrss: Linux carries that across exec).
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

std::optional<kattn::DType> parse_dtype(const std::string& s) {
  for (kattn::DType t : {kattn::DType::f32, kattn::DType::bf16, kattn::DType::f16})
    if (kattn::to_string(t) == s)
      return t;
  return std::nullopt;
}

} // namespace

PeakMemory measure_peak_memory(const std::string& impl_name, const Shape& s) {
  std::vector<std::string> args = {
      "/proc/self/exe",    child_flag,          impl_name,
      std::to_string(s.B), std::to_string(s.T), std::to_string(s.N),
      std::to_string(s.K), std::to_string(s.H), std::string(kattn::to_string(s.dtype)),
      s.causal ? "1" : "0"};
  std::vector<char*> argv;
  for (std::string& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  PeakMemory r;
  int fds[2];
  if (pipe(fds) != 0) {
    r.error = "pipe() failed";
    return r;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  // The child reports errors on stdout; its stderr would repeat Kokkos's start-up warnings.
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, args[0].c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  std::string out;
  char buf[512];
  for (ssize_t got; spawned == 0 && (got = read(fds[0], buf, sizeof buf)) > 0;)
    out.append(buf, std::size_t(got));
  close(fds[0]);
  if (spawned != 0) {
    r.error = "could not start the measuring child process";
    return r;
  }
  int status = 0;
  const bool ok = waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  if (out.rfind("error ", 0) == 0) {
    r.error = out.substr(6);
    while (!r.error.empty() && r.error.back() == '\n')
      r.error.pop_back();
  } else if (!ok || std::sscanf(out.c_str(), "%lf %lf", &r.host_bytes, &r.device_bytes) != 2) {
    r.error = "the measuring child process failed (status " + std::to_string(status) + ")";
  }
  return r;
}

bool is_memory_child(int argc, char* argv[]) {
  return argc == 10 && std::strcmp(argv[1], child_flag) == 0;
}

int memory_child_main(int argc, char* argv[]) {
  (void)argc;
  int kokkos_argc = 1; // Kokkos must not see the child's own arguments
  Kokkos::ScopeGuard guard(kokkos_argc, argv);
  const std::string what = argv[2];
  Shape s;
  s.B = std::atoi(argv[3]);
  s.T = s.S = std::atoi(argv[4]);
  s.N = std::atoi(argv[5]);
  s.K = std::atoi(argv[6]);
  s.H = std::atoi(argv[7]);
  const auto dtype = parse_dtype(argv[8]);
  s.causal = std::atoi(argv[9]) != 0;
  if (!dtype) {
    std::printf("error unknown dtype %s\n", argv[8]);
    return 2;
  }
  s.dtype = *dtype;
  try {
    Impl impl{kattn::Backend::reference, false};
    bool run = what != "inputs-only";
    if (run) {
      bool found = false;
      for (const Impl& i : all_impls())
        if (i.name() == what) {
          impl = i;
          found = true;
        }
      if (!found) {
        std::printf("error unknown backend %s\n", what.c_str());
        return 2;
      }
    }
    double device_before = 0;
    if (impl.gpu) {
      device::synchronize(); // creates the context: its memory is not the backend's
      device_before = double(device::used_bytes());
    }
    HostProblem host(s);
    Placed placed(host, impl);
    if (run) {
      placed.run_forward();
      placed.wait();
    }
    const double device_after = impl.gpu ? double(device::used_bytes()) : 0;
    std::printf("%.0f %.0f\n", vm_hwm_bytes(), device_after - device_before);
  } catch (const std::exception& e) {
    std::printf("error %s\n", e.what());
    return 3;
  }
  return 0;
}

} // namespace codelab
