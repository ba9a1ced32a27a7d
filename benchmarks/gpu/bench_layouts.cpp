// kokkosattn_bench_layouts: what a View's layout costs on the GPU (issue 18). The same bf16
// problem four ways, timed round robin on one Kokkos::Cuda instance:
//   frontend-right   KokkosAttn::sdpa on LayoutRight Views (the kernels read them as they are)
//   frontend-left    KokkosAttn::sdpa on LayoutLeft Views (CUDA's default layout: layout
//                    copies to row-major scratch and back, kattn::LayoutCopies)
//   plan-left        a KokkosAttn::Plan of the LayoutLeft Views, executed (its own scratch)
//   raw              kattn::run_forward on the LayoutRight memory with a CUDA context (the
//                    raw-pointer path every GPU figure went through before)
// Shapes: the codelab's (B4 T128 N8 H64), B1 T=S=8192 N16 H128 (the shape of the first
// measurement) and FlashAttention's sweep at 8k (B2 T=S=8192 N16 H128), non-causal and causal.
// Backend `auto` unless --backend. GPU time: CUDA events on the instance's stream around each call,
// median of --repeats after --warmup, inputs rotating through enough sets to exceed 3x the L2. Rows
// of the results schema (docs/benchmarks.md) plus the backend that ran and whether it went through
// layout copies.
#include <cuda_runtime_api.h>

#include <KokkosAttn.hpp>
#include <Kokkos_Random.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/cuda_check.hpp"

namespace bench_layouts { // named: nvcc's device lambdas below need a named enclosing scope

using bf16 = Kokkos::Experimental::bhalf_t;
using Mem = Kokkos::CudaSpace;
using Right = Kokkos::View<bf16****, Kokkos::LayoutRight, Mem>;
using Left = Kokkos::View<bf16****, Kokkos::LayoutLeft, Mem>;

using kattn::cuda_kernels::check_cuda;

struct Shape {
  const char* exp;
  int B, T, N, H;
  bool causal;
};

// N(0, 1) values, through a float View (Kokkos' random fill knows float).
template <class View>
void fill(const View& v, std::uint64_t seed) {
  Kokkos::View<float****, typename View::array_layout, Mem> f("f", v.extent(0), v.extent(1),
                                                              v.extent(2), v.extent(3));
  Kokkos::Random_XorShift64_Pool<Kokkos::Cuda> pool(seed);
  Kokkos::fill_random(f, pool, -2.0f, 2.0f);
  Kokkos::parallel_for(
      "bench_layouts::to_bf16", Kokkos::RangePolicy<Kokkos::Cuda>(0, f.span()),
      KOKKOS_LAMBDA(std::size_t i) { v.data()[i] = static_cast<bf16>(f.data()[i]); });
}

template <class View>
struct Set {
  View q, k, v, out;
  Set(const Shape& s, std::uint64_t seed)
      : q("q", s.B, s.T, s.N, s.H), k("k", s.B, s.T, s.N, s.H), v("v", s.B, s.T, s.N, s.H),
        out("out", s.B, s.T, s.N, s.H) {
    fill(q, seed);
    fill(k, seed + 1);
    fill(v, seed + 2);
  }
};

struct Args {
  std::string out = "bench-layouts.json", run_id = "unnamed", backend = "auto";
  std::string only; // a shape's label (codelab, 8k, fa): that shape only
  int warmup = 5, repeats = 30;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    const auto val = [&]() -> std::string {
      if (i + 1 >= argc)
        throw std::runtime_error("missing value after " + k);
      return argv[++i];
    };
    if (k == "--out")
      a.out = val();
    else if (k == "--run-id")
      a.run_id = val();
    else if (k == "--backend")
      a.backend = val();
    else if (k == "--only")
      a.only = val();
    else if (k == "--warmup")
      a.warmup = std::stoi(val());
    else if (k == "--repeats")
      a.repeats = std::stoi(val());
    else
      throw std::runtime_error("unknown argument " + k +
                               " (--out F --run-id ID --backend auto|cuda|cudnn --warmup N "
                               "--repeats N --only codelab|8k|fa)");
  }
  return a;
}

struct Row {
  std::string impl, backend, error;
  bool copies = false;
  double ms = -1, tflops = -1;
};

std::string json_str(const std::string& s) {
  std::string r = "\"";
  for (char c : s)
    r += (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20) ? ' ' : c;
  return r + "\"";
}

} // namespace bench_layouts

