// kokkosattn_bench_gpu: times registered GPU backends (--impl cudnn,cuda) through the public
// dispatch (validate + support check + run, as a user calls it) and writes rows of the results
// schema (docs/performance.md):
//   fa       FlashAttention's sweep: 16k tokens (B = 16384 / T), hidden 2048 (N = 2048 / H),
//            H in {64, 128, 256} (--h), T in 512..16k (--t), causal or not, forward and
//            forward+backward;
//   codelab  B=4 T=128 N=8 H=64, the same four passes;
//   seq      the codelab demo's sequence sweep: B=4 N=8 H=64, T=S in 64..2048, not causal;
//   batch    its batch sweep: T=S=256 N=8 H=64, B in 1..16, not causal;
//   overhead the codelab shape, `--overhead-calls` back-to-back calls timed on the host (sync
//            only at the end) divided by the count: per-call cost when the GPU is not the limit.
// GPU times: CUDA events around each call, median of --repeats after --warmup calls (the
// backends of a shape round robin, one call each per repetition), inputs
// rotating through enough device copies to exceed 3x the L2 (see gpu_sets.hpp). TFLOP/s counts
// 4 B N T S H (halved for causal, x3.5 for forward+backward). A backend that is not built, or
// refuses a shape, gives a row with "error" set instead of a time. --deterministic sets
// options.deterministic on every problem (rows name the impl "<impl>-det"), --tf32
// options.allow_tf32 ("<impl>-tf32"); --dtype sets the
// element type of every tensor (bf16 by default; f32/f64 for the backends that take them);
// --pass fwd (or fwd+bwd) times one pass only.
#include <cuda_runtime_api.h>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "bench_text.hpp"
#include "common/cuda_check.hpp"
#include "gpu_sets.hpp"
#include "kokkosattn/dispatch.hpp"
#include "kokkosattn/errors.hpp"

namespace {

using kattn::cuda_kernels::check_cuda;
using kattn_bench::json_str;
using kattn_bench::num;
using kattn_bench::SetRing;
using kattn_bench::Shape;
using kattn_bench::split;

struct Args {
  std::vector<std::string> impls{"cudnn", "cuda"};
  std::vector<std::string> exps{"fa", "codelab", "overhead"};
  std::string out = "bench-gpu.json";
  std::string run_id = "unnamed";
  int warmup = 5, repeats = 30, overhead_calls = 2000;
  std::vector<std::int64_t> ts{512, 1024, 2048, 4096, 8192, 16384};
  std::vector<std::int64_t> hs{64, 128, 256};
  bool deterministic = false; // every problem with options.deterministic (impl "<name>-det")
  bool tf32 = false;          // every problem with options.allow_tf32 (impl "<name>-tf32")
  kattn::DType dtype = kattn::DType::bf16;
  std::vector<std::string> passes{"fwd", "fwd+bwd"};
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc)
        throw std::runtime_error("missing value after " + k);
      return argv[++i];
    };
    if (k == "--impl")
      a.impls = split(val());
    else if (k == "--dtype") {
      const std::string t = val();
      if (t == "bf16")
        a.dtype = kattn::DType::bf16;
      else if (t == "f16")
        a.dtype = kattn::DType::f16;
      else if (t == "f32")
        a.dtype = kattn::DType::f32;
      else if (t == "f64")
        a.dtype = kattn::DType::f64;
      else
        throw std::runtime_error("--dtype: expected bf16, f16, f32 or f64, got " + t);
    } else if (k == "--exp")
      a.exps = split(val());
    else if (k == "--out")
      a.out = val();
    else if (k == "--run-id")
      a.run_id = val();
    else if (k == "--warmup")
      a.warmup = std::stoi(val());
    else if (k == "--repeats")
      a.repeats = std::stoi(val());
    else if (k == "--overhead-calls")
      a.overhead_calls = std::stoi(val());
    else if (k == "--t") {
      a.ts.clear();
      for (const std::string& t : split(val()))
        a.ts.push_back(std::stoll(t));
    } else if (k == "--h") {
      a.hs.clear();
      for (const std::string& h : split(val()))
        a.hs.push_back(std::stoll(h));
    } else if (k == "--pass") {
      a.passes = split(val());
      for (const std::string& p : a.passes)
        if (p != "fwd" && p != "fwd+bwd")
          throw std::runtime_error("--pass: expected fwd and/or fwd+bwd, got " + p);
    } else if (k == "--deterministic") {
      a.deterministic = true;
    } else if (k == "--tf32") {
      a.tf32 = true;
    } else if (k == "--help" || k == "-h") {
      std::cout
          << "kokkosattn_bench_gpu [--impl cudnn,cuda] [--exp fa,codelab,seq,batch,overhead] "
             "[--out "
             "FILE] [--run-id ID] [--warmup N] [--repeats N] [--overhead-calls N] [--t "
             "512,1024,...] [--h 64,128,256] [--deterministic] [--tf32] [--dtype bf16|f16|f32|f64] "
             "[--pass fwd,fwd+bwd]\n";
      std::exit(0);
    } else {
      throw std::runtime_error("unknown argument " + k);
    }
  }
  return a;
}

