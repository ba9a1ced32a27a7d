// Runs one case: the f64 reference (ref) and the same-precision baseline once, then every
// selected backend (forced through dispatch, asked first through explain()), each judged with
// judge.hpp's rule. GPU backends (cudnn, cuda) get device copies of every tensor and
// ExecContext{Device::cuda} when the build has CUDA and a GPU is present (device_copy.hpp);
// otherwise they see the host problem, as every other backend does.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/paged_cache.hpp"
#include "conformance/conformance_case.hpp"
#include "conformance/judge.hpp"
#include "conformance/sparse_mapping.hpp"
#include "kokkosattn/backend.hpp"
#include "kokkosattn/exec_context.hpp"

namespace kattn::conformance {

enum class Status { pass, fail, unsupported, skipped };
std::string_view to_string(Status s);

struct Result {
  std::string backend;
  std::string case_name;
  std::int64_t index = -1;
  std::string description;
  std::vector<std::string> features;
  Status status = Status::fail;
  std::string reason; // unsupported: supports()'s reason; fail: what went wrong
  std::vector<Check> checks;
  double seconds = 0;
};

// A case made ready: the problem in its dtype (the backends' inputs and outputs), the f64 truth
// and the baseline outputs, in logical order, keyed like Check::tensor.
struct Prepared {
  struct Output {
    std::string tensor;
    std::vector<double> ref, baseline;
    double floor = 0;
  };
  std::unique_ptr<test::Attn> lo;
  std::unique_ptr<test::PagedCache> paged; // Case::page_size > 0: lo's k and v in pages
  std::vector<Output> outputs;
  Magnitudes magnitudes;
  std::vector<std::unique_ptr<SparseMapping>> mappings;
  std::string skip_reason; // non-empty: the case cannot run here (e.g. mmap refused)
};

// Throws kattn::Error (or std::exception) when the case itself is broken.
Prepared prepare(const Case& c);

// What the backend wrote into p.lo for tensor `name`, in logical order.
std::vector<double> read_output(const Prepared& p, const std::string& name);

// precheck: ask every backend first (explain(), no reference computed) and return their
// refusals at once when all refuse; the caller may then leave the case uncounted.
std::vector<Result> run_case(const Case& c, const std::vector<Backend>& backends,
                             const ExecContext& x, bool precheck = false);

} // namespace kattn::conformance
