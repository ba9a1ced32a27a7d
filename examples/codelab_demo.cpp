// The codelab's first table, on the CPU: one attention problem (B=4, T=128, N=8, H=64, fp32)
// run by every backend that supports it, timed and compared with the reference; then what the
// causal mask changes; then what happens when each backend is forced. Exits 1 if a backend's
// output is not close to the reference.
#include <KokkosAttn.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using Exec = Kokkos::DefaultHostExecutionSpace;
using View4 = Kokkos::View<float****, Kokkos::LayoutRight, Kokkos::HostSpace>;
using Table = std::vector<std::vector<std::string>>;

constexpr int B = 4, T = 128, N = 8, H = 64;
constexpr int warmups = 2, repeats = 7;
// fp32 backends vs the reference (double accumulation, rounded to fp32) on unit-variance
// inputs with H = 64: differences of a few 1e-7; 1e-5 flags any real error.
constexpr double close_atol = 1e-5;

void fill_normal(const View4& v, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  float* p = v.data();
  for (std::size_t i = 0; i < v.size(); ++i)
    p[i] = dist(rng);
}

// max |a - b| over the query rows [row_begin, row_end); NaN gives +inf.
double max_abs_diff(const View4& a, const View4& b, int row_begin = 0, int row_end = T) {
  double m = 0;
  for (int b0 = 0; b0 < B; ++b0)
    for (int i = row_begin; i < row_end; ++i)
      for (int n = 0; n < N; ++n)
        for (int c = 0; c < H; ++c) {
          const double d = std::abs(double(a(b0, i, n, c)) - double(b(b0, i, n, c)));
          if (std::isnan(d))
            return std::numeric_limits<double>::infinity();
          m = std::max(m, d);
        }
  return m;
}

std::string shape_of(const View4& v) {
  return KokkosAttn::as_tensor(v).shape_string();
}

std::string format(const char* fmt, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, x);
  return buf;
}

// Left-aligned columns, each as wide as its widest cell, a rule under the header.
void print_table(const Table& rows) {
  std::vector<std::size_t> width;
  for (const auto& row : rows)
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (width.size() <= c)
        width.push_back(0);
      width[c] = std::max(width[c], row[c].size());
    }
  for (std::size_t r = 0; r < rows.size(); ++r) {
    std::string line = "  ";
    for (std::size_t c = 0; c < rows[r].size(); ++c) {
      std::string cell = rows[r][c];
      if (c + 1 < rows[r].size())
        cell.resize(width[c] + 2, ' ');
      line += cell;
    }
    std::printf("%s\n", line.c_str());
    if (r == 0) {
      std::size_t total = 0;
      for (std::size_t w : width)
        total += w + 2;
      std::printf("  %s\n", std::string(total - 2, '-').c_str());
    }
  }
  std::printf("\n");
}

// Median wall time of `run` in milliseconds, after warm-up; every run is fenced.
template <class F>
double median_ms(const Exec& exec, F&& run) {
  for (int i = 0; i < warmups; ++i)
    run();
  exec.fence();
  std::vector<double> ms;
  for (int i = 0; i < repeats; ++i) {
    Kokkos::Timer timer;
    run();
    exec.fence();
    ms.push_back(timer.seconds() * 1e3);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

kattn::Options forced(kattn::Backend b, bool causal = false) {
  kattn::Options o;
  o.backend = b;
  o.causal = causal;
  return o;
}

} // namespace

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard guard(argc, argv);
  const Exec exec;
  View4 q("q", B, T, N, H), k("k", B, T, N, H), v("v", B, T, N, H);
  View4 ref("ref", B, T, N, H), out("out", B, T, N, H);
  fill_normal(q, 1);
  fill_normal(k, 2);
  fill_normal(v, 3);

  std::printf("kokkos-attention codelab demo: Kokkos %s execution space, %d threads\n\n",
              Exec::name(), exec.concurrency());
  std::printf("Shapes (layout [batch, tokens, heads, head_dim], random N(0, 1) inputs)\n");
  print_table({{"tensor", "shape", "dtype"},
               {"q", shape_of(q), "f32"},
               {"k", shape_of(k), "f32"},
               {"v", shape_of(v), "f32"}});

  // Which backends can run this problem here: explain() asks every one.
  kattn::ForwardProblem problem;
  problem.q = KokkosAttn::as_tensor(q);
  problem.k = KokkosAttn::as_tensor(k);
  problem.v = KokkosAttn::as_tensor(v);
  problem.out = KokkosAttn::as_tensor(out);
  const auto verdicts =
      kattn::explain(kattn::default_registry(), problem, KokkosAttn::make_exec_context(exec));

  KokkosAttn::sdpa(exec, q, k, v, ref, forced(kattn::Backend::reference));
  exec.fence();

  std::printf("Backends (time: median of %d runs after %d warm-up; close: max|diff| <= %g)\n",
              repeats, warmups, close_atol);
  Table backends = {
      {"backend", "out shape", "dtype", "time [ms]", "max|diff| vs reference", "close"}};
  bool all_close = true;
  for (const auto& verdict : verdicts) {
    if (!verdict.supported)
      continue;
    const kattn::Options o = forced(verdict.backend);
    Kokkos::deep_copy(out, std::numeric_limits<float>::quiet_NaN());
    const double ms = median_ms(exec, [&] { KokkosAttn::sdpa(exec, q, k, v, out, o); });
    const double diff = max_abs_diff(out, ref);
    const bool close = diff <= close_atol;
    all_close = all_close && close;
    backends.push_back({std::string(kattn::to_string(verdict.backend)), shape_of(out), "f32",
                        format("%.3f", ms), format("%.2e", diff), close ? "yes" : "NO"});
  }
  print_table(backends);

  // The causal step: query i may only attend to keys j <= i.
  View4 causal("causal", B, T, N, H);
  KokkosAttn::sdpa(exec, q, k, v, out);
  KokkosAttn::sdpa(exec, q, k, v, causal, forced(kattn::Backend::automatic, true));
  exec.fence();
  std::printf("Causal mask (difference between causal and non-causal outputs)\n");
  print_table({{"query row", "max|causal - full|", "why"},
               {"first (i = 0)", format("%.4f", max_abs_diff(causal, out, 0, 1)),
                "sees key 0 only instead of all 128"},
               {"last (i = 127)", format("%.2e", max_abs_diff(causal, out, T - 1, T)),
                "sees every key either way"}});

  // Forcing a backend never falls back: it runs, or it raises and says why.
  std::printf("Forcing each backend\n");
  Table forcing = {{"backend", "result"}};
  for (const auto& verdict : verdicts) {
    std::string result = "ok (ran)";
    try {
      KokkosAttn::sdpa(exec, q, k, v, out, forced(verdict.backend));
      exec.fence();
    } catch (const kattn::Unsupported& e) {
      result = std::string("Unsupported: ") + e.what();
    } catch (const kattn::Error& e) {
      result = std::string("Error: ") + e.what();
    }
    forcing.push_back({std::string(kattn::to_string(verdict.backend)), result});
  }
  print_table(forcing);

  if (!all_close)
    std::printf("FAILED: a backend's output is not close to the reference\n");
  return all_close ? 0 : 1;
}
