#include "env_info.hpp"

#include <KokkosAttn.hpp>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <fstream>
#include <string>

#include "device.hpp"

#ifndef KOKKOSATTN_DEMO_VERSION
#define KOKKOSATTN_DEMO_VERSION "unknown"
#endif

namespace codelab {
namespace {

std::string first_line_with(const char* path, const std::string& prefix) {
  std::ifstream f(path);
  for (std::string line; std::getline(f, line);)
    if (line.rfind(prefix, 0) == 0) {
      const auto colon = line.find(':');
      std::string v = colon == std::string::npos ? line : line.substr(colon + 1);
      while (!v.empty() && v.front() == ' ')
        v.erase(v.begin());
      return v;
    }
  return "unknown";
}

std::string utc_now(const char* fmt) {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, fmt, &tm);
  return buf;
}

} // namespace

std::string load_average() {
  std::ifstream f("/proc/loadavg");
  std::string line;
  std::getline(f, line);
  return line.empty() ? "unknown" : line;
}

void describe_environment(Report& r) {
  char host[256] = "unknown";
  gethostname(host, sizeof host - 1);
  r.run_id = std::string("demo-") + host + "-" + utc_now("%Y%m%dT%H%M%SZ");
  r.add_env("date", utc_now("%Y-%m-%dT%H:%M:%SZ"));
  r.add_env("host", host);
  r.add_env("cpu", first_line_with("/proc/cpuinfo", "model name"));
  r.add_env("cpus", std::to_string(sysconf(_SC_NPROCESSORS_ONLN)));
  const Kokkos::DefaultHostExecutionSpace exec;
  r.add_env("kokkos_host_space", Kokkos::DefaultHostExecutionSpace::name());
  r.add_env("threads", std::to_string(exec.concurrency()));
  r.add_env("kokkos_version", std::to_string(KOKKOS_VERSION_MAJOR) + "." +
                                  std::to_string(KOKKOS_VERSION_MINOR) + "." +
                                  std::to_string(KOKKOS_VERSION_PATCH));
  r.add_env("kokkos_attention_version", KOKKOSATTN_DEMO_VERSION);
#if defined(__clang__)
  r.add_env("compiler", std::string("clang ") + __clang_version__);
#elif defined(__GNUC__)
  r.add_env("compiler", std::string("g++ ") + __VERSION__);
#endif
  for (const char* var : {"OMP_NUM_THREADS", "OMP_PROC_BIND", "OMP_PLACES"})
    if (const char* v = std::getenv(var))
      r.add_env(var, v);
  for (const kattn::BackendImpl* impl : kattn::default_registry().all()) {
    const std::string what = impl->description();
    r.add_env("backend_" + std::string(kattn::to_string(impl->id())),
              what.empty() ? "built" : what);
  }
  std::string why;
  if (device::available(&why)) {
    for (const auto& [k, v] : device::describe())
      r.add_env(k, v);
  } else {
    r.add_env("gpu", "none (" + why + ")");
  }
  r.add_env("loadavg_before", load_average());
}

} // namespace codelab
