// KokkosAttn::Distributed::sdpa on 1-4 ranks (CTest runs this under mpiexec -np 1, 2, 3, 4 with
// --oversubscribe on the host: 2 cores here). Every rank builds the same global problem from one
// seed, passes its slice, and compares its rows with the global problem computed on one rank:
// contiguous blocks of ragged lengths (one rank empty), zigzag chunks, causal or not, GQA,
// f32 and f64, out and LSE; then bad inputs, which must raise the same exception on every rank.
//
// Tolerance (the 2x rule of docs/semantics.md against the f64 reference): err(distributed) <=
// 2 err(single rank, same dtype and backend) + atol. atol covers what the ring adds: each block's
// out is rounded to the dtype before the merge (f32: u = 2^-24 per block, so P u max|v|), and
// the merge weights come from the backends' f32 LSE (an absolute LSE error e weighs a block by
// e^e ~ 1 + e: about 1e-6 relative for |LSE| ~ 10, which bounds f64 results too).
#include <mpi.h>

#include <Kokkos_Core.hpp>

#include <KokkosAttn_Distributed.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "kokkosattn/dispatch.hpp"
#include "kokkosattn/errors.hpp"
#include "kokkosattn/registry.hpp"
#include "ring_geometry.hpp"

namespace {

using kattn::DType;
using kattn::Tensor;
using KokkosAttn::Distributed::Layout;
using KokkosAttn::Distributed::Scheme;
using KokkosAttn::Distributed::Split;

int g_rank = 0, g_size = 1, g_failures = 0;

void check(bool ok, const std::string& what) {
  if (!ok) {
    ++g_failures;
    std::printf("rank %d FAILED: %s\n", g_rank, what.c_str());
  }
}

// A [B, L, heads, dim] tensor over `data` (f64 or f32 storage).
Tensor tensor(std::vector<double>& d64, std::vector<float>& d32, DType t, std::int64_t B,
              std::int64_t L, std::int64_t h, std::int64_t dim) {
  void* p = t == DType::f64 ? static_cast<void*>(d64.data()) : static_cast<void*>(d32.data());
  return Tensor::contiguous(p, t, {B, L, h, dim});
}

struct Buf {
  std::vector<double> d64;
  std::vector<float> d32;
  Buf(std::size_t n, double fill = 0) : d64(n, fill), d32(n, static_cast<float>(fill)) {}
  double at(DType t, std::size_t i) const { return t == DType::f64 ? d64[i] : d32[i]; }
};

struct Case {
  const char* name;
  DType dtype;
  Split split;
  bool causal;
  std::vector<std::int64_t> lengths; // per rank (for g_size ranks)
  Scheme scheme = Scheme::ring;
  std::int64_t window_left = -1; // the all-to-all serves windows
};

std::int64_t sum(const std::vector<std::int64_t>& v) {
  std::int64_t s = 0;
  for (std::int64_t x : v)
    s += x;
  return s;
}

// Global row of local row i on this rank (the layout's segments).
std::int64_t global_row(const std::vector<kattn::distributed::Segment>& segs, std::int64_t i) {
  for (const auto& s : segs)
    if (i >= s.local && i < s.local + s.length)
      return s.global + i - s.local;
  return -1;
}

constexpr std::int64_t kB = 2, kN = 8, kK = 4, kH = 16; // K = 4: the all-to-all on 1, 2, 4 ranks

// Rows of a global [B, T, heads, dim] buffer for this rank's local rows (or back: `scatter`).
Buf slice(const Buf& g, std::int64_t T, std::int64_t Tl, std::int64_t heads,
          const std::vector<kattn::distributed::Segment>& mine) {
  Buf l(std::size_t(kB * Tl * heads * kH));
  for (std::int64_t b = 0; b < kB; ++b)
    for (std::int64_t i = 0; i < Tl; ++i) {
      const std::int64_t gi = global_row(mine, i);
      for (std::int64_t x = 0; x < heads * kH; ++x) {
        l.d64[std::size_t((b * Tl + i) * heads * kH + x)] =
            g.d64[std::size_t((b * T + gi) * heads * kH + x)];
        l.d32[std::size_t((b * Tl + i) * heads * kH + x)] =
            g.d32[std::size_t((b * T + gi) * heads * kH + x)];
      }
    }
  return l;
}

// max |local - global rows| over this rank's rows (local in dtype t, global f64).
double row_error(const Buf& l, DType t, const Buf& g, std::int64_t T, std::int64_t Tl,
                 std::int64_t heads, const std::vector<kattn::distributed::Segment>& mine) {
  const Buf gl = slice(g, T, Tl, heads, mine);
  double e = 0;
  for (std::size_t i = 0; i < gl.d64.size(); ++i)
    e = std::max(e, std::abs(l.at(t, i) - gl.d64[i]));
  return e;
}

double max_error(const Buf& a, DType t, const Buf& ref) {
  double e = 0;
  for (std::size_t i = 0; i < ref.d64.size(); ++i)
    e = std::max(e, std::abs(a.at(t, i) - ref.d64[i]));
  return e;
}

// One global problem (the same on every rank from one seed), its f64 reference and the
// single-rank run in the case's dtype (portable).
struct Global {
  std::int64_t T;
  Buf q, k, v, ref, ref_lse, one, one_lse;
  Global(std::int64_t t, const kattn::Options& o, DType dt)
      : T(t), q(n(kN)), k(n(kK)), v(n(kK)), ref(n(kN)), ref_lse(lse_n()), one(n(kN)),
        one_lse(lse_n()) {
    std::mt19937_64 rng(1234);
    std::normal_distribution<double> nd;
    for (Buf* b : {&q, &k, &v})
      for (std::size_t i = 0; i < b->d64.size(); ++i) {
        b->d32[i] = static_cast<float>(nd(rng));
        b->d64[i] = b->d32[i]; // the same values in both precisions
      }
    run(o, DType::f64, kattn::Backend::reference, ref, ref_lse);
    run(o, dt, kattn::Backend::portable, one, one_lse);
  }
  std::size_t n(std::int64_t heads) const { return std::size_t(kB * T * heads * kH); }
  std::size_t lse_n() const { return std::size_t(kB * kN * T); }
  void run(const kattn::Options& o, DType t, kattn::Backend be, Buf& out, Buf& lse) {
    kattn::ForwardProblem p;
    p.q = tensor(q.d64, q.d32, t, kB, T, kN, kH);
    p.k = tensor(k.d64, k.d32, t, kB, T, kK, kH);
    p.v = tensor(v.d64, v.d32, t, kB, T, kK, kH);
    p.out = tensor(out.d64, out.d32, t, kB, T, kN, kH);
    p.extras.lse = Tensor::contiguous(lse.d32.data(), DType::f32, {kB, kN, T});
    p.options = o;
    p.options.backend = be;
    kattn::run_forward(kattn::default_registry(), p, kattn::ExecContext{});
  }
};

void run_case(const Case& c) {
  const std::int64_t T = sum(c.lengths), Tl = c.lengths[std::size_t(g_rank)];
  const auto segs = kattn::distributed::rank_segments(c.split, c.lengths);
  const auto& mine = segs[std::size_t(g_rank)];
  kattn::Options o;
  o.causal = c.causal;
  o.window_left = c.window_left;
  const Global g(T, o, c.dtype);
  // This rank's slice, outputs poisoned.
  Buf ql = slice(g.q, T, Tl, kN, mine), kl = slice(g.k, T, Tl, kK, mine),
      vl = slice(g.v, T, Tl, kK, mine);
  const double nan = std::nan("");
  Buf out(std::size_t(kB * Tl * kN * kH), nan), lse(std::size_t(kB * kN * Tl), nan);
  kattn::ForwardProblem p;
  p.q = tensor(ql.d64, ql.d32, c.dtype, kB, Tl, kN, kH);
  p.k = tensor(kl.d64, kl.d32, c.dtype, kB, Tl, kK, kH);
  p.v = tensor(vl.d64, vl.d32, c.dtype, kB, Tl, kK, kH);
  p.out = tensor(out.d64, out.d32, c.dtype, kB, Tl, kN, kH);
  p.extras.lse = Tensor::contiguous(lse.d32.data(), DType::f32, {kB, kN, Tl});
  p.options = o;
  Layout layout;
  layout.split = c.split;
  layout.scheme = c.scheme;
  KokkosAttn::Distributed::sdpa(Kokkos::DefaultHostExecutionSpace{}, MPI_COMM_WORLD, p, layout);

  double vmax = 0;
  for (double x : g.v.d64)
    vmax = std::max(vmax, std::abs(x));
  const double atol = (static_cast<double>(g_size) * 0x1p-24 + 1e-6) * vmax;
  const double err = row_error(out, c.dtype, g.ref, T, Tl, kN, mine);
  const double tol = 2 * max_error(g.one, c.dtype, g.ref) + atol;
  double err_lse = 0;
  for (std::int64_t b = 0; b < kB; ++b)
    for (std::int64_t i = 0; i < Tl; ++i)
      for (std::int64_t n = 0; n < kN; ++n)
        err_lse = std::max(
            err_lse, std::abs(double(lse.d32[std::size_t((b * kN + n) * Tl + i)]) -
                              g.ref_lse.d32[std::size_t((b * kN + n) * T + global_row(mine, i))]));
  char buf[400];
  std::snprintf(buf, sizeof buf, "%s, %s %s (np %d): out err %.2g (tol %.2g), lse err %.2g",
                c.scheme == Scheme::all_to_all ? "all-to-all" : "ring", c.name,
                c.dtype == DType::f64 ? "f64" : "f32", g_size, err, tol, err_lse);
  if (g_rank == 0)
    std::printf("%s\n", buf);
  check(std::isfinite(err) && err <= tol, std::string("out: ") + buf);
  check(std::isfinite(err_lse) && err_lse <= 1e-5 * 16, std::string("lse: ") + buf);
}

// Every rank must see an exception of type E whose message contains `needle`.
template <class E, class F>
void every_rank_throws(const char* what, const char* needle, const F& f) {
  std::string got = "no exception";
  bool typed = false;
  try {
    f();
  } catch (const E& e) {
    typed = true;
    got = e.what();
  } catch (const std::exception& e) {
    got = std::string("other exception: ") + e.what();
  }
  check(typed && got.find(needle) != std::string::npos,
        std::string(what) + ": expected \"" + needle + "\", got \"" + got + "\"");
}

void bad_inputs() {
  constexpr std::int64_t B = 1, N = 2, H = 8, T = 4;
  std::vector<float> q(B * T * N * H, 0.5f), o(q.size());
  kattn::ForwardProblem p;
  p.q = Tensor::contiguous(q.data(), DType::f32, {B, T, N, H});
  p.k = p.v = p.q;
  p.out = Tensor::contiguous(o.data(), DType::f32, {B, T, N, H});
  const auto run = [&](const kattn::ForwardProblem& x, Layout l = {}) {
    KokkosAttn::Distributed::sdpa(Kokkos::DefaultHostExecutionSpace{}, MPI_COMM_WORLD, x, l);
  };
  // A bad tensor on the last rank only: every rank reports it, naming that rank.
  {
    kattn::ForwardProblem x = p;
    if (g_rank == g_size - 1)
      x.out.extent[3] = H + 1;
    const std::string who = "rank " + std::to_string(g_size - 1) + ": out";
    every_rank_throws<kattn::InvalidArgument>("bad out on the last rank", who.c_str(),
                                              [&] { run(x); });
  }
  // Ranks that disagree on a size.
  if (g_size > 1) {
    std::vector<float> q2(B * T * 2 * N * H, 0.5f), o2(q2.size());
    kattn::ForwardProblem x = p;
    if (g_rank == 1) {
      x.q = Tensor::contiguous(q2.data(), DType::f32, {B, T, 2 * N, H});
      x.out = Tensor::contiguous(o2.data(), DType::f32, {B, T, 2 * N, H});
    }
    every_rank_throws<kattn::InvalidArgument>("ranks disagree on N", "N: expected every rank",
                                              [&] { run(x); });
  }
  // Zigzag needs equal even local lengths.
  {
    kattn::ForwardProblem x = p;
    x.q.extent[1] = x.k.extent[1] = x.v.extent[1] = x.out.extent[1] = 3;
    Layout z;
    z.split = Split::zigzag;
    every_rank_throws<kattn::InvalidArgument>("zigzag, odd lengths", "layout: zigzag",
                                              [&] { run(x, z); });
  }
  {
    kattn::ForwardProblem x = p;
    x.options.window_left = 2;
    every_rank_throws<kattn::Unsupported>("window", "options.window", [&] { run(x); });
  }
  for (float y : o)
    check(y == 0.f, "nothing written on failure");
}

} // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  Kokkos::initialize(argc, argv);
  {
    const std::vector<std::int64_t> ragged_all = {13, 0, 9, 21};
    std::vector<std::int64_t> ragged(ragged_all.begin(), ragged_all.begin() + g_size);
    if (g_size == 1)
      ragged = {13};
    const std::vector<std::int64_t> even(std::size_t(g_size), 10); // zigzag chunks of 5
    for (DType t : {DType::f32, DType::f64})
      for (bool causal : {false, true}) {
        run_case({causal ? "contiguous ragged causal" : "contiguous ragged", t, Split::contiguous,
                  causal, ragged});
        run_case({causal ? "zigzag causal" : "zigzag", t, Split::zigzag, causal, even});
      }
    // The all-to-all over heads: P must divide K (4); windows served (whole sequence in order).
    if (kK % g_size == 0) {
      for (DType t : {DType::f32, DType::f64}) {
        run_case(
            {"contiguous ragged causal", t, Split::contiguous, true, ragged, Scheme::all_to_all});
        run_case({"zigzag", t, Split::zigzag, false, even, Scheme::all_to_all});
        run_case({"contiguous ragged causal, window 6", t, Split::contiguous, true, ragged,
                  Scheme::all_to_all, 6});
      }
    } else {
      kattn::ForwardProblem x;
      std::vector<float> z(std::size_t(kB * 4 * kN * kH)), zo(z.size());
      x.q = Tensor::contiguous(z.data(), DType::f32, {kB, 4, kN, kH});
      x.k = x.v = Tensor::contiguous(z.data(), DType::f32, {kB, 4, kK, kH});
      x.out = Tensor::contiguous(zo.data(), DType::f32, {kB, 4, kN, kH});
      Layout a2a;
      a2a.scheme = Scheme::all_to_all;
      every_rank_throws<kattn::InvalidArgument>(
          "all-to-all, P not dividing K", "layout.scheme: the all-to-all over heads needs", [&] {
            KokkosAttn::Distributed::sdpa(Kokkos::DefaultHostExecutionSpace{}, MPI_COMM_WORLD, x,
                                          a2a);
          });
    }
    bad_inputs();
  }
  int total = 0;
  MPI_Allreduce(&g_failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (g_rank == 0)
    std::printf("distributed tests on %d ranks: %d failure(s)\n", g_size, total);
  Kokkos::finalize();
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
