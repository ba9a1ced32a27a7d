// kokkosattn_bench_decode: the decode sweep of issue 25. One (or a few, T) new query tokens
// attend to a KV cache of S keys per sequence: memory-bound, so the measure is bytes per second
// against the device copy bandwidth measured in the same process.
//   shapes   B x S x K x T (--B --S --K --T), N query heads, head dim H (= Hv), bf16, causal
//            bottom-right (the decode default; with T = 1 it masks nothing), default scale;
//   caches   paged (--page-sizes; pages assigned in a shuffled order so that no sequence is
//            contiguous in memory) and contiguous [B, S, K, H] (page_size 0), both with
//            extras.seqlens_k = S on the device;
//   impls    --impl cuda,cudnn,auto: options.backend set by name through the public dispatch (a
//            backend that refuses a configuration gives a row "unsupported" with its reason).
// Timing: after --warmup calls, --rounds rounds of --repeats back-to-back calls between two CUDA
// events; ms is the median round's time per call. The impls of one configuration run round
// robin (one round each in turn) so that clock changes under load hit them alike. Caches rotate
// through enough copies to exceed 3x the L2, so a call never finds its keys in L2.
#include <cuda_runtime_api.h>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bench_text.hpp"
#include "common/cuda_check.hpp"
#include "gpu_sets.hpp"
#include "kokkosattn/dispatch.hpp"
#include "kokkosattn/errors.hpp"
#include "kokkosattn/half.hpp"

namespace {

using kattn::cuda_kernels::check_cuda;
using kattn_bench::DeviceBuffer;
using kattn_bench::ints;
using kattn_bench::json_str;
using kattn_bench::num;
using kattn_bench::split;
using I64 = std::int64_t;

constexpr std::size_t GiB = std::size_t{1} << 30;
constexpr std::size_t kElem = 2; // bf16

struct Args {
  std::vector<I64> Bs{1, 8, 32, 128}, Ss{1024, 4096, 16384, 65536}, Ks{32, 8, 1}, Ts{1, 4};
  I64 N = 32, H = 128;
  std::vector<I64> page_sizes{16, 256};
  bool contiguous = true; // also the contiguous cache (page_size 0)
  std::vector<std::string> impls{"cuda", "cudnn"};
  std::string out = "bench-decode.json";
  std::string run_id = "unnamed";
  int warmup = 5, repeats = 50, rounds = 5;
};

const char* kUsage =
    "kokkosattn_bench_decode [--B 1,8,32,128] [--S 1024,4096,16384,65536] [--K 32,8,1] [--T 1,4] "
    "[--N 32] [--H 128] [--page-sizes 16,256] [--no-contiguous] [--impl cuda,cudnn,auto] [--out "
    "FILE] [--run-id ID] [--warmup N] [--repeats N] [--rounds N] [--quick]\n";

Args parse(int argc, char** argv) {
  Args a;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc)
        throw std::runtime_error("missing value after " + k);
      return argv[++i];
    };
    if (k == "--B")
      a.Bs = ints(val());
    else if (k == "--S")
      a.Ss = ints(val());
    else if (k == "--K")
      a.Ks = ints(val());
    else if (k == "--T")
      a.Ts = ints(val());
    else if (k == "--N")
      a.N = std::stoll(val());
    else if (k == "--H")
      a.H = std::stoll(val());
    else if (k == "--page-sizes")
      a.page_sizes = ints(val());
    else if (k == "--no-contiguous")
      a.contiguous = false;
    else if (k == "--impl")
      a.impls = split(val());
    else if (k == "--out")
      a.out = val();
    else if (k == "--run-id")
      a.run_id = val();
    else if (k == "--warmup")
      a.warmup = std::stoi(val());
    else if (k == "--repeats")
      a.repeats = std::stoi(val());
    else if (k == "--rounds")
      a.rounds = std::stoi(val());
    else if (k == "--quick")
      quick = true;
    else if (k == "--help" || k == "-h") {
      std::cout << kUsage;
      std::exit(0);
    } else
      throw std::runtime_error("unknown argument " + k);
  }
  if (quick) { // a smoke test: small shapes, few calls (benchmarks/peers_decode.py's --quick)
    a.Bs = {1, 8}, a.Ss = {1024, 4096}, a.Ks = {8, 1};
    a.repeats = 10, a.rounds = 3;
  }
  for (I64 p : a.page_sizes)
    if (p < 1)
      throw std::runtime_error("--page-sizes: expected sizes >= 1, got " + std::to_string(p));
  if (a.repeats < 1 || a.rounds < 1)
    throw std::runtime_error("--repeats and --rounds must be >= 1");
  return a;
}

