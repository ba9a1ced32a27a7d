#include "runner.hpp"

#include <algorithm>
#include <limits>

#ifdef KOKKOS_ENABLE_CUDA
#include "frontend_views.hpp"
#endif

namespace codelab {
namespace {

using HostExec = Kokkos::DefaultHostExecutionSpace;

// Against a Kokkos with CUDA every backend but the reference runs on the GPU, through the front
// end on Kokkos::Cuda Views (frontend_views.hpp), so naive vs fused is compared on the GPU;
// otherwise the GPU backends take raw device copies and the Kokkos ones run on the host.
bool is_gpu_backend(kattn::Backend b) {
#ifdef KOKKOS_ENABLE_CUDA
  return b != kattn::Backend::reference;
#else
  return b == kattn::Backend::cudnn || b == kattn::Backend::cuda;
#endif
}

#ifdef KOKKOS_ENABLE_CUDA
constexpr kattn::LayoutCopy copies = kattn::LayoutCopy::available;
#else
constexpr kattn::LayoutCopy copies = kattn::LayoutCopy::unavailable;
#endif

} // namespace

std::vector<Impl> all_impls() {
  std::vector<Impl> v;
  for (kattn::Backend b : kattn::preference_order)
    v.push_back({b, is_gpu_backend(b)});
  return v;
}

bool runnable_here(const Impl& impl, std::string* why_not) {
  if (impl.backend == kattn::Backend::hip) {
    if (why_not)
      *why_not = "HIP backend: not built (no AMD GPU support in this build)";
    return false;
  }
  if (kattn::default_registry().find(impl.backend) == nullptr) {
    if (why_not)
      *why_not = "not built into this library";
    return false;
  }
  return !impl.gpu || device::available(why_not);
}

std::vector<Impl> available_impls() {
  std::vector<Impl> v;
  for (const Impl& impl : all_impls())
    if (runnable_here(impl))
      v.push_back(impl);
  // reference first (the ground truth), then the rest in preference order reversed: the
  // codelab's "naive" before the fused kernels.
  std::reverse(v.begin(), v.end());
  return v;
}

Placed::Placed(HostProblem& host, const Impl& impl) : host_(host), impl_(impl) {
  fwd_.q = place(host.q);
  fwd_.k = place(host.k);
  fwd_.v = place(host.v);
  fwd_.out = place(host.out);
  fwd_.options.causal = host.shape.causal;
  fwd_.options.backend = impl.backend;
  if (host.lse.defined()) {
    fwd_.extras.lse = place(host.lse);
    bwd_.forward = fwd_;
    bwd_.dout = place(host.dout);
    bwd_.dq = place(host.dq);
    bwd_.dk = place(host.dk);
    bwd_.dv = place(host.dv);
  }
}

Placed::~Placed() = default;

kattn::Tensor Placed::place(const HostTensor& t) {
  if (!impl_.gpu)
    return t.tensor();
  mirrors_.push_back(std::make_unique<device::Mirror>(t.tensor()));
  return mirrors_.back()->view();
}

kattn::ForwardProblem Placed::forward() const {
  return fwd_;
}

kattn::BackwardProblem Placed::backward() const {
  return bwd_;
}

kattn::ExecContext Placed::context() const {
#ifdef KOKKOS_ENABLE_CUDA
  if (impl_.gpu)
    return KokkosAttn::make_exec_context(device_exec_);
#endif
  if (impl_.gpu)
    return kattn::ExecContext{kattn::Device::cuda, device::stream(), {}, nullptr};
  return KokkosAttn::make_exec_context(exec_);
}

bool Placed::supported(std::string* why_not, bool backward) const {
  try {
    const auto verdicts = backward
                              ? kattn::explain(kattn::default_registry(), bwd_, context(), copies)
                              : kattn::explain(kattn::default_registry(), fwd_, context(), copies);
    for (const auto& v : verdicts)
      if (v.backend == impl_.backend) {
        if (!v.supported && why_not)
          *why_not = v.reason;
        return v.supported;
      }
    if (why_not)
      *why_not = "not in explain()'s list";
    return false;
  } catch (const kattn::Error& e) { // the problem itself is invalid (e.g. a reserved dtype)
    if (why_not)
      *why_not = e.what();
    return false;
  }
}

void Placed::run_forward() {
#ifdef KOKKOS_ENABLE_CUDA
  if (impl_.gpu)
    return views::forward(device_exec_, fwd_);
#endif
  kattn::run_forward(kattn::default_registry(), fwd_, context());
}

void Placed::run_backward() {
#ifdef KOKKOS_ENABLE_CUDA
  if (impl_.gpu) {
    views::forward(device_exec_, bwd_.forward);
    return views::backward(device_exec_, bwd_);
  }
#endif
  kattn::run_forward(kattn::default_registry(), bwd_.forward, context());
  kattn::run_backward(kattn::default_registry(), bwd_, context());
}

void Placed::wait() {
  if (impl_.gpu)
    device::synchronize();
  else
    exec_.fence();
}

std::vector<float> Placed::output() {
  host_.out.fill(std::numeric_limits<float>::quiet_NaN());
  if (impl_.gpu)
    mirrors_[3]->upload(); // out is the fourth tensor placed (q, k, v, out)
  run_forward();
  wait();
  if (impl_.gpu)
    mirrors_[3]->download();
  return host_.out.to_float();
}

Timing time_it(Placed& placed, bool gpu, bool with_backward, const TimePolicy& policy) {
  const auto once = [&] {
    if (with_backward)
      placed.run_backward();
    else
      placed.run_forward();
  };
  for (int i = 0; i < policy.warmups; ++i)
    once();
  placed.wait();
  std::vector<double> ms;
  double spent = 0;
  while (int(ms.size()) < std::max(1, policy.repeats) && (ms.empty() || spent < policy.budget_s)) {
    double t = 0;
    if (gpu) {
      t = device::time_ms(once);
    } else {
      Kokkos::Timer timer;
      once();
      placed.wait();
      t = timer.seconds() * 1e3;
    }
    ms.push_back(t);
    spent += t * 1e-3;
  }
  std::sort(ms.begin(), ms.end());
  // Median; for an even count the lower middle (a measured value, not an average).
  return {ms[(ms.size() - 1) / 2], int(ms.size())};
}

} // namespace codelab
