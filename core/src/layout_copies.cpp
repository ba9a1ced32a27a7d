#include "kokkosattn/layout_copies.hpp"

namespace kattn {
namespace {

constexpr LayoutCopies::Role forward_roles[] = {LayoutCopies::q, LayoutCopies::k, LayoutCopies::v,
                                                LayoutCopies::out, LayoutCopies::lse};
constexpr LayoutCopies::Role backward_roles[] = {
    LayoutCopies::q,    LayoutCopies::k,  LayoutCopies::v,  LayoutCopies::out, LayoutCopies::lse,
    LayoutCopies::dout, LayoutCopies::dq, LayoutCopies::dk, LayoutCopies::dv};

template <class Problem, class Roles>
LayoutCopies copies_of(const Problem& p, const Roles& roles) {
  LayoutCopies c;
  for (LayoutCopies::Role r : roles)
    if (const Tensor* t = tensor_of(p, r); t != nullptr && t->defined() && !is_row_major(*t))
      c.add(r);
  return c;
}

template <class Problem>
Problem copies_applied(Problem p, LayoutCopies c) {
  for (int r = 0; r < LayoutCopies::count; ++r) {
    const auto role = static_cast<LayoutCopies::Role>(r);
    if (!c.has(role))
      continue;
    Tensor* t = tensor_of(p, role);
    *t = row_major_like(*t, nullptr);
  }
  return p;
}

} // namespace

const char* LayoutCopies::name(Role r) {
  static constexpr const char* names[] = {"q", "k", "v", "out", "lse", "dout", "dq", "dk", "dv"};
  return r < count ? names[r] : "?";
}

std::string LayoutCopies::names() const {
  std::string s;
  for (int r = 0; r < count; ++r)
    if (has(static_cast<Role>(r)))
      s += (s.empty() ? "" : ", ") + std::string(name(static_cast<Role>(r)));
  return s;
}

bool is_row_major(const Tensor& t) {
  std::int64_t want = 1;
  for (int d = t.rank - 1; d >= 0; --d) {
    const auto i = static_cast<std::size_t>(d);
    // Extent-1 dimensions may carry any stride (Kokkos gives them the next one's product).
    if (t.extent[i] != 1 && t.stride[i] != want)
      return false;
    want *= t.extent[i];
  }
  return true;
}

Tensor row_major_like(const Tensor& t, void* data) {
  Tensor r = t;
  r.data = data;
  std::int64_t s = 1;
  for (int d = t.rank - 1; d >= 0; --d) {
    r.stride[static_cast<std::size_t>(d)] = s;
    s *= t.extent[static_cast<std::size_t>(d)];
  }
  return r;
}

const Tensor* tensor_of(const ForwardProblem& p, LayoutCopies::Role r) {
  switch (r) {
  case LayoutCopies::q:
    return &p.q;
  case LayoutCopies::k:
    return &p.k;
  case LayoutCopies::v:
    return &p.v;
  case LayoutCopies::out:
    return &p.out;
  case LayoutCopies::lse:
    return &p.extras.lse;
  default:
    return nullptr;
  }
}

const Tensor* tensor_of(const BackwardProblem& p, LayoutCopies::Role r) {
  switch (r) {
  case LayoutCopies::dout:
    return &p.dout;
  case LayoutCopies::dq:
    return &p.dq;
  case LayoutCopies::dk:
    return &p.dk;
  case LayoutCopies::dv:
    return &p.dv;
  default:
    return tensor_of(p.forward, r);
  }
}

Tensor* tensor_of(ForwardProblem& p, LayoutCopies::Role r) {
  return const_cast<Tensor*>(tensor_of(static_cast<const ForwardProblem&>(p), r));
}
Tensor* tensor_of(BackwardProblem& p, LayoutCopies::Role r) {
  return const_cast<Tensor*>(tensor_of(static_cast<const BackwardProblem&>(p), r));
}

LayoutCopies copies_for(const ForwardProblem& p) {
  return copies_of(p, forward_roles);
}
LayoutCopies copies_for(const BackwardProblem& p) {
  return copies_of(p, backward_roles);
}

ForwardProblem with_copies(const ForwardProblem& p, LayoutCopies c) {
  return copies_applied(p, c);
}
BackwardProblem with_copies(const BackwardProblem& p, LayoutCopies c) {
  return copies_applied(p, c);
}

} // namespace kattn
