// Test helper: runs the cudnn backend on device copies of a host problem (Attn) and returns the
// outputs in logical order, for tests that compare runs with each other rather than with the
// reference (dropout statistics, forward/backward consistency).
#pragma once

#include <cmath>
#include <vector>

#include "gpu/cudnn_case.hpp"

namespace kattn::test {

struct DeviceRun {
  std::vector<double> out, lse, dq, dk, dv;
};

// Forward (and, when `backward_options` is given, the backward from that forward's out and LSE,
// with those options) on fresh device copies; outputs NaN-poisoned before each run.
inline DeviceRun run_on_device(Attn& a, const Options& forward_options,
                               const Options* backward_options = nullptr) {
  poison(a.out.view);
  poison(a.lse.view());
  poison(a.dq.view);
  poison(a.dk.view);
  poison(a.dv.view);
  DeviceCopy q(a.q.view), k(a.k.view), v(a.v.view), out(a.out.view), lse(a.lse.view()),
      dout(a.dout.view), dq(a.dq.view), dk(a.dk.view), dv(a.dv.view);
  BackwardProblem b = a.backward_problem(false);
  b.forward.q = q.view(), b.forward.k = k.view(), b.forward.v = v.view();
  b.forward.out = out.view();
  b.forward.extras.lse = lse.view();
  b.forward.options = forward_options;
  b.forward.options.backend = Backend::cudnn;
  b.dout = dout.view(), b.dq = dq.view(), b.dk = dk.view(), b.dv = dv.view();
  ExecContext x;
  x.device = Device::cuda;
  run_forward(default_registry(), b.forward, x);
  if (backward_options) {
    b.forward.options = *backward_options;
    b.forward.options.backend = Backend::cudnn;
    run_backward(default_registry(), b, x);
  }
  KATTN_CUDA_REQUIRE(cudaDeviceSynchronize());
  out.download(), lse.download(), dq.download(), dk.download(), dv.download();
  DeviceRun r;
  r.out = read_logical(a.out.view);
  r.lse = read_logical(a.lse.view());
  if (backward_options) {
    r.dq = read_logical(a.dq.view);
    r.dk = read_logical(a.dk.view);
    r.dv = read_logical(a.dv.view);
  }
  return r;
}

// Softmax probabilities of a batched problem without masks, in f64 from the stored (rounded)
// inputs: P[((b*N + n)*T + i)*S + j].
inline std::vector<double> probabilities(const Attn& a) {
  const Spec& s = a.spec;
  const std::vector<double> q = read_logical(a.q.view), k = read_logical(a.k.view);
  const double scale = s.opt.scale ? *s.opt.scale : 1.0 / std::sqrt(static_cast<double>(s.H));
  std::vector<double> p(static_cast<std::size_t>(s.B * s.N * s.T * s.S));
  const std::int64_t group = s.N / s.K;
  for (std::int64_t b = 0; b < s.B; ++b)
    for (std::int64_t n = 0; n < s.N; ++n)
      for (std::int64_t i = 0; i < s.T; ++i) {
        double* row = &p[static_cast<std::size_t>(((b * s.N + n) * s.T + i) * s.S)];
        double m = -INFINITY;
        for (std::int64_t j = 0; j < s.S; ++j) {
          double dot = 0;
          for (std::int64_t h = 0; h < s.H; ++h)
            dot += q[static_cast<std::size_t>(((b * s.T + i) * s.N + n) * s.H + h)] *
                   k[static_cast<std::size_t>(((b * s.S + j) * s.K + n / group) * s.H + h)];
          row[j] = scale * dot;
          m = std::max(m, row[j]);
        }
        double sum = 0;
        for (std::int64_t j = 0; j < s.S; ++j)
          sum += row[j] = std::exp(row[j] - m);
        for (std::int64_t j = 0; j < s.S; ++j)
          row[j] /= sum;
      }
  return p;
}

} // namespace kattn::test
