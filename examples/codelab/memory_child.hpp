// Peak memory of one forward pass, each measurement in a fresh process (this program
// re-executed), so that no other allocation or cached page of the parent counts.
#pragma once

#include <optional>
#include <string>

#include "runner.hpp"
#include "shape.hpp"

namespace codelab {

struct PeakMemory {
  double host_bytes = 0;   // the child's VmHWM: runtime + inputs + the backend's host memory
  double device_bytes = 0; // GPU backends: device memory in use after the call minus before
                           // the inputs were allocated (cudaMemGetInfo)
  std::string error;       // why there is no figure
};

// impl_name: a backend's name, or "inputs-only" (allocates the problem, runs nothing).
PeakMemory measure_peak_memory(const std::string& impl_name, const Shape& shape);

// The child's side: `codelab_demo --memory-child <impl> <B> <T> <N> <K> <H> <dtype> <causal>`.
bool is_memory_child(int argc, char* argv[]);
int memory_child_main(int argc, char* argv[]);

} // namespace codelab
