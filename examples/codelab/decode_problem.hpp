// Step 10's problem: B sequences decoding token by token against a KV cache held twice with the
// same keys, paged (page_table over shuffled pages, so no sequence is contiguous) and contiguous
// [B, S, K, H], in the default execution space's memory. A decode step is the library's
// documented pair (docs/semantics.md, paged_kv): KokkosAttn::append_kv of the new token's key and
// value, then KokkosAttn::sdpa of its query over every key held, causal bottom-right.
#pragma once

#include <KokkosAttn.hpp>

#include <memory>
#include <string>
#include <vector>

namespace codelab {

struct DecodeShape {
  int B = 4, S = 1024, N = 8, K = 2, H = 64;
  int page = 16; // vLLM's block size
  int steps = 8; // tokens a loop appends: the caches start with S - steps keys and end with S
  kattn::DType dtype = kattn::DType::bf16;
};

// What the front end's dispatch says about one decode step's sdpa (KokkosAttn::explain's
// content): the backend and kernel that run it, and every backend's verdict.
struct DecodeServed {
  std::string backend, kernel, selection;      // selection: "backend=... (auto) kernel=..."
  std::vector<kattn::BackendVerdict> verdicts; // explain()'s list
};

class DecodeProblem {
public:
  // bf16 or f32 (the caller picks the first the backends serve).
  static std::unique_ptr<DecodeProblem> make(const DecodeShape& shape);
  virtual ~DecodeProblem() = default;

  const DecodeShape& shape() const { return shape_; }
  // Both caches back to S - steps keys per sequence (seqlens_k), ready for a loop.
  virtual void restart() = 0;
  // Enqueues decode step t (0 <= t < steps) on one cache: append token t, attend with its query.
  virtual void step(bool paged, int t) = 0;
  virtual void fence() = 0;
  // The last step's output [B, 1, N, H] as floats.
  virtual std::vector<float> output(bool paged) = 0;
  // The library's reference (double accumulation, on the host) for step t, on the keys a
  // correct cache holds then: made on the host from the generated values, not from either cache.
  virtual std::vector<float> reference(int t) = 0;
  // After a whole loop: both caches hold every key and value bit for bit where they belong and
  // seqlens_k reads S; otherwise false and what differs.
  virtual bool caches_complete(std::string* why_not) = 0;
  virtual DecodeServed served(bool paged) = 0;
  // max |v| over the values (for the bf16 tolerance).
  virtual double max_abs_v() const = 0;

protected:
  explicit DecodeProblem(const DecodeShape& shape) : shape_(shape) {}
  DecodeShape shape_;
};

} // namespace codelab