struct Row {
  std::string exp, impl, pass;
  Shape s{};
  double ms = -1, tflops = -1, peak_bytes = -1;
  std::string error;
  std::string json() const {
    std::ostringstream o;
    o << "{\"exp\": " << json_str(exp) << ", \"impl\": " << json_str(impl) << ", \"B\": " << s.B
      << ", \"T\": " << s.T << ", \"S\": " << s.S << ", \"N\": " << s.N << ", \"K\": " << s.K
      << ", \"H\": " << s.H << ", \"dtype\": " << json_str(std::string(kattn::to_string(s.dtype)))
      << ", \"causal\": " << (s.causal ? "true" : "false") << ", \"pass\": " << json_str(pass)
      << ", \"ms\": " << (ms < 0 ? "null" : num(ms))
      << ", \"tflops\": " << (tflops < 0 ? "null" : num(tflops))
      << ", \"peak_bytes\": " << (peak_bytes < 0 ? "null" : num(peak_bytes))
      << ", \"error\": " << (error.empty() ? "null" : json_str(error)) << "}";
    return o.str();
  }
};

Row make_row(const std::string& exp, const std::string& impl, bool backward, const Shape& s) {
  Row r;
  r.exp = exp;
  r.impl = impl + (s.deterministic ? "-det" : "") + (s.tf32 ? "-tf32" : "");
  r.pass = backward ? "fwd+bwd" : "fwd";
  r.s = s;
  return r;
}

double flops(const Shape& s, bool backward) {
  const double f = 4.0 * static_cast<double>(s.B * s.N) * static_cast<double>(s.T) *
                   static_cast<double>(s.S) * static_cast<double>(s.H) * (s.causal ? 0.5 : 1.0);
  return backward ? 3.5 * f : f;
}

std::size_t device_used() {
  std::size_t free_b = 0, total = 0;
  check_cuda(cudaMemGetInfo(&free_b, &total), "cudaMemGetInfo");
  return total - free_b;
}

// One call of `impl` on the next set: forward, or forward + backward.
void call(kattn::Backend impl, SetRing& ring, const Shape& s, bool backward, cudaStream_t st) {
  kattn::ExecContext x;
  x.device = kattn::Device::cuda;
  x.stream = st;
  const kattn_bench::TensorSet& t = ring.next();
  if (!backward) {
    kattn::ForwardProblem p = t.forward(s, false);
    p.options.backend = impl;
    kattn::run_forward(kattn::default_registry(), p, x);
    return;
  }
  kattn::BackwardProblem b = t.backward(s);
  b.forward.options.backend = impl;
  kattn::run_forward(kattn::default_registry(), b.forward, x);
  kattn::run_backward(kattn::default_registry(), b, x);
}

