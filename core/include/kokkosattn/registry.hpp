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

  static Support yes() { return {true, {}}; }
  static Support no(std::string why) { return {false, std::move(why)}; }
};

class BackendImpl {
public:
  virtual ~BackendImpl() = default;
  virtual Backend id() const = 0;
  // Library versions and build facts shown by explain(), e.g. "cuDNN 9.19.0".
  virtual std::string description() const { return {}; }
  // Called only with validated problems; must not touch tensor data.
  virtual Support supports(const ForwardProblem& p, const Dims& d, const ExecContext& x) const = 0;
  virtual Support supports(const BackwardProblem& p, const Dims& d, const ExecContext& x) const = 0;
  // A forward shape class where this backend measured faster than the backends `auto` tries
  // before it (the measurement belongs in docs/performance.md): returns why, and `auto` then
  // tries this backend first (it must still pass supports()). Empty (the default): no claim.
  // Called before supports() and must be cheap; device facts (architecture, kernel family) are
  // the backend's to check, which is why this is not a rule in kattn::auto_order.
  virtual std::string leads(const ForwardProblem& p, const Dims& d, const ExecContext& x) const {
    (void)p, (void)d, (void)x;
    return {};
  }
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
