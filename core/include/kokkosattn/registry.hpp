// Backends register here; each answers whether it supports a problem and why not.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kokkosattn/backend.hpp"
#include "kokkosattn/exec_context.hpp"
#include "kokkosattn/problem.hpp"

namespace kattn {

struct Support {
  bool ok = false;
  std::string reason; // empty when ok
  // When ok: the kernel that would run, where the backend has several (e.g.
  // "sm90_fwd_bf16_h128_long_tail"); the auto policy's measured leads match on it.
  std::string kernel;

  static Support yes(std::string kernel = {}) { return {true, {}, std::move(kernel)}; }
  static Support no(std::string why) { return {false, std::move(why), {}}; }
};

class BackendImpl {
public:
  virtual ~BackendImpl() = default;
  virtual Backend id() const = 0;
  // Library versions and build facts shown by explain(), e.g. "cuDNN 9.19.0".
  virtual std::string description() const { return {}; }
  // Called only with validated problems; must not touch tensor data, and must be cheap (the
  // auto policy may ask twice per call).
  // Whether forward() reads k and v through extras.page_table (docs/semantics.md, paged_kv).
  // Dispatch refuses a paged problem for a backend without it before asking supports(), so a
  // backend that never heard of page tables cannot misread a paged cache as [B, S, K, H].
  virtual bool serves_paged_kv() const { return false; }
  virtual Support supports(const ForwardProblem& p, const Dims& d, const ExecContext& x) const = 0;
  virtual Support supports(const BackwardProblem& p, const Dims& d, const ExecContext& x) const = 0;
  virtual void forward(const ForwardProblem& p, const Dims& d, const ExecContext& x) const = 0;
  virtual void backward(const BackwardProblem& p, const Dims& d, const ExecContext& x) const = 0;
};

class Registry {
public:
  // Replaces an earlier backend with the same id.
  void add(std::unique_ptr<BackendImpl> impl);
  // nullptr when that backend is not built in.
  const BackendImpl* find(Backend b) const;
  std::vector<const BackendImpl*> all() const;

private:
  std::vector<std::unique_ptr<BackendImpl>> impls_;
};

// The process-wide registry holding every backend this build has (built on first use).
const Registry& default_registry();

} // namespace kattn