// Every backend of one shape (and pass) timed round robin: each repetition calls each backend
// once, so clock changes under sustained load (the H200 drops from 1980 to ~1700 MHz within a
// second at its power cap) hit them alike. (Until run 5 each backend ran its warm-up and
// repetitions in one block, cudnn's before cuda's.)
std::vector<Row> time_gpu(const std::string& exp,
                          const std::vector<std::pair<std::string, kattn::Backend>>& impls,
                          const Shape& s, bool backward, const Args& a, std::size_t l2,
                          cudaStream_t st) {
  const std::size_t n = impls.size();
  std::vector<Row> rows;
  std::vector<std::unique_ptr<SetRing>> rings(n); // null: the backend failed, no more calls
  const auto drop = [&](std::size_t j, const std::exception& e) {
    rows[j].error = e.what();
    rings[j].reset();
    (void)cudaGetLastError();
  };
  for (std::size_t j = 0; j < n; ++j) {
    rows.push_back(make_row(exp, impls[j].first, backward, s));
    try {
      rings[j] = std::make_unique<SetRing>(s, backward, l2);
      check_cuda(cudaDeviceSynchronize(), "set-up");
      const std::size_t before = device_used();
      for (int i = 0; i < a.warmup; ++i)
        call(impls[j].second, *rings[j], s, backward, st);
      check_cuda(cudaStreamSynchronize(st), "warm-up");
      // The tensors of one call + what the backend allocated during the warm-up (graph
      // workspaces), comparable to torch.cuda.max_memory_allocated(). Approximate: memory the
      // backend frees meanwhile (graph-cache evictions) is subtracted, hence the clamp at 0.
      const std::size_t after = device_used();
      rows[j].peak_bytes = static_cast<double>(rings[j]->bytes_per_set()) +
                           static_cast<double>(after > before ? after - before : 0);
    } catch (const std::exception& e) {
      drop(j, e);
    }
  }
  cudaEvent_t e0, e1;
  check_cuda(cudaEventCreate(&e0), "cudaEventCreate");
  check_cuda(cudaEventCreate(&e1), "cudaEventCreate");
  std::vector<std::vector<double>> ms(n);
  for (int i = 0; i < a.repeats; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      if (!rings[j])
        continue;
      try {
        check_cuda(cudaEventRecord(e0, st), "cudaEventRecord");
        call(impls[j].second, *rings[j], s, backward, st);
        check_cuda(cudaEventRecord(e1, st), "cudaEventRecord");
        check_cuda(cudaEventSynchronize(e1), "cudaEventSynchronize");
        float t = 0;
        check_cuda(cudaEventElapsedTime(&t, e0, e1), "cudaEventElapsedTime");
        ms[j].push_back(t);
      } catch (const std::exception& e) {
        drop(j, e);
      }
    }
  (void)cudaEventDestroy(e0);
  (void)cudaEventDestroy(e1);
  for (std::size_t j = 0; j < n; ++j) {
    if (!rings[j] || ms[j].empty())
      continue;
    std::sort(ms[j].begin(), ms[j].end());
    rows[j].ms = ms[j][ms[j].size() / 2];
    rows[j].tflops = flops(s, backward) / (rows[j].ms * 1e-3) / 1e12;
  }
  return rows;
}

// Back-to-back calls, host clock, one sync at the end.
Row time_overhead(const std::string& name, kattn::Backend impl, const Shape& s, bool backward,
                  const Args& a, std::size_t l2, cudaStream_t st) {
  Row r = make_row("overhead", name, backward, s);
  try {
    SetRing ring(s, backward, l2);
    for (int i = 0; i < std::max(a.warmup, 20); ++i)
      call(impl, ring, s, backward, st);
    check_cuda(cudaStreamSynchronize(st), "warm-up");
    std::vector<double> per_call;
    for (int rep = 0; rep < 5; ++rep) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < a.overhead_calls; ++i)
        call(impl, ring, s, backward, st);
      check_cuda(cudaStreamSynchronize(st), "overhead sync");
      const auto t1 = std::chrono::steady_clock::now();
      per_call.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count() /
                         a.overhead_calls);
    }
    std::sort(per_call.begin(), per_call.end());
    r.ms = per_call[per_call.size() / 2];
    r.tflops = flops(s, backward) / (r.ms * 1e-3) / 1e12;
  } catch (const std::exception& e) {
    r.error = e.what();
    (void)cudaGetLastError();
  }
  return r;
}

