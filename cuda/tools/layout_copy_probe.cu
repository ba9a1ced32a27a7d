// Bandwidth of candidate LayoutLeft -> LayoutRight copies of one bf16 operand [1, T, N, H] on the
// GPU, beside cudaMemcpy and a plain 16-byte copy: which access pattern the front end's layout
// copy (backends/kokkos_common/layout_copy_kernel.hpp) should use to cost <= 10% at 8k (issue
// 18). Raw CUDA, no Kokkos: the kernels here differ only in which thread moves which bytes.
//
//   kokkosattn_layout_copy_probe [T N H]        (default 8192 16 128)
//   PROBE_ONCE=1 ncu -k regex:'reg_block|staged_block' kokkosattn_layout_copy_probe
//
// Source (LayoutLeft): element (t, n, h) at t + sn * n + sh * h; destination (LayoutRight) at
// dt * t + H * n + h. Each variant runs with dense strides and with padded ones (sh and dt + 64
// elements) to tell a power-of-two stride conflict from the access pattern. L2 is flushed before
// every timed launch; the median of 21 launches is printed, and every result is checked.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

void check(cudaError_t e, const char* what, int line) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "layout_copy_probe:%d: %s: %s\n", line, what, cudaGetErrorString(e));
    std::exit(1);
  }
}
#define CK(x) check((x), #x, __LINE__)

struct Geo {
  long T, N, H;
  long sn, sh; // source strides of n and h (t: 1)
  long dt;     // destination stride of t (n: H, h: 1)
};

__host__ __device__ inline std::uint16_t value_of(long t, long n, long h) {
  return static_cast<std::uint16_t>((t * 131 + n * 7919 + h * 31) & 0xffff);
}

__global__ void fill_source(std::uint16_t* src, Geo g) {
  const long i = blockIdx.x * long(blockDim.x) + threadIdx.x;
  if (i >= g.T * g.N * g.H)
    return;
  const long t = i % g.T, n = (i / g.T) % g.N, h = i / (g.T * g.N);
  src[t + g.sn * n + g.sh * h] = value_of(t, n, h);
}

__global__ void count_wrong(const std::uint16_t* dst, Geo g, unsigned long long* wrong) {
  const long i = blockIdx.x * long(blockDim.x) + threadIdx.x;
  if (i >= g.T * g.N * g.H)
    return;
  const long h = i % g.H, n = (i / g.H) % g.N, t = i / (g.H * g.N);
  if (dst[g.dt * t + g.H * n + h] != value_of(t, n, h))
    atomicAdd(wrong, 1ull);
}

