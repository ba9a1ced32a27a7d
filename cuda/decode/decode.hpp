// The decode kernel's hooks for the entry (src/flash_fwd.cpp): what it serves, when auto takes
// it, its split count, its name (which explain() prints, splits included) and the run.
#pragma once

#include <string>

#include "kattn_kernels/flash_params.hpp"

struct CUstream_st;

namespace kattn::cuda_kernels::decode {

// Empty when the decode kernel serves p: bf16/f16, H == Hv in {64, 128, 256}, head-dim stride
// 1, dense or padded batches (packed varlen: the flash families), grid limits.
std::string unsupported_reason(const FlashFwdParams& p);

// Whether auto prefers the decode kernel where it serves p: a paged cache (only it reads one),
// or few query rows per KV head (kAutoMaxTokens new tokens and at most kAutoMaxRows packed
// rows), where the flash kernels' 64-128-row query tiles sit mostly empty.
inline constexpr int kAutoMaxTokens = 16;
inline constexpr int kAutoMaxRows = 64;
bool auto_takes(const FlashFwdParams& p);

// The split count the kernel uses for p on the current device (kattn_kernels/decode_splits.hpp).
int splits(const FlashFwdParams& p);

std::string kernel_name(const FlashFwdParams& p);

void run(const FlashFwdParams& p, CUstream_st* stream);

} // namespace kattn::cuda_kernels::decode
