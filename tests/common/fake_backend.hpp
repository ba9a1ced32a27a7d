// Test helper: a BackendImpl that answers supports() as told, counts every call, writes a
// marker value into the outputs when it runs (so "outputs untouched" checks can fail), and can
// throw on demand. Lets dispatch and validation be tested without any real backend.
#pragma once

#include <array>
#include <memory>
#include <stdexcept>
#include <string>

#include "kokkosattn/detail/host_access.hpp"
#include "kokkosattn/errors.hpp"
#include "kokkosattn/registry.hpp"

namespace kattn::test {

struct FakeCalls {
  int supports_forward = 0;
  int supports_backward = 0;
  int forward = 0;
  int backward = 0;
  int runs() const { return forward + backward; }
};

// Writes `value` into every element of a host floating tensor (any strides, rank <= 4).
inline void fill_tensor(const Tensor& t, double value) {
  if (!t.defined() || t.space != MemorySpace::host || !is_floating(t.dtype))
    return;
  std::array<std::int64_t, Tensor::max_rank> e{1, 1, 1, 1};
  for (int d = 0; d < t.rank; ++d)
    e[static_cast<std::size_t>(d)] = t.extent[static_cast<std::size_t>(d)];
  Tensor full = t;
  for (int d = t.rank; d < Tensor::max_rank; ++d)
    full.stride[static_cast<std::size_t>(d)] = 0;
  for (std::int64_t a = 0; a < e[0]; ++a)
    for (std::int64_t b = 0; b < e[1]; ++b)
      for (std::int64_t c = 0; c < e[2]; ++c)
        for (std::int64_t d = 0; d < e[3]; ++d)
          store_double(t, element_offset(full, a, b, c, d), value);
}

class FakeBackend : public BackendImpl {
public:
  enum class Throw { nothing, runtime_error, unsupported, integer };

  FakeBackend(Backend id, std::shared_ptr<FakeCalls> calls) : id_(id), calls_(std::move(calls)) {}

  // Refuse every problem (forward and backward) with this reason.
  FakeBackend& refuse(std::string reason) {
    refuse_forward_ = refuse_backward_ = true;
    reason_ = std::move(reason);
    return *this;
  }
  FakeBackend& refuse_backward_only(std::string reason) {
    refuse_backward_ = true;
    reason_ = std::move(reason);
    return *this;
  }
  FakeBackend& throw_on_run(Throw t) {
    throw_run_ = t;
    return *this;
  }
  FakeBackend& throw_in_supports(Throw t) {
    throw_supports_ = t;
    return *this;
  }
  // The kernel name supports() reports when it accepts (Support::kernel): what the auto policy's
  // measured leads match on.
  FakeBackend& kernel(std::string name) {
    kernel_ = std::move(name);
    return *this;
  }
  FakeBackend& describe(std::string d) {
    description_ = std::move(d);
    return *this;
  }
  // Refuse problems whose main tensors are not row-major (as the GPU kernels refuse head-dim
  // strides other than 1), or whose dtype is not 16-bit (as they refuse f32).
  FakeBackend& need_row_major() {
    need_row_major_ = true;
    return *this;
  }
  // Head-dim stride 1 for the outputs only (out, dq, dk, dv): the inputs are read as given, as
  // the cuda backend's sm90 kernels read sequence-major q, k, v.
  FakeBackend& need_row_major_outputs() {
    need_row_major_outputs_ = true;
    return *this;
  }
  FakeBackend& need_16bit() {
    need_16bit_ = true;
    return *this;
  }

  Backend id() const override { return id_; }
  std::string description() const override { return description_; }
  Support supports(const ForwardProblem& p, const Dims&, const ExecContext&) const override {
    ++calls_->supports_forward;
    maybe_throw(throw_supports_);
    if (Support s = layout_and_dtype({&p.q, &p.k, &p.v, &p.out}); !s.ok)
      return s;
    if (Support s = outputs_layout({&p.out}); !s.ok)
      return s;
    return refuse_forward_ ? Support::no(reason_) : Support::yes(kernel_);
  }
  Support supports(const BackwardProblem& p, const Dims&, const ExecContext&) const override {
    ++calls_->supports_backward;
    maybe_throw(throw_supports_);
    const ForwardProblem& f = p.forward;
    if (Support s = layout_and_dtype({&f.q, &f.k, &f.v, &f.out, &p.dout, &p.dq, &p.dk, &p.dv});
        !s.ok)
      return s;
    if (Support s = outputs_layout({&p.dq, &p.dk, &p.dv}); !s.ok)
      return s;
    return refuse_backward_ ? Support::no(reason_) : Support::yes(kernel_);
  }
  void forward(const ForwardProblem& p, const Dims&, const ExecContext&) const override {
    ++calls_->forward;
    maybe_throw(throw_run_);
    fill_tensor(p.out, marker);
    fill_tensor(p.extras.lse, marker);
  }
  void backward(const BackwardProblem& p, const Dims&, const ExecContext&) const override {
    ++calls_->backward;
    maybe_throw(throw_run_);
    for (const Tensor* t : {&p.dq, &p.dk, &p.dv, &p.dbias})
      fill_tensor(*t, marker);
  }

  static constexpr double marker = 0.25;

private:
  Support layout_and_dtype(std::initializer_list<const Tensor*> ts) const {
    for (const Tensor* t : ts) {
      if (need_row_major_ && t->defined() && t->stride[std::size_t(t->rank - 1)] != 1)
        return Support::no("expected head-dim stride 1, got " +
                           std::to_string(t->stride[std::size_t(t->rank - 1)]));
      if (need_16bit_ && t->defined() && t->dtype != DType::bf16 && t->dtype != DType::f16)
        return Support::no("expected bf16 or f16, got " + std::string(to_string(t->dtype)));
    }
    return Support::yes();
  }
  Support outputs_layout(std::initializer_list<const Tensor*> ts) const {
    for (const Tensor* t : ts)
      if (need_row_major_outputs_ && t->defined() && t->stride[std::size_t(t->rank - 1)] != 1)
        return Support::no("expected an output with head-dim stride 1, got " +
                           std::to_string(t->stride[std::size_t(t->rank - 1)]));
    return Support::yes();
  }
  void maybe_throw(Throw t) const {
    switch (t) {
    case Throw::nothing:
      return;
    case Throw::runtime_error:
      throw std::runtime_error("fake device error 42");
    case Throw::unsupported:
      throw Unsupported("fake backend: no kernel for this case");
    case Throw::integer:
      throw 42;
    }
  }

  bool need_row_major_ = false, need_row_major_outputs_ = false, need_16bit_ = false;
  Backend id_;
  std::shared_ptr<FakeCalls> calls_;
  bool refuse_forward_ = false;
  bool refuse_backward_ = false;
  std::string reason_;
  std::string kernel_;
  Throw throw_run_ = Throw::nothing;
  Throw throw_supports_ = Throw::nothing;
  std::string description_;
};

// A registry holding one accepting fake backend (naive), for validation tests.
inline Registry fake_registry(const std::shared_ptr<FakeCalls>& calls) {
  Registry r;
  r.add(std::make_unique<FakeBackend>(Backend::naive, calls));
  return r;
}

} // namespace kattn::test
