// The demo's device runs through the Kokkos front end the way a user calls it: Views of the
// device copies, typed by the problem's dtype (float, double, Kokkos::Experimental::half_t /
// bhalf_t), passed to KokkosAttn::sdpa on the demo's Kokkos::Cuda instance. FP8 has no Kokkos
// element type: those problems go to the front end's raw-tensor overload. Only built against a
// Kokkos with CUDA (runner.cpp), where naive and portable run on the GPU beside cudnn and cuda.
#pragma once

#include <KokkosAttn.hpp>

#include <cstdint>

namespace codelab::views {

template <class T, class Exec>
auto view(const kattn::Tensor& t) {
  using V = Kokkos::View<T****, Kokkos::LayoutRight, typename Exec::memory_space,
                         Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  return V(static_cast<T*>(t.data), t.extent[0], t.extent[1], t.extent[2], t.extent[3]);
}

// The demo's tensors are rank-4 row-major copies; anything else takes the raw-tensor path.
inline bool typed_ok(const kattn::Tensor& t) {
  return t.rank == 4 && kattn::is_row_major(t);
}

template <class T, class Exec>
void forward_typed(const Exec& exec, const kattn::ForwardProblem& p) {
  KokkosAttn::sdpa(exec, view<T, Exec>(p.q), view<T, Exec>(p.k), view<T, Exec>(p.v),
                   view<T, Exec>(p.out), p.options, p.extras);
}

template <class T, class Exec>
void backward_typed(const Exec& exec, const kattn::BackwardProblem& p) {
  const kattn::ForwardProblem& f = p.forward;
  KokkosAttn::sdpa_backward(exec, view<T, Exec>(f.q), view<T, Exec>(f.k), view<T, Exec>(f.v),
                            view<T, Exec>(f.out), view<T, Exec>(p.dout), view<T, Exec>(p.dq),
                            view<T, Exec>(p.dk), view<T, Exec>(p.dv), f.options, f.extras, p.dbias);
}

// Calls f.template operator()<T>() with T the View element type of `dtype`; false for dtypes
// without one (FP8).
template <class F>
bool with_element_type(kattn::DType dtype, const F& f) {
  switch (dtype) {
  case kattn::DType::f64:
    return f(double{}), true;
  case kattn::DType::f32:
    return f(float{}), true;
  case kattn::DType::f16:
    return f(Kokkos::Experimental::half_t{}), true;
  case kattn::DType::bf16:
    return f(Kokkos::Experimental::bhalf_t{}), true;
  default:
    return false;
  }
}

template <class Exec>
void forward(const Exec& exec, const kattn::ForwardProblem& p) {
  const bool typed =
      typed_ok(p.q) && typed_ok(p.k) && typed_ok(p.v) && typed_ok(p.out) &&
      with_element_type(p.q.dtype, [&](auto tag) { forward_typed<decltype(tag)>(exec, p); });
  if (!typed)
    KokkosAttn::sdpa(exec, p);
}

template <class Exec>
void backward(const Exec& exec, const kattn::BackwardProblem& p) {
  const kattn::ForwardProblem& f = p.forward;
  const bool typed =
      typed_ok(f.q) && typed_ok(f.k) && typed_ok(f.v) && typed_ok(f.out) && typed_ok(p.dout) &&
      typed_ok(p.dq) && typed_ok(p.dk) && typed_ok(p.dv) &&
      with_element_type(f.q.dtype, [&](auto tag) { backward_typed<decltype(tag)>(exec, p); });
  if (!typed)
    KokkosAttn::sdpa_backward(exec, p);
}

} // namespace codelab::views