// Fills `bytes` of device memory with bf16 values uniform in [-2, 2): one host block of at most
// 16 MiB from its own seed, then device-to-device copies doubling what is there. The values only
// need to be ordinary numbers (the time does not depend on them); filling a 34 GB cache from the
// host would take longer than timing it.
void fill_random(void* dst, std::size_t bytes, std::uint64_t seed) {
  const std::size_t block = std::min(bytes, std::size_t{16} << 20) / kElem * kElem;
  std::vector<std::uint16_t> host(block / kElem);
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (std::uint16_t& h : host) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    h = kattn::float_to_bf16(static_cast<float>(x >> 40) * 0x1p-24f * 4.0f - 2.0f);
  }
  auto* d = static_cast<unsigned char*>(dst);
  check_cuda(cudaMemcpy(d, host.data(), block, cudaMemcpyHostToDevice), "cudaMemcpy(fill)");
  for (std::size_t done = block; done < bytes;) {
    const std::size_t n = std::min(done, bytes - done);
    check_cuda(cudaMemcpy(d + done, d, n, cudaMemcpyDeviceToDevice), "cudaMemcpy(fill)");
    done += n;
  }
}

float elapsed_ms(cudaEvent_t e0, cudaEvent_t e1) {
  check_cuda(cudaEventSynchronize(e1), "cudaEventSynchronize");
  float t = 0;
  check_cuda(cudaEventElapsedTime(&t, e0, e1), "cudaEventElapsedTime");
  return t;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The copy bandwidth the decode rows are divided by, nvbandwidth's convention: a device-to-device
// cudaMemcpyAsync of n bytes reads n and writes n, so bandwidth = 2 n / time. 2 GiB buffers (less
// on a small GPU); median over `rounds` of 5 copies each.
struct CopyBw {
  double gbps = 0;
  std::size_t bytes = 0;
};

CopyBw copy_bandwidth(cudaStream_t st, int rounds) {
  std::size_t free_b = 0, total = 0;
  check_cuda(cudaMemGetInfo(&free_b, &total), "cudaMemGetInfo");
  CopyBw r;
  r.bytes = std::min(2 * GiB, free_b / 4);
  DeviceBuffer src(r.bytes), dst(r.bytes);
  check_cuda(cudaMemset(src.get(), 0x3c, r.bytes), "cudaMemset");
  cudaEvent_t e0, e1;
  check_cuda(cudaEventCreate(&e0), "cudaEventCreate");
  check_cuda(cudaEventCreate(&e1), "cudaEventCreate");
  const auto copy = [&] {
    check_cuda(cudaMemcpyAsync(dst.get(), src.get(), r.bytes, cudaMemcpyDeviceToDevice, st),
               "cudaMemcpyAsync(copy bandwidth)");
  };
  copy(), copy();
  std::vector<double> gbps;
  for (int i = 0; i < rounds; ++i) {
    check_cuda(cudaEventRecord(e0, st), "cudaEventRecord");
    for (int c = 0; c < 5; ++c)
      copy();
    check_cuda(cudaEventRecord(e1, st), "cudaEventRecord");
    gbps.push_back(2.0 * 5 * static_cast<double>(r.bytes) / (elapsed_ms(e0, e1) * 1e-3) / 1e9);
  }
  (void)cudaEventDestroy(e0);
  (void)cudaEventDestroy(e1);
  r.gbps = median(gbps);
  return r;
}

struct Shape {
  I64 B, T, S, N, K, H;
  I64 page_size; // 0: contiguous cache
  I64 pages_per_seq() const { return page_size ? (S + page_size - 1) / page_size : 0; }
  // Elements of k (and of v): the page pool, or [B, S, K, H].
  std::size_t kv_elems() const {
    const I64 keys = page_size ? B * pages_per_seq() * page_size : B * S;
    return static_cast<std::size_t>(keys * K * H);
  }
  // K and V read once, and q read and out written once (the latter negligible at decode).
  double bytes_kv() const { return 2.0 * static_cast<double>(B * K * S * H) * kElem; }
  double bytes_q_out() const { return 2.0 * static_cast<double>(B * T * N * H) * kElem; }
};

// One configuration's tensors on the device: `sets` copies of k and v (the page table, lengths,
// q and out shared: they are small and a real decode step re-reads them too).
struct Cache {
  std::vector<std::unique_ptr<DeviceBuffer>> k, v;
  std::unique_ptr<DeviceBuffer> q, out, page_table, seqlens;
  std::vector<kattn::ForwardProblem> problems; // one per set, backend not yet set

  Cache(const Shape& s, std::size_t sets) {
    const std::size_t kv = s.kv_elems() * kElem;
    const auto nq = static_cast<std::size_t>(s.B * s.T * s.N * s.H);
    q = std::make_unique<DeviceBuffer>(nq * kElem);
    out = std::make_unique<DeviceBuffer>(nq * kElem);
    fill_random(q->get(), nq * kElem, 1);
    std::vector<std::int32_t> lens(static_cast<std::size_t>(s.B), static_cast<std::int32_t>(s.S));
    seqlens = std::make_unique<DeviceBuffer>(lens.size() * 4);
    check_cuda(cudaMemcpy(seqlens->get(), lens.data(), lens.size() * 4, cudaMemcpyHostToDevice),
               "cudaMemcpy(seqlens_k)");
    if (s.page_size) {
      // Every page used once, in a shuffled order: sequence b's pages are scattered over the pool.
      std::vector<std::int32_t> ids(static_cast<std::size_t>(s.B * s.pages_per_seq()));
      std::iota(ids.begin(), ids.end(), 0);
      std::shuffle(ids.begin(), ids.end(), std::mt19937_64(25));
      page_table = std::make_unique<DeviceBuffer>(ids.size() * 4);
      check_cuda(cudaMemcpy(page_table->get(), ids.data(), ids.size() * 4, cudaMemcpyHostToDevice),
                 "cudaMemcpy(page_table)");
    }
    const auto dev = kattn::MemorySpace::cuda_device;
    const auto bf16 = kattn::DType::bf16;
    for (std::size_t i = 0; i < sets; ++i) {
      k.push_back(std::make_unique<DeviceBuffer>(kv));
      v.push_back(std::make_unique<DeviceBuffer>(kv));
      fill_random(k.back()->get(), kv, 2 + 2 * i);
      fill_random(v.back()->get(), kv, 3 + 2 * i);
      kattn::ForwardProblem p;
      p.q = kattn::Tensor::contiguous(q->get(), bf16, {s.B, s.T, s.N, s.H}, dev);
      p.out = kattn::Tensor::contiguous(out->get(), bf16, {s.B, s.T, s.N, s.H}, dev);
      if (s.page_size) {
        const I64 pages = s.B * s.pages_per_seq();
        p.k = kattn::Tensor::contiguous(k.back()->get(), bf16, {pages, s.page_size, s.K, s.H}, dev);
        p.v = kattn::Tensor::contiguous(v.back()->get(), bf16, {pages, s.page_size, s.K, s.H}, dev);
        p.extras.page_table = kattn::Tensor::contiguous(page_table->get(), kattn::DType::i32,
                                                        {s.B, s.pages_per_seq()}, dev);
      } else {
        p.k = kattn::Tensor::contiguous(k.back()->get(), bf16, {s.B, s.S, s.K, s.H}, dev);
        p.v = kattn::Tensor::contiguous(v.back()->get(), bf16, {s.B, s.S, s.K, s.H}, dev);
      }
      p.extras.seqlens_k = kattn::Tensor::contiguous(seqlens->get(), kattn::DType::i32, {s.B}, dev);
      p.options.causal = true;
      p.options.alignment = kattn::Alignment::bottom_right;
      problems.push_back(p);
    }
    check_cuda(cudaDeviceSynchronize(), "cache set-up");
  }
};

struct Row {
  std::string impl;
  Shape s{};
  std::size_t sets = 0;
  double ms = -1, copy_gbps = -1;
  std::string status = "ok", reason, backend, kernel;

  double gbps() const { return (s.bytes_kv() + s.bytes_q_out()) / (ms * 1e-3) / 1e9; }
  // 2 (H + Hv) flops per unmasked (query, key) pair and query head; bottom-right causal leaves
  // T S - T (T - 1) / 2 of the T S pairs.
  double tflops() const {
    const double pairs = static_cast<double>(s.T * s.S - s.T * (s.T - 1) / 2);
    return 4.0 * static_cast<double>(s.B * s.N * s.H) * pairs / (ms * 1e-3) / 1e12;
  }
  // The results schema's `error` (docs/benchmarks.md) for tools that read only that field.
  std::string error() const {
    if (status == "ok")
      return {};
    if (status == "unsupported")
      return "refused: " + reason;
    if (status.rfind("skipped", 0) == 0)
      return status + (reason.empty() ? "" : ": " + reason);
    return status + ": " + reason;
  }
  std::string json() const {
    const bool ok = status == "ok";
    std::ostringstream o;
    o << "{\"exp\": \"decode\", \"impl\": " << json_str(impl) << ", \"B\": " << s.B
      << ", \"T\": " << s.T << ", \"S\": " << s.S << ", \"N\": " << s.N << ", \"K\": " << s.K
      << ", \"H\": " << s.H << ", \"Hv\": " << s.H << ", \"dtype\": \"bf16\", \"causal\": true"
      << ", \"alignment\": \"bottom_right\", \"pass\": \"fwd\", \"page_size\": " << s.page_size
      << ", \"layout\": " << (s.page_size ? "\"paged\"" : "\"contiguous\"")
      << ", \"sets\": " << sets << ", \"ms\": " << (ok ? num(ms) : "null")
      << ", \"gbps\": " << (ok ? num(gbps()) : "null") << ", \"copy_bw_gbps\": " << num(copy_gbps)
      << ", \"frac_copy_bw\": " << (ok ? num(gbps() / copy_gbps) : "null")
      << ", \"bytes\": " << num(s.bytes_kv() + s.bytes_q_out())
      << ", \"bytes_kv\": " << num(s.bytes_kv()) << ", \"bytes_q_out\": " << num(s.bytes_q_out())
      << ", \"tflops\": " << (ok ? num(tflops()) : "null") << ", \"peak_bytes\": null"
      << ", \"status\": " << json_str(status)
      << ", \"reason\": " << (reason.empty() ? "null" : json_str(reason))
      << ", \"error\": " << (ok ? "null" : json_str(error()))
      << ", \"backend\": " << (backend.empty() ? "null" : json_str(backend))
      << ", \"kernel\": " << (kernel.empty() ? "null" : json_str(kernel)) << "}";
    return o.str();
  }
};

void record_failure(Row& r, const std::exception& e) {
  if (dynamic_cast<const kattn::Unsupported*>(&e))
    r.status = "unsupported";
  else if (dynamic_cast<const kattn::InvalidArgument*>(&e))
    r.status = "invalid";
  else
    r.status = "failed";
  r.reason = e.what();
  (void)cudaGetLastError();
}

// Poisons out with NaN (bf16 0xFFFF), runs one untimed call and checks that every output element
// came out finite (all inputs are finite and every row sees S >= 1 keys). A cheap guard against
// timing a kernel that writes nothing; correctness is the tests' job.
void checked_call(const kattn::ForwardProblem& p, const Cache& c, const kattn::ExecContext& x) {
  const auto bytes = static_cast<std::size_t>(p.out.numel()) * kElem;
  auto st = static_cast<cudaStream_t>(x.stream);
  check_cuda(cudaMemsetAsync(c.out->get(), 0xFF, bytes, st), "cudaMemsetAsync(poison)");
  kattn::run_forward(kattn::default_registry(), p, x);
  std::vector<std::uint16_t> host(bytes / kElem);
  check_cuda(cudaMemcpyAsync(host.data(), c.out->get(), bytes, cudaMemcpyDeviceToHost, st),
             "cudaMemcpyAsync(out)");
  check_cuda(cudaStreamSynchronize(st), "untimed call");
  const auto bad = std::count_if(host.begin(), host.end(), [](std::uint16_t h) {
    return !std::isfinite(kattn::bf16_to_float(h));
  });
  if (bad > 0)
    throw std::runtime_error("sanity check: " + std::to_string(bad) + " of " +
                             std::to_string(host.size()) +
                             " output elements are not finite after one call");
}

// Every impl on one configuration: selection (what runs, or why not), one checked call, warm-up,
// then the rounds, round robin over the impls still standing.
std::vector<Row> run_config(const Shape& s, const Args& a, const std::vector<std::string>& impls,
                            double copy_gbps, std::size_t l2, cudaStream_t st) {
  std::vector<Row> rows;
  for (const std::string& name : impls) {
    Row r;
    r.impl = name, r.s = s, r.copy_gbps = copy_gbps;
    rows.push_back(r);
  }
  // The cache must leave 4 GiB free (workspaces, the backends' own buffers); extra copies for
  // the L2 rotation only as far as memory allows.
  const std::size_t kv = 2 * s.kv_elems() * kElem;
  const std::size_t small = static_cast<std::size_t>(s.bytes_q_out()) + 8 * (1 << 20);
  std::size_t free_b = 0, total = 0;
  check_cuda(cudaMemGetInfo(&free_b, &total), "cudaMemGetInfo");
  const std::size_t room = free_b > 4 * GiB + small ? free_b - 4 * GiB - small : 0;
  if (kv > room) {
    for (Row& r : rows) {
      r.status = "skipped: memory";
      r.reason = "the cache needs " + num(static_cast<double>(kv) / GiB) + " GiB, " +
                 num(static_cast<double>(room) / GiB) + " GiB free beyond the 4 GiB margin";
    }
    return rows;
  }
  const std::size_t sets = std::clamp<std::size_t>((3 * l2 + kv - 1) / kv, 1, 1024);
  Cache cache(s, std::min(sets, room / kv));
  kattn::ExecContext x;
  x.device = kattn::Device::cuda;
  x.stream = st;
  std::vector<std::vector<kattn::ForwardProblem>> probs(rows.size());
  std::vector<std::vector<double>> ms(rows.size());
  for (std::size_t j = 0; j < rows.size(); ++j) {
    Row& r = rows[j];
    r.sets = cache.problems.size();
    const auto id = kattn::parse_backend(r.impl);
    if (!id) {
      r.status = "invalid", r.reason = "unknown backend name " + r.impl;
      continue;
    }
    try {
      probs[j] = cache.problems;
      for (kattn::ForwardProblem& p : probs[j])
        p.options.backend = *id;
      // What the dispatch runs (for auto: which backend; the kernel name as the backend gives
      // it), or the library's reason for refusing.
      const kattn::Selection sel = kattn::select(kattn::default_registry(), probs[j][0], x);
      r.backend = sel.impl ? std::string(kattn::to_string(sel.impl->id())) : "none";
      r.kernel = sel.kernel;
      checked_call(probs[j][0], cache, x);
      for (int i = 0; i < a.warmup; ++i)
        kattn::run_forward(kattn::default_registry(), probs[j][i % probs[j].size()], x);
      check_cuda(cudaStreamSynchronize(st), "warm-up");
    } catch (const std::exception& e) {
      record_failure(r, e);
    }
  }
  cudaEvent_t e0, e1;
  check_cuda(cudaEventCreate(&e0), "cudaEventCreate");
  check_cuda(cudaEventCreate(&e1), "cudaEventCreate");
  std::size_t next = 0; // the set the next call reads, across rounds and impls
  for (int round = 0; round < a.rounds; ++round)
    for (std::size_t j = 0; j < rows.size(); ++j) {
      if (rows[j].status != "ok")
        continue;
      try {
        check_cuda(cudaEventRecord(e0, st), "cudaEventRecord");
        for (int i = 0; i < a.repeats; ++i)
          kattn::run_forward(kattn::default_registry(), probs[j][next++ % probs[j].size()], x);
        check_cuda(cudaEventRecord(e1, st), "cudaEventRecord");
        ms[j].push_back(elapsed_ms(e0, e1) / a.repeats);
      } catch (const std::exception& e) {
        record_failure(rows[j], e);
      }
    }
  (void)cudaEventDestroy(e0);
  (void)cudaEventDestroy(e1);
  for (std::size_t j = 0; j < rows.size(); ++j)
    if (rows[j].status == "ok")
      rows[j].ms = median(ms[j]);
  return rows;
}

std::string env_json(const CopyBw& bw, const Args& a) {
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
  for (const kattn::BackendImpl* b : kattn::default_registry().all())
    if (!b->description().empty())
      o << ", " << json_str("kokkosattn_" + std::string(kattn::to_string(b->id()))) << ": "
        << json_str(b->description());
#ifdef KOKKOSATTN_BENCH_COMPILER
  o << ", \"compiler\": " << json_str(KOKKOSATTN_BENCH_COMPILER);
#endif
  o << ", \"decode_copy_bw_gbps\": " << num(bw.gbps)
    << ", \"decode_copy_bw_buffer_bytes\": " << bw.bytes
    << ", \"decode_copy_bw_convention\": \"device-to-device cudaMemcpyAsync of n bytes counted "
       "as 2n (read + write, nvbandwidth's convention), median of rounds of 5 copies\""
    << ", \"decode_bytes_convention\": \"bytes = bytes_kv + bytes_q_out: K and V read once "
       "(B K S (H + Hv) x 2 bytes) plus q read and out written once (B T N (H + Hv) x 2, "
       "negligible); the page table and seqlens_k are not counted\""
    << ", \"decode_timing\": "
    << json_str("median over " + std::to_string(a.rounds) + " rounds of " +
                std::to_string(a.repeats) + " back-to-back calls timed by CUDA events, after " +
                std::to_string(a.warmup) + " warm-up calls")
    << "}";
  return o.str();
}

} // namespace

