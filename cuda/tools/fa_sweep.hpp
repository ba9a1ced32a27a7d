// The FA sweep's problem shapes for the kernel tools: 16k tokens (B = 16384 / T), hidden 2048
// (N = K = 2048 / H), T = S, [B, T, N, H] tensors and LSE [B, N, T]; and the tools' list flags.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "kattn_kernels/flash_params.hpp"

namespace kattn::cuda_tools {

inline constexpr int kSweepTokens = 16384;
inline constexpr int kSweepHidden = 2048;

// q, k, v, out hold kSweepTokens x kSweepHidden elements; lse kSweepTokens x 64 floats.
// S = 0: S = T; B = 0: kSweepTokens / max(T, S) (a caller's B must keep B * max(T, S) within
// kSweepTokens).
inline FlashFwdParams fa_sweep_params(ElemType dtype, int T, int H, bool causal, void* q, void* k,
                                      void* v, void* out, float* lse, int S = 0, int B = 0) {
  FlashFwdParams p;
  p.dtype = dtype;
  p.T = T;
  p.S = S > 0 ? S : T;
  p.B = B > 0 ? B : kSweepTokens / (p.T > p.S ? p.T : p.S);
  p.N = p.K = kSweepHidden / H;
  p.H = p.Hv = H;
  p.q = q, p.k = k, p.v = v, p.out = out, p.lse = lse;
  const std::int64_t row = kSweepHidden;
  p.q_row_stride = p.k_row_stride = p.v_row_stride = p.o_row_stride = row;
  p.q_head_stride = p.k_head_stride = p.v_head_stride = p.o_head_stride = H;
  p.q_batch_stride = p.o_batch_stride = row * p.T;
  p.k_batch_stride = p.v_batch_stride = row * p.S;
  p.lse_batch_stride = static_cast<std::int64_t>(p.N) * T;
  p.lse_head_stride = T;
  p.lse_row_stride = 1;
  p.scale = 1.f / std::sqrt(static_cast<float>(H));
  p.window_right = causal ? 0 : -1;
  return p;
}

// The same problem with q, k, v sequence-major ([B, H, N, T] storage: token stride 1, the B = 1
// Kokkos LayoutLeft layout per batch; the sm90 family's _seq kernels) over the same buffers;
// out and lse keep their layout.
inline void make_seq_major(FlashFwdParams& p) {
  const auto set = [&](std::int64_t len, int heads, std::int64_t& batch, std::int64_t& row,
                       std::int64_t& head, std::int64_t& dim) {
    row = 1;
    head = len;
    dim = len * heads;
    batch = len * heads * p.H;
  };
  set(p.T, p.N, p.q_batch_stride, p.q_row_stride, p.q_head_stride, p.q_dim_stride);
  set(p.S, p.K, p.k_batch_stride, p.k_row_stride, p.k_head_stride, p.k_dim_stride);
  set(p.S, p.K, p.v_batch_stride, p.v_row_stride, p.v_head_stride, p.v_dim_stride);
}

// "512,1024" -> {512, 1024}
inline std::vector<int> parse_int_list(const char* s) {
  std::vector<int> v;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    v.push_back(std::atoi(item.c_str()));
  return v;
}

// The flags both kernel tools take: --repeats R, --T list, --H list; and, for separating a
// per-tile cost from a per-key-block one, --S list (key lengths run at every T; empty: S = T)
// and --B n (fixed batch; 0: the sweep's 16k tokens).
struct SweepFlags {
  int repeats;
  std::vector<int> Ts;
  std::vector<int> Hs;
  std::vector<int> Ss = {};
  int B = 0;
};

// (T, S, B) fit the tools' kSweepTokens-row buffers.
inline bool sweep_shape_fits(int T, int S, int B) {
  const long long rows = T > S ? T : S;
  return T > 0 && S > 0 && (B > 0 ? rows * B : rows) <= kSweepTokens;
}

// Consumes argv[i] (and its value) when it is one of SweepFlags' flags; false otherwise.
inline bool parse_sweep_flag(int& i, int argc, char** argv, SweepFlags& f) {
  const std::string a = argv[i];
  if (i + 1 >= argc) {
    return false;
  }
  if (a == "--repeats") {
    f.repeats = std::atoi(argv[++i]);
  } else if (a == "--T") {
    f.Ts = parse_int_list(argv[++i]);
  } else if (a == "--H") {
    f.Hs = parse_int_list(argv[++i]);
  } else if (a == "--S") {
    f.Ss = parse_int_list(argv[++i]);
  } else if (a == "--B") {
    f.B = std::atoi(argv[++i]);
  } else {
    return false;
  }
  return true;
}

} // namespace kattn::cuda_tools
