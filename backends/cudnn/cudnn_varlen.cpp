#include "cudnn/cudnn_varlen.hpp"

#include <nvrtc.h>

#include <mutex>
#include <string>
#include <vector>

#include "cudnn/cudnn_status.hpp"

namespace kattn::cudnn::detail {
namespace {

// The argument structs again, for NVRTC (same members, same order, same types).
const char* const kernel_source = R"(
#define max_ragged 10
struct PrepArgs {
  const int* cu_q; const int* cu_k; long long cu_q_stride, cu_k_stride;
  const int* len_q; const int* len_k; long long len_q_stride, len_k_stride;
  int B, T, S;
  int* seq_q; int* seq_k;
  int n_off; int* off[max_ragged]; long long token_stride[max_ragged]; int side_k[max_ragged];
};
struct RowsArgs {
  void* data; long long batch_stride, token_stride, head_stride; int heads, dim;
  float* lse; long long lse_batch, lse_head, lse_token;
};
struct FixArgs {
  RowsArgs rows; const int* seq_q; const int* seq_k; const int* cu; long long cu_stride;
  int B, T; long long left, right; int bottom_right; int keys_side;
};
struct StatsArgs {
  const float* src; long long src_batch, src_head, src_token;
  float* dst; long long dst_batch, dst_head, dst_token;
  int B, N, T; long long total; int packed; int inf_to_pos;
};

extern "C" __global__ void kattn_prep(PrepArgs a) {
  const int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b > a.B) return;
  if (b < a.B) {
    if (a.cu_q) {
      a.seq_q[b] = a.cu_q[(b + 1) * a.cu_q_stride] - a.cu_q[b * a.cu_q_stride];
      a.seq_k[b] = a.cu_k[(b + 1) * a.cu_k_stride] - a.cu_k[b * a.cu_k_stride];
    } else {
      a.seq_q[b] = a.len_q ? a.len_q[b * a.len_q_stride] : a.T;
      a.seq_k[b] = a.len_k ? a.len_k[b * a.len_k_stride] : a.S;
    }
  }
  for (int o = 0; o < a.n_off; ++o) {
    const int* cu = a.side_k[o] ? a.cu_k : a.cu_q;
    const long long s = a.side_k[o] ? a.cu_k_stride : a.cu_q_stride;
    a.off[o][b] = (int)(cu[b * s] * a.token_stride[o]);
  }
}

extern "C" __global__ void kattn_fix_rows(FixArgs a) {
  const long long i = blockIdx.x;
  const int b = blockIdx.y;
  const int q_len = a.seq_q[b], k_len = a.seq_k[b];
  const int len = a.keys_side ? k_len : q_len;
  bool zero = false;
  if (a.cu) {
    if (i >= len) return; // packed: no such row
  } else {
    zero = i >= len;
  }
  if (!a.keys_side && !zero) {
    const long long d = a.bottom_right ? (long long)k_len - q_len : 0;
    long long lo = a.left < 0 ? 0 : i + d - a.left;
    if (lo < 0) lo = 0;
    long long hi = a.right < 0 ? (long long)k_len - 1 : i + d + a.right;
    if (hi > (long long)k_len - 1) hi = (long long)k_len - 1;
    zero = lo > hi;
  }
  if (!zero) return;
  const long long row = a.cu ? (long long)a.cu[b * a.cu_stride] + i : i;
  const long long base = (a.cu ? 0 : b * a.rows.batch_stride) + row * a.rows.token_stride;
  unsigned short* p = (unsigned short*)a.rows.data;
  for (int e = threadIdx.x; e < a.rows.heads * a.rows.dim; e += blockDim.x)
    p[base + (e / a.rows.dim) * a.rows.head_stride + e % a.rows.dim] = 0;
  if (a.rows.lse)
    for (int n = threadIdx.x; n < a.rows.heads; n += blockDim.x)
      a.rows.lse[(a.cu ? 0 : b * a.rows.lse_batch) + n * a.rows.lse_head + row * a.rows.lse_token] =
          __int_as_float(0xff800000);
}

extern "C" __global__ void kattn_stats(StatsArgs a) {
  const long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  const long long count = a.packed ? (long long)a.N * a.total : (long long)a.B * a.N * a.T;
  if (idx >= count) return;
  long long b = 0, n, t;
  if (a.packed) {
    n = idx % a.N, t = idx / a.N;
  } else {
    t = idx % a.T, n = (idx / a.T) % a.N, b = idx / ((long long)a.T * a.N);
  }
  const float x = a.src[b * a.src_batch + n * a.src_head + t * a.src_token];
  a.dst[b * a.dst_batch + n * a.dst_head + t * a.dst_token] =
      a.inf_to_pos && x == __int_as_float(0xff800000) ? __int_as_float(0x7f800000) : x;
}
)";

