#include "reference/reference.hpp"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace kattn::reference {

namespace {

std::string_view device_name(Device dev) {
  switch (dev) {
  case Device::cpu:
    return "cpu";
  case Device::cuda:
    return "cuda";
  case Device::hip:
    return "hip";
  }
  return "unknown";
}

bool readable_float(DType t) {
  return t == DType::f64 || t == DType::f32 || t == DType::f16 || t == DType::bf16;
}

using Named = std::vector<std::pair<const char*, const Tensor*>>;

Named forward_tensors(const ForwardProblem& p) {
  const Extras& e = p.extras;
  return {{"q", &p.q},
          {"k", &p.k},
          {"v", &p.v},
          {"out", &p.out},
          {"bias", &e.bias},
          {"mask", &e.mask},
          {"alibi_slopes", &e.alibi_slopes},
          {"sinks", &e.sinks},
          {"seqlens_q", &e.seqlens_q},
          {"seqlens_k", &e.seqlens_k},
          {"cu_seqlens_q", &e.cu_seqlens_q},
          {"cu_seqlens_k", &e.cu_seqlens_k},
          {"page_table", &e.page_table},
          {"lse", &e.lse}};
}

// Host memory, CPU, and float tensors the host conversions can read and write.
Support check(const Named& tensors, const ExecContext& x) {
  if (x.device != Device::cpu)
    return Support::no("reference: runs on the cpu only, got device " +
                       std::string(device_name(x.device)));
  for (const auto& [name, t] : tensors) {
    if (!t->defined())
      continue;
    if (t->space != MemorySpace::host)
      return Support::no("reference: " + std::string(name) + " is in " +
                         std::string(to_string(t->space)) +
                         " memory; the reference backend runs on the host only");
    // Masks and lengths are boolean / i32 (validation checks those); everything else is read
    // or written through load_double / store_double.
    const bool integral = t->dtype == DType::boolean || t->dtype == DType::i32;
    if (!integral && !readable_float(t->dtype))
      return Support::no("reference: dtype " + std::string(to_string(t->dtype)) +
                         " not supported (" + name + "; expected f64, f32, f16 or bf16)");
  }
  return Support::yes();
}

class ReferenceBackend final : public BackendImpl {
public:
  Backend id() const override { return Backend::reference; }
  bool serves_paged_kv() const override { return true; }
  std::string description() const override {
    return "plain C++ on the host, double accumulation (the ground truth)";
  }
  Support supports(const ForwardProblem& p, const Dims&, const ExecContext& x) const override {
    return check(forward_tensors(p), x);
  }
  Support supports(const BackwardProblem& p, const Dims&, const ExecContext& x) const override {
    Named all = forward_tensors(p.forward);
    all.insert(all.end(), {{"dout", &p.dout},
                           {"dq", &p.dq},
                           {"dk", &p.dk},
                           {"dv", &p.dv},
                           {"dbias", &p.dbias},
                           {"dsinks", &p.dsinks}});
    return check(all, x);
  }
  void forward(const ForwardProblem& p, const Dims& d, const ExecContext&) const override {
    reference::forward(p, d);
  }
  void backward(const BackwardProblem& p, const Dims& d, const ExecContext&) const override {
    reference::backward(p, d);
  }
};

} // namespace

std::unique_ptr<BackendImpl> make_reference_backend() {
  return std::make_unique<ReferenceBackend>();
}

} // namespace kattn::reference