// Same layout on both sides: the bandwidth a copy kernel reaches (16 bytes per thread).
__global__ void vec_copy(const uint4* src, uint4* dst, long n) {
  for (long i = blockIdx.x * long(blockDim.x) + threadIdx.x; i < n;
       i += long(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

// 8 x 8 register blocks: a thread loads 8 vectors along t (8 rows h), transposes them in
// registers and stores 8 vectors along h (8 rows t). Lanes LA blocks along t by LB along h; the
// block's warps continue along h, then t, then n (ORDER 0) or n before t (ORDER 1).
__device__ inline void transpose8(const uint4 (&x)[8], uint4 (&y)[8]) {
  const auto* e = reinterpret_cast<const std::uint16_t*>(x); // e[j * 8 + r]: row h j, column t r
  auto* o = reinterpret_cast<std::uint16_t*>(y);
#pragma unroll
  for (int r = 0; r < 8; ++r)
#pragma unroll
    for (int j = 0; j < 8; ++j)
      o[r * 8 + j] = e[j * 8 + r];
}

// The block at (t0.., n, h0..) as 8 vectors along h: y[r] holds t0 + r.
__device__ inline void load_block(const std::uint16_t* src, const Geo& g, long t0, long n, long h0,
                                  uint4 (&y)[8]) {
  uint4 x[8];
#pragma unroll
  for (int j = 0; j < 8; ++j)
    x[j] = *reinterpret_cast<const uint4*>(src + t0 + g.sn * n + g.sh * (h0 + j));
  transpose8(x, y);
}

template <int LA, int LB, int ORDER>
__global__ void reg_block(const std::uint16_t* src, std::uint16_t* dst, Geo g) {
  const long tid = blockIdx.x * long(blockDim.x) + threadIdx.x;
  const int lane = threadIdx.x & 31;
  const long warp = tid >> 5;
  const long hb = g.H / 8, tb = g.T / 8;
  const long hgroups = hb / LB, tgroups = tb / LA;
  long w = warp;
  const long gh = w % hgroups;
  w /= hgroups;
  long gt, n;
  if (ORDER == 0)
    gt = w % tgroups, n = w / tgroups;
  else
    n = w % g.N, gt = w / g.N;
  if (n >= g.N || gt >= tgroups)
    return;
  const long t0 = (gt * LA + lane % LA) * 8, h0 = (gh * LB + lane / LA) * 8;
  uint4 y[8];
  load_block(src, g, t0, n, h0, y);
#pragma unroll
  for (int r = 0; r < 8; ++r)
    *reinterpret_cast<uint4*>(dst + g.dt * (t0 + r) + g.H * n + h0) = y[r];
}

// Register blocks restaged through shared memory: a block of 256 threads takes 128 t x 128 h of
// one n (H = 128 only), loads as reg_block<16, 2> does (2 rows of 256 bytes per instruction),
// transposes in registers, and stores whole 256-byte destination rows (2 per instruction).
template <int ORDER>
__global__ void __launch_bounds__(256)
    staged_block(const std::uint16_t* src, std::uint16_t* dst, Geo g) {
  __shared__ uint4 tile[128][16]; // [t][h / 8], vector column swizzled by t
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const long tgroups = g.T / 128;
  long gt, n;
  if (ORDER == 0)
    gt = blockIdx.x % tgroups, n = blockIdx.x / tgroups;
  else
    n = blockIdx.x % g.N, gt = blockIdx.x / g.N;
  const int la = lane % 16, lb = warp * 2 + lane / 16; // 16 blocks along t, 16 along h
  const long t0 = gt * 128 + la * 8;
  const int h0 = lb * 8;
  uint4 y[8];
  load_block(src, g, t0, n, h0, y);
#pragma unroll
  for (int r = 0; r < 8; ++r) {
    const int t = la * 8 + r;
    tile[t][lb ^ (t & 15)] = y[r];
  }
  __syncthreads();
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    const int v = k * 256 + threadIdx.x, t = v / 16, c = v % 16;
    *reinterpret_cast<uint4*>(dst + g.dt * (gt * 128 + t) + g.H * n + c * 8) =
        tile[t][c ^ (t & 15)];
  }
}

struct Buffers {
  std::uint16_t *src, *dst;
  void* flush;
  std::size_t src_elems, dst_elems, flush_bytes;
  unsigned long long* wrong;
};

// Median of 21 timed launches, each after an L2 flush (L2 holds neither tensor).
template <class Launch>
double median_us(Buffers& b, Launch launch) {
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  std::vector<float> ms;
  for (int rep = 0; rep < 24; ++rep) {
    CK(cudaMemsetAsync(b.flush, rep & 0xff, b.flush_bytes));
    CK(cudaEventRecord(e0));
    launch();
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float t = 0;
    CK(cudaEventElapsedTime(&t, e0, e1));
    if (rep >= 3)
      ms.push_back(t);
  }
  CK(cudaGetLastError());
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2] * 1e3;
}

template <class Launch>
void measure(const char* name, const Geo& g, Buffers& b, Launch launch) {
  CK(cudaMemset(b.dst, 0xff, b.dst_elems * 2));
  launch();
  CK(cudaGetLastError());
  CK(cudaMemset(b.wrong, 0, sizeof(unsigned long long)));
  const long elems = g.T * g.N * g.H;
  count_wrong<<<(elems + 255) / 256, 256>>>(b.dst, g, b.wrong);
  CK(cudaGetLastError());
  unsigned long long wrong = 0;
  CK(cudaMemcpy(&wrong, b.wrong, sizeof wrong, cudaMemcpyDeviceToHost));
  if (std::getenv("PROBE_ONCE")) { // one launch per variant, for a profiler
    std::printf("%-28s pad=%ld wrong=%llu\n", name, g.sh - g.T * g.N, wrong);
    return;
  }
  const double us = median_us(b, launch), bytes = 2.0 * elems * 2;
  std::printf("%-28s sn=%-6ld sh=%-8ld dt=%-5ld %8.2f us %6.2f TB/s  wrong=%llu\n", name, g.sn,
              g.sh, g.dt, us, bytes / us * 1e-6, wrong);
}

} // namespace

