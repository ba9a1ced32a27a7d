// Running one backend on one problem: where it runs (CPU backends on host memory through the
// Kokkos host execution space; GPU backends on device copies with a CUDA stream), once or timed.
#pragma once

#include <KokkosAttn.hpp>

#include <memory>
#include <string>
#include <vector>

#include "device.hpp"
#include "host_problem.hpp"

namespace codelab {

struct Impl {
  kattn::Backend backend;
  bool gpu = false; // takes CUDA device memory
  std::string name() const { return std::string(kattn::to_string(backend)); }
};

// Every backend kattn knows (preference order, then reference), whether built or not.
std::vector<Impl> all_impls();
// Built into this library and, for GPU backends, a GPU present; otherwise why not.
bool runnable_here(const Impl& impl, std::string* why_not = nullptr);
// The backends the steps run: runnable_here() ones, reference first.
std::vector<Impl> available_impls();

// A problem placed where `impl` runs (device copies for GPU backends), forced to that backend.
class Placed {
public:
  Placed(HostProblem& host, const Impl& impl);
  Placed(const Placed&) = delete;
  Placed& operator=(const Placed&) = delete;
  ~Placed();

  kattn::ForwardProblem forward() const;
  kattn::BackwardProblem backward() const; // needs a HostProblem made with_backward
  kattn::ExecContext context() const;
  // explain()'s verdict for this backend; false with the reason when it cannot serve it.
  bool supported(std::string* why_not, bool backward = false) const;

  void run_forward();  // enqueue; throws kattn::Error when the backend refuses or fails
  void run_backward(); // forward (for lse) then backward
  void wait();         // fence / synchronise
  // Runs once and returns out as floats (poisoned with NaN first).
  std::vector<float> output();

private:
  kattn::Tensor place(const HostTensor& t);
  HostProblem& host_;
  Impl impl_;
  Kokkos::DefaultHostExecutionSpace exec_; // CPU backends' instance (the context points at it)
#ifdef KOKKOS_ENABLE_CUDA
  // GPU runs' instance, on the demo's stream (device::stream()), which its CUDA events time.
  Kokkos::Cuda device_exec_{static_cast<cudaStream_t>(device::stream())};
#endif
  std::vector<std::unique_ptr<device::Mirror>> mirrors_;
  kattn::ForwardProblem fwd_;
  kattn::BackwardProblem bwd_;
};

struct TimePolicy {
  int warmups = 1;
  int repeats = 5;
  double budget_s = 1.0; // stop repeating once this much time was spent (at least 1 repeat)
};

struct Timing {
  double ms = 0; // median
  int repeats = 0;
};

// Median of repeats after warm-up: host wall time around a fenced call for CPU backends, CUDA
// events on the stream for GPU backends. fwd+bwd when with_backward.
Timing time_it(Placed& placed, bool gpu, bool with_backward, const TimePolicy& policy);

} // namespace codelab
