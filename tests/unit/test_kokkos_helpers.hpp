// Test helper for the Kokkos front end: random host Views and the reference result for them.
#pragma once

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "KokkosAttn.hpp"
#include "kokkosattn/builtin_backends.hpp"
#include "kokkosattn/validate.hpp"
#include "reference/reference.hpp"

namespace kattn::test {

template <class View>
void fill_random(const View& v, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> dist(0.0, 1.0);
  for (std::size_t a = 0; a < v.extent(0); ++a)
    for (std::size_t b = 0; b < v.extent(1); ++b)
      for (std::size_t c = 0; c < v.extent(2); ++c)
        for (std::size_t d = 0; d < v.extent(3); ++d)
          v(a, b, c, d) = static_cast<typename View::value_type>(dist(rng));
}

template <class View>
void fill_nan(const View& v) {
  Kokkos::deep_copy(v, std::numeric_limits<typename View::value_type>::quiet_NaN());
}

// max |a - b| over rank-4 Views of equal extents; NaN anywhere gives +inf.
template <class A, class B>
double max_diff4(const A& a, const B& b) {
  double m = 0;
  for (std::size_t i = 0; i < a.extent(0); ++i)
    for (std::size_t j = 0; j < a.extent(1); ++j)
      for (std::size_t k = 0; k < a.extent(2); ++k)
        for (std::size_t l = 0; l < a.extent(3); ++l) {
          const double d =
              std::abs(static_cast<double>(a(i, j, k, l)) - static_cast<double>(b(i, j, k, l)));
          if (std::isnan(d))
            return std::numeric_limits<double>::infinity();
          m = std::max(m, d);
        }
  return m;
}

template <class View>
bool all_nan4(const View& v) {
  for (std::size_t i = 0; i < v.extent(0); ++i)
    for (std::size_t j = 0; j < v.extent(1); ++j)
      for (std::size_t k = 0; k < v.extent(2); ++k)
        for (std::size_t l = 0; l < v.extent(3); ++l)
          if (!std::isnan(static_cast<double>(v(i, j, k, l))))
            return false;
  return true;
}

// The reference backend's output for Views q, k, v (written to `ref`, any layout).
template <class Q, class K, class V, class R>
void reference_out(const Q& q, const K& k, const V& v, const R& ref, const Options& o = {},
                   const Extras& e = {}) {
  ForwardProblem p;
  p.q = KokkosAttn::as_tensor(q);
  p.k = KokkosAttn::as_tensor(k);
  p.v = KokkosAttn::as_tensor(v);
  p.out = KokkosAttn::as_tensor(ref);
  p.options = o;
  p.extras = e;
  reference::forward(p, validate(p));
}

// Host Views in the [B, T, N, H] layout.
template <class T, class Layout = Kokkos::LayoutRight>
using View4 = Kokkos::View<T****, Layout, Kokkos::HostSpace>;

} // namespace kattn::test