std::string env_json(const kattn::Registry& reg) {
  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  int driver = 0, runtime = 0;
  check_cuda(cudaDriverGetVersion(&driver), "cudaDriverGetVersion");
  check_cuda(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion");
  std::ostringstream o;
  o << "{\"gpu\": " << json_str(prop.name) << ", \"sm\": \"" << prop.major << prop.minor
    << "\", \"gpu_memory_bytes\": " << prop.totalGlobalMem << ", \"l2_bytes\": " << prop.l2CacheSize
    << ", \"cuda_driver_api\": \"" << driver / 1000 << "." << driver % 1000 / 10
    << "\", \"cuda_runtime\": \"" << runtime / 1000 << "." << runtime % 1000 / 10 << "\"";
  for (const kattn::BackendImpl* b : reg.all())
    if (!b->description().empty())
      o << ", " << json_str("kokkosattn_" + std::string(kattn::to_string(b->id()))) << ": "
        << json_str(b->description());
#ifdef KOKKOSATTN_BENCH_COMPILER
  o << ", \"compiler\": " << json_str(KOKKOSATTN_BENCH_COMPILER);
#endif
  o << "}";
  return o.str();
}

bool has(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

} // namespace

int main(int argc, char** argv) {
  Args a;
  try {
    a = parse(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "kokkosattn_bench_gpu: " << e.what() << "\n";
    return 2;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::cerr << "kokkosattn_bench_gpu: no CUDA GPU\n";
    return 77;
  }
  Kokkos::ScopeGuard kokkos(argc, argv);
  const kattn::Registry& reg = kattn::default_registry();
  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  const auto l2 = static_cast<std::size_t>(prop.l2CacheSize);
  // One stream for the whole run: the cudnn backend keys its graphs by stream, so a stream per
  // configuration would only add graph builds.
  cudaStream_t stream = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");

  std::vector<Row> rows;
  auto emit = [&](Row r) {
    std::printf("%-8s %-8s %-7s B=%-3lld T=%-5lld N=%-2lld H=%-3lld causal=%d  %s\n", r.exp.c_str(),
                r.impl.c_str(), r.pass.c_str(), (long long)r.s.B, (long long)r.s.T,
                (long long)r.s.N, (long long)r.s.H, r.s.causal,
                r.error.empty() ? (num(r.ms * 1e3) + " us  " + num(r.tflops) + " TFLOP/s").c_str()
                                : ("ERROR " + r.error.substr(0, 160)).c_str());
    std::fflush(stdout);
    rows.push_back(std::move(r));
  };
  // Shapes outer, backends inner: the H200 lowers its clocks under sustained load, so timing
  // every backend's sweep one after the other would hand the later backend the hotter GPU.
  struct Impl {
    std::string name;
    std::optional<kattn::Backend> id;
    const kattn::BackendImpl* impl;
  };
  std::vector<Impl> impls;
  for (const std::string& name : a.impls) {
    const auto id = kattn::parse_backend(name);
    impls.push_back({name, id, id ? reg.find(*id) : nullptr});
  }
  auto absent = [&](const Impl& im, const std::string& exp, const Shape& s, bool bwd) {
    Row r = make_row(exp, im.name, bwd, s);
    r.error = im.id ? "backend " + im.name + " is not built into this library"
                    : "unknown backend name " + im.name;
    emit(r);
  };
  std::vector<std::pair<std::string, Shape>> shapes;
  if (has(a.exps, "fa"))
    for (std::int64_t H : a.hs)
      for (std::int64_t T : a.ts)
        for (bool causal : {false, true})
          shapes.push_back({"fa", Shape{16384 / T, T, T, 2048 / H, 2048 / H, H, causal,
                                        a.deterministic, a.dtype}});
  if (has(a.exps, "codelab"))
    for (bool causal : {false, true})
      shapes.push_back({"codelab", Shape{4, 128, 128, 8, 8, 64, causal, a.deterministic, a.dtype}});
  // The codelab demo's two sweeps at its shape (examples/codelab/config.cpp defaults).
  if (has(a.exps, "seq"))
    for (std::int64_t T : {64, 128, 256, 512, 1024, 2048})
      shapes.push_back({"seq", Shape{4, T, T, 8, 8, 64, false, a.deterministic, a.dtype}});
  if (has(a.exps, "batch"))
    for (std::int64_t B : {1, 2, 4, 8, 16})
      shapes.push_back({"batch", Shape{B, 256, 256, 8, 8, 64, false, a.deterministic, a.dtype}});
  for (auto& [exp, s] : shapes)
    s.tf32 = a.tf32;
  for (const auto& [exp, s] : shapes)
    for (bool bwd : {false, true}) {
      if (!has(a.passes, bwd ? "fwd+bwd" : "fwd"))
        continue;
      std::vector<std::pair<std::string, kattn::Backend>> built;
      for (const Impl& im : impls) {
        if (im.impl == nullptr)
          absent(im, exp, s, bwd);
        else
          built.push_back({im.name, *im.id});
      }
      for (Row& r : time_gpu(exp, built, s, bwd, a, l2, stream))
        emit(r);
    }
  if (has(a.exps, "overhead"))
    for (bool bwd : {false, true})
      for (const Impl& im : impls) {
        if (!has(a.passes, bwd ? "fwd+bwd" : "fwd"))
          continue;
        const Shape s{4, 128, 128, 8, 8, 64, false, false, a.dtype};
        if (im.impl == nullptr)
          absent(im, "overhead", s, bwd);
        else
          emit(time_overhead(im.name, *im.id, s, bwd, a, l2, stream));
      }

  std::ofstream f(a.out);
  f << "{\"run_id\": " << json_str(a.run_id) << ", \"env\": " << env_json(reg) << ", \"rows\": [\n";
  for (std::size_t i = 0; i < rows.size(); ++i)
    f << "  " << rows[i].json() << (i + 1 < rows.size() ? ",\n" : "\n");
  f << "]}\n";
  if (!f)
    std::cerr << "kokkosattn_bench_gpu: could not write " << a.out << "\n";
  std::printf("wrote %zu rows to %s\n", rows.size(), a.out.c_str());
  return f ? 0 : 1;
}
