// Where a problem runs, without naming any framework type: the device kind, an optional
// native stream, and (when called through the Kokkos front end) the execution space instance.
#pragma once

#include <string>

namespace kattn {

enum class Device { cpu, cuda, hip };

struct ExecContext {
  Device device = Device::cpu;
  void* stream = nullptr; // cudaStream_t / hipStream_t for GPU devices; nullptr = default
  // Kokkos execution space name as Kokkos prints it ("Serial", "OpenMP", "Cuda", "HIP") and a
  // pointer to the instance; empty/nullptr for raw-memory calls, which Kokkos backends serve
  // on the default instance of a matching space.
  std::string kokkos_space;
  const void* kokkos_instance = nullptr;
};

} // namespace kattn