int main(int argc, char** argv) {
  Args a;
  try {
    a = parse(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "kokkosattn_bench_decode: " << e.what() << "\n" << kUsage;
    return 2;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::cerr << "kokkosattn_bench_decode: no CUDA GPU\n";
    return 77;
  }
  Kokkos::ScopeGuard kokkos(argc, argv); // the portable backend (auto may pick it) needs Kokkos
  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  // One stream for the whole run: the cudnn backend keys its graphs by stream.
  cudaStream_t stream = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  const CopyBw bw = copy_bandwidth(stream, a.rounds);
  std::printf("device copy bandwidth %.0f GB/s (read + write of %zu MiB)\n", bw.gbps,
              bw.bytes >> 20);

  std::vector<Row> rows;
  std::vector<I64> layouts = a.page_sizes;
  if (a.contiguous)
    layouts.push_back(0);
  for (I64 B : a.Bs)
    for (I64 S : a.Ss)
      for (I64 K : a.Ks)
        for (I64 T : a.Ts)
          for (I64 ps : layouts) {
            const Shape s{B, T, S, a.N, K, a.H, ps};
            std::vector<Row> got;
            try {
              got = run_config(s, a, a.impls, bw.gbps, static_cast<std::size_t>(prop.l2CacheSize),
                               stream);
            } catch (const std::exception& e) { // set-up failed (allocation): one row per impl
              for (const std::string& name : a.impls) {
                Row r;
                r.impl = name, r.s = s, r.copy_gbps = bw.gbps;
                record_failure(r, e);
                got.push_back(r);
              }
            }
            for (Row& r : got) {
              std::printf("%-6s B=%-3lld T=%lld S=%-5lld K=%-2lld page=%-3lld %s\n", r.impl.c_str(),
                          (long long)B, (long long)T, (long long)S, (long long)K, (long long)ps,
                          r.status == "ok"
                              ? (num(r.ms * 1e3) + " us  " + num(r.gbps()) + " GB/s  " +
                                 num(100 * r.gbps() / bw.gbps) + "% of copy  " + r.kernel)
                                    .c_str()
                              : (r.status + " " + r.reason.substr(0, 160)).c_str());
              std::fflush(stdout);
              rows.push_back(std::move(r));
            }
          }

  std::ofstream f(a.out);
  f << "{\"run_id\": " << json_str(a.run_id) << ", \"env\": " << env_json(bw, a)
    << ", \"rows\": [\n";
  for (std::size_t i = 0; i < rows.size(); ++i)
    f << "  " << rows[i].json() << (i + 1 < rows.size() ? ",\n" : "\n");
  f << "]}\n";
  if (!f)
    std::cerr << "kokkosattn_bench_decode: could not write " << a.out << "\n";
  std::printf("wrote %zu rows to %s\n", rows.size(), a.out.c_str());
  (void)cudaStreamDestroy(stream);
  return f ? 0 : 1;
}