void check_nvrtc(nvrtcResult r, const char* what, const std::string& log = {}) {
  if (r != NVRTC_SUCCESS)
    throw BackendFailure(std::string("cudnn backend: ") + what +
                         " failed: " + nvrtcGetErrorString(r) + (log.empty() ? "" : "\n" + log));
}

struct Kernels {
  cudaLibrary_t library = nullptr;
  cudaKernel_t prep = nullptr, fix_rows = nullptr, stats = nullptr;
};

// Compiled once per process, for the compute capability of the device current at first use.
const Kernels& kernels() {
  static std::mutex m;
  static Kernels* k = nullptr; // never destroyed (see cudnn_graph_cache.cpp's cache)
  std::lock_guard<std::mutex> lock(m);
  if (k)
    return *k;
  int device = 0, major = 0, minor = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  check_cuda(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device),
             "cudaDeviceGetAttribute");
  check_cuda(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device),
             "cudaDeviceGetAttribute");
  nvrtcProgram prog = nullptr;
  check_nvrtc(
      nvrtcCreateProgram(&prog, kernel_source, "kattn_cudnn_varlen.cu", 0, nullptr, nullptr),
      "nvrtcCreateProgram");
  const std::string arch = "--gpu-architecture=compute_" + std::to_string(major * 10 + minor);
  const char* opts[] = {arch.c_str()};
  const nvrtcResult compiled = nvrtcCompileProgram(prog, 1, opts);
  std::size_t log_size = 0;
  (void)nvrtcGetProgramLogSize(prog, &log_size);
  std::string log(log_size, '\0');
  if (log_size > 1)
    (void)nvrtcGetProgramLog(prog, log.data());
  if (compiled != NVRTC_SUCCESS) {
    (void)nvrtcDestroyProgram(&prog);
    check_nvrtc(compiled, "nvrtcCompileProgram (varlen kernels)", log);
  }
  std::size_t ptx_size = 0;
  check_nvrtc(nvrtcGetPTXSize(prog, &ptx_size), "nvrtcGetPTXSize");
  std::vector<char> ptx(ptx_size);
  check_nvrtc(nvrtcGetPTX(prog, ptx.data()), "nvrtcGetPTX");
  (void)nvrtcDestroyProgram(&prog);
  auto* made = new Kernels;
  check_cuda(
      cudaLibraryLoadData(&made->library, ptx.data(), nullptr, nullptr, 0, nullptr, nullptr, 0),
      "cudaLibraryLoadData (varlen kernels)");
  check_cuda(cudaLibraryGetKernel(&made->prep, made->library, "kattn_prep"),
             "cudaLibraryGetKernel");
  check_cuda(cudaLibraryGetKernel(&made->fix_rows, made->library, "kattn_fix_rows"),
             "cudaLibraryGetKernel");
  check_cuda(cudaLibraryGetKernel(&made->stats, made->library, "kattn_stats"),
             "cudaLibraryGetKernel");
  k = made;
  return *k;
}

template <class Args>
void launch(cudaKernel_t kernel, dim3 grid, dim3 block, const Args& a, cudaStream_t stream,
            const char* what) {
  void* args[] = {const_cast<Args*>(&a)};
  check_cuda(cudaLaunchKernel(reinterpret_cast<const void*>(kernel), grid, block, args, 0, stream),
             what);
}

} // namespace

void launch_prep(const PrepArgs& a, cudaStream_t stream) {
  const unsigned blocks = static_cast<unsigned>((a.B + 1 + 127) / 128);
  launch(kernels().prep, dim3(blocks), dim3(128), a, stream, "cudaLaunchKernel(varlen prep)");
}

void launch_fix_rows(const FixArgs& a, cudaStream_t stream) {
  launch(kernels().fix_rows, dim3(static_cast<unsigned>(a.T), static_cast<unsigned>(a.B)),
         dim3(128), a, stream, "cudaLaunchKernel(varlen row fix)");
}

void launch_stats(const StatsArgs& a, cudaStream_t stream) {
  const long long count =
      a.packed ? static_cast<long long>(a.N) * a.total : static_cast<long long>(a.B) * a.N * a.T;
  const auto blocks = static_cast<unsigned>((count + 255) / 256);
  launch(kernels().stats, dim3(blocks), dim3(256), a, stream, "cudaLaunchKernel(varlen stats)");
}

} // namespace kattn::cudnn::detail