using namespace bench_layouts;

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  try {
    const Args a = parse(argc, argv);
    const auto backend = kattn::parse_backend(a.backend);
    if (!backend)
      throw std::runtime_error("--backend: unknown backend " + a.backend);
    int dev = 0;
    cudaDeviceProp prop{};
    check_cuda(cudaGetDevice(&dev), "cudaGetDevice");
    check_cuda(cudaGetDeviceProperties(&prop, dev), "cudaGetDeviceProperties");
    const Kokkos::Cuda exec;
    const cudaStream_t st = exec.cuda_stream();
    const Shape shapes[] = {{"codelab", 4, 128, 8, 64, false},
                            {"codelab", 4, 128, 8, 64, true},
                            {"8k", 1, 8192, 16, 128, false},
                            {"fa", 2, 8192, 16, 128, false},
                            {"fa", 2, 8192, 16, 128, true}};
    std::ostringstream json;
    json << "{\"env\": {\"gpu\": \"" << prop.name << "\", \"kokkos\": \"" << KOKKOS_VERSION
         << "\", \"run_id\": \"" << a.run_id << "\", \"backend\": \"" << a.backend
         << "\"}, \"rows\": [";
    bool first_row = true;
    std::printf("%-8s %-6s %-16s %-8s %-6s %10s %8s\n", "shape", "causal", "impl", "backend",
                "copies", "ms", "TFLOP/s");
    for (const Shape& s : shapes) {
      if (!a.only.empty() && a.only != s.exp)
        continue;
      const double bytes = 4.0 * s.B * s.T * s.N * s.H * 2;
      const int sets = std::clamp(int(3.0 * prop.l2CacheSize / bytes) + 1, 1, 32);
      std::vector<std::unique_ptr<Set<Right>>> right;
      std::vector<std::unique_ptr<Set<Left>>> left;
      for (int i = 0; i < sets; ++i) {
        right.push_back(std::make_unique<Set<Right>>(s, 10 * i + 1));
        left.push_back(std::make_unique<Set<Left>>(s, 10 * i + 1));
      }
      kattn::Options o;
      o.causal = s.causal;
      o.backend = *backend;
      const KokkosAttn::Plan<Kokkos::Cuda> plan(exec, left[0]->q, left[0]->k, left[0]->v,
                                                left[0]->out, o);
      kattn::ExecContext raw;
      raw.device = kattn::Device::cuda;
      raw.stream = st;
      const auto raw_problem = [&](const Set<Right>& r) {
        kattn::ForwardProblem p;
        p.q = KokkosAttn::as_tensor(r.q);
        p.k = KokkosAttn::as_tensor(r.k);
        p.v = KokkosAttn::as_tensor(r.v);
        p.out = KokkosAttn::as_tensor(r.out);
        p.options = o;
        return p;
      };
      const std::vector<std::string> impls = {"frontend-right", "frontend-left", "plan-left",
                                              "raw"};
      int turn = 0;
      const auto call = [&](std::size_t impl) {
        const int i = turn % sets;
        switch (impl) {
        case 0:
          return KokkosAttn::sdpa(exec, right[i]->q, right[i]->k, right[i]->v, right[i]->out, o);
        case 1:
          return KokkosAttn::sdpa(exec, left[i]->q, left[i]->k, left[i]->v, left[i]->out, o);
        case 2:
          return plan.execute(left[i]->q, left[i]->k, left[i]->v, left[i]->out);
        default:
          return kattn::run_forward(kattn::default_registry(), raw_problem(*right[i]), raw);
        }
      };
      std::vector<Row> rows(impls.size());
      std::vector<std::vector<float>> ms(impls.size());
      cudaEvent_t e0, e1;
      check_cuda(cudaEventCreate(&e0), "cudaEventCreate");
      check_cuda(cudaEventCreate(&e1), "cudaEventCreate");
      for (int rep = 0; rep < a.warmup + a.repeats; ++rep, ++turn)
        for (std::size_t j = 0; j < impls.size(); ++j) {
          if (!rows[j].error.empty())
            continue;
          try {
            check_cuda(cudaEventRecord(e0, st), "cudaEventRecord");
            call(j);
            check_cuda(cudaEventRecord(e1, st), "cudaEventRecord");
            check_cuda(cudaEventSynchronize(e1), "cudaEventSynchronize");
            float t = 0;
            check_cuda(cudaEventElapsedTime(&t, e0, e1), "cudaEventElapsedTime");
            if (rep >= a.warmup)
              ms[j].push_back(t);
          } catch (const std::exception& e) {
            rows[j].error = e.what();
          }
        }
      check_cuda(cudaEventDestroy(e0), "cudaEventDestroy");
      check_cuda(cudaEventDestroy(e1), "cudaEventDestroy");
      // What ran: the plan's choice for LayoutLeft, the same dispatch on LayoutRight.
      const KokkosAttn::Plan<Kokkos::Cuda> plan_right(exec, right[0]->q, right[0]->k, right[0]->v,
                                                      right[0]->out, o);
      const double f = 4.0 * s.B * s.N * double(s.T) * s.T * s.H * (s.causal ? 0.5 : 1.0);
      for (std::size_t j = 0; j < impls.size(); ++j) {
        Row& r = rows[j];
        r.impl = impls[j];
        const bool is_left = j == 1 || j == 2;
        r.backend = std::string(kattn::to_string(is_left ? plan.backend() : plan_right.backend()));
        r.copies = is_left && plan.layout_copies().any();
        if (!ms[j].empty()) {
          std::sort(ms[j].begin(), ms[j].end());
          r.ms = ms[j][(ms[j].size() - 1) / 2];
          r.tflops = f / (r.ms * 1e-3) / 1e12;
        }
        std::printf("%-8s %-6s %-16s %-8s %-6s %10.4f %8.1f %s\n", s.exp, s.causal ? "yes" : "no",
                    r.impl.c_str(), r.backend.c_str(), r.copies ? "yes" : "no", r.ms, r.tflops,
                    r.error.c_str());
        json << (first_row ? "" : ", ") << "{\"exp\": \"" << s.exp << "\", \"impl\": \"ours-"
             << r.impl << "\", \"B\": " << s.B << ", \"T\": " << s.T << ", \"S\": " << s.T
             << ", \"N\": " << s.N << ", \"K\": " << s.N << ", \"H\": " << s.H
             << ", \"dtype\": \"bf16\", \"causal\": " << (s.causal ? "true" : "false")
             << ", \"pass\": \"fwd\", \"ms\": " << (r.ms < 0 ? "null" : std::to_string(r.ms))
             << ", \"tflops\": " << (r.tflops < 0 ? "null" : std::to_string(r.tflops))
             << ", \"backend\": \"" << r.backend
             << "\", \"layout_copies\": " << (r.copies ? "true" : "false")
             << ", \"error\": " << (r.error.empty() ? "null" : json_str(r.error)) << "}";
        first_row = false;
      }
    }
    json << "]}\n";
    std::ofstream(a.out) << json.str();
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "kokkosattn_bench_layouts: " << e.what() << "\n";
    return 1;
  }
}
