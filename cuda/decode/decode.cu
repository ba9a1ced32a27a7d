// The decode kernel's hooks: support, auto's rule, the split count from the device's SM count
// and residency (read once per device and instantiation), and the run with its workspace.
#include "decode/decode.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "common/cuda_check.hpp"
#include "common/stream_scratch.hpp"
#include "decode/decode_launch.hpp"
#include "kattn_kernels/decode_splits.hpp"
#include "kattn_kernels/params_limits.hpp"

namespace kattn::cuda_kernels::decode {
namespace {

template <class Elem>
int resident_of(int hd) {
  switch (hd) {
  case 64:
    return resident_ctas<Elem, 64>();
  case 128:
    return resident_ctas<Elem, 128>();
  default:
    return resident_ctas<Elem, 256>();
  }
}

// SMs x resident CTAs of the kernel for (dtype, head dim) on the current device.
int device_slots(ElemType dtype, int hd) {
  static std::mutex m;
  static std::map<std::tuple<int, ElemType, int>, int> cache;
  int dev = 0;
  check_cuda(cudaGetDevice(&dev), "cuda decode: cudaGetDevice");
  const std::lock_guard<std::mutex> lock(m);
  const auto key = std::make_tuple(dev, dtype, hd);
  if (auto it = cache.find(key); it != cache.end())
    return it->second;
  int sms = 0;
  check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev),
             "cuda decode: cudaDeviceGetAttribute(MultiProcessorCount)");
  const int per_sm =
      dtype == ElemType::bf16 ? resident_of<__nv_bfloat16>(hd) : resident_of<__half>(hd);
  return cache[key] = sms * per_sm;
}

template <class Elem>
void launch_of(const FlashFwdParams& p, const SplitOut& part, cudaStream_t stream) {
  switch (p.H) {
  case 64:
    return launch<Elem, 64>(p, part, stream);
  case 128:
    return launch<Elem, 128>(p, part, stream);
  default:
    return launch<Elem, 256>(p, part, stream);
  }
}

} // namespace

std::string unsupported_reason(const FlashFwdParams& p) {
  if (std::string why = half_dtype_limit(p, "decode kernel"); !why.empty())
    return why;
  if (p.H != p.Hv || (p.H != 64 && p.H != 128 && p.H != 256))
    return "head dims H=" + std::to_string(p.H) + " Hv=" + std::to_string(p.Hv) +
           " not instantiated (decode kernel: H == Hv in {64, 128, 256})";
  if (p.cu_seqlens_q != nullptr)
    return "packed varlen: the decode kernel reads dense or padded batches";
  for (const std::string& why :
       {unit_dim_stride_limit(p), access_limit(p, 16, 8, "16-byte cp.async rows"), varlen_limit(p),
        heads_limit(p), sizes_limit(p)})
    if (!why.empty())
      return why;
  if (static_cast<std::int64_t>(p.N / p.K) * p.T > (std::int64_t{1} << 30))
    return "sizes: expected (N / K) * T <= 2^30 packed rows per KV head (decode kernel: 32-bit "
           "row indices), got " +
           std::to_string(static_cast<std::int64_t>(p.N / p.K) * p.T);
  if (static_cast<std::int64_t>(p.B) * p.K > 65535)
    return "grid: expected B * K <= 65535 (decode kernel), got " +
           std::to_string(static_cast<std::int64_t>(p.B) * p.K);
  return {};
}

bool auto_takes(const FlashFwdParams& p) {
  return p.page_table != nullptr ||
         (p.T <= kAutoMaxTokens && static_cast<std::int64_t>(p.N / p.K) * p.T <= kAutoMaxRows);
}

int splits(const FlashFwdParams& p) {
  const std::int64_t ctas = decode_row_blocks(p.N, p.K, p.T) * p.B * p.K;
  return decode_splits(ctas, p.S, device_slots(p.dtype, p.H));
}

std::string kernel_name(const FlashFwdParams& p) {
  return std::string("decode_") + elem_name(p.dtype) + "_h" + std::to_string(p.H) + "_splits" +
         std::to_string(splits(p));
}

void run(const FlashFwdParams& p, CUstream_st* stream) {
  const auto go = [&](const SplitOut& part) {
    if (p.dtype == ElemType::bf16)
      launch_of<__nv_bfloat16>(p, part, stream);
    else
      launch_of<__half>(p, part, stream);
  };
  SplitOut part;
  part.splits = splits(p);
  if (part.splits == 1)
    return go(part);
  // Partial rows, released in stream order after the merge.
  const std::int64_t rows = static_cast<std::int64_t>(p.B) * p.N * p.T * part.splits;
  StreamScratch ws(static_cast<std::size_t>(rows) * (p.Hv + 1) * sizeof(float), stream,
                   "cuda decode");
  part.o = static_cast<float*>(ws.ptr);
  part.lse = part.o + rows * p.Hv;
  go(part);
  combine(p, part, stream);
}

} // namespace kattn::cuda_kernels::decode
