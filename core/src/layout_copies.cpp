#include "kokkosattn/layout_copies.hpp"

#include <vector>

namespace kattn {
namespace {

template <class Problem>
LayoutCopies copies_of(const Problem& p) {
  LayoutCopies c;
  for (int r = 0; r < LayoutCopies::count; ++r) {
    const auto role = static_cast<LayoutCopies::Role>(r);
    if (const Tensor* t = tensor_of(p, role); t != nullptr && t->defined() && !is_row_major(*t))
      c.add(role);
  }
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
  return copies_of(p);
}
LayoutCopies copies_for(const BackwardProblem& p) {
  return copies_of(p);
}

ForwardProblem with_copies(const ForwardProblem& p, LayoutCopies c) {
  return copies_applied(p, c);
}
BackwardProblem with_copies(const BackwardProblem& p, LayoutCopies c) {
  return copies_applied(p, c);
}

std::vector<LayoutCopies> copy_choices(LayoutCopies all, bool backward) {
  LayoutCopies outputs;
  for (int r = 0; r < LayoutCopies::count; ++r)
    if (const auto role = static_cast<LayoutCopies::Role>(r);
        all.has(role) && LayoutCopies::is_output(role, backward))
      outputs.add(role);
  std::vector<LayoutCopies> v;
  if (outputs.any() && outputs.mask != all.mask)
    v.push_back(outputs);
  if (all.any())
    v.push_back(all);
  return v;
}

} // namespace kattn