int main(int argc, char** argv) {
  const long T = argc > 1 ? std::atol(argv[1]) : 8192, N = argc > 2 ? std::atol(argv[2]) : 16,
             H = argc > 3 ? std::atol(argv[3]) : 128;
  if (T % 128 || H != 128 || N < 1) {
    std::fprintf(stderr, "layout_copy_probe: expected T a multiple of 128, N >= 1, H = 128\n");
    return 2;
  }
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  for (const long pad : {0L, 64L}) {
    Geo g{T, N, H, T, T * N + pad, N * H + pad};
    Buffers b{};
    b.src_elems = g.sh * H;
    b.dst_elems = g.dt * T;
    b.flush_bytes = 256ull << 20;
    CK(cudaMalloc(&b.src, b.src_elems * 2));
    CK(cudaMalloc(&b.dst, b.dst_elems * 2));
    CK(cudaMalloc(&b.flush, b.flush_bytes));
    CK(cudaMalloc(&b.wrong, sizeof(unsigned long long)));
    const long elems = T * N * H;
    CK(cudaMemset(b.src, 0, b.src_elems * 2));
    fill_source<<<(elems + 255) / 256, 256>>>(b.src, g);
    CK(cudaGetLastError());
    const std::size_t bytes = elems * 2;
    if (pad == 0) {
      const double mc =
          median_us(b, [&] { CK(cudaMemcpyAsync(b.dst, b.src, bytes, cudaMemcpyDeviceToDevice)); });
      const double vc = median_us(b, [&] {
        vec_copy<<<sms * 8, 256>>>(reinterpret_cast<const uint4*>(b.src),
                                   reinterpret_cast<uint4*>(b.dst), long(bytes / 16));
      });
      std::printf("%-28s %8.2f us %6.2f TB/s\n%-28s %8.2f us %6.2f TB/s\n", "cudaMemcpy", mc,
                  2.0 * bytes / mc * 1e-6, "vec_copy", vc, 2.0 * bytes / vc * 1e-6);
    }
    const long threads = elems / 64;
    const auto blocks = static_cast<unsigned>((threads + 127) / 128);
    measure("reg_block<16,2> (shipped)", g, b,
            [&] { reg_block<16, 2, 0><<<blocks, 128>>>(b.src, b.dst, g); });
    measure("reg_block<16,2> n-first", g, b,
            [&] { reg_block<16, 2, 1><<<blocks, 128>>>(b.src, b.dst, g); });
    measure("reg_block<4,8>", g, b, [&] { reg_block<4, 8, 0><<<blocks, 128>>>(b.src, b.dst, g); });
    measure("reg_block<2,16>", g, b,
            [&] { reg_block<2, 16, 0><<<blocks, 128>>>(b.src, b.dst, g); });
    measure("reg_block<16,2> 256 thr", g, b,
            [&] { reg_block<16, 2, 0><<<blocks / 2, 256>>>(b.src, b.dst, g); });
    const auto tiles = static_cast<unsigned>(T / 128 * N);
    measure("staged_block", g, b, [&] { staged_block<0><<<tiles, 256>>>(b.src, b.dst, g); });
    measure("staged_block n-first", g, b,
            [&] { staged_block<1><<<tiles, 256>>>(b.src, b.dst, g); });
    CK(cudaFree(b.src));
    CK(cudaFree(b.dst));
    CK(cudaFree(b.flush));
    CK(cudaFree(b.wrong));
  }
  return 0;
}
