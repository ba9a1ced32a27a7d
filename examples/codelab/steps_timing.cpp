// Steps 5-7 (default-shape timings, sequence and batch sweeps, MHA/GQA/MQA) and --full's
// FlashAttention sweep.
#include <functional>

#include "demo.hpp"
#include "terminal.hpp"

namespace codelab {
namespace {

std::string dt(kattn::DType t) {
  return std::string(kattn::to_string(t));
}

void show(Demo& d, Table t) {
  print_table(t);
  d.report.tables.push_back(std::move(t));
}

std::string tflops_cell(const Row& r) {
  return r.tflops ? format(*r.tflops < 0.1 ? "%.4f" : "%.2f", *r.tflops) : "-";
}

// One sweep: a row per value, a column per backend (ms), skipped cells explained in the notes.
void sweep(Demo& d, const std::string& exp, const std::string& title, const std::string& what,
           const std::vector<int>& values,
           const std::function<Shape(int, kattn::DType)>& shape_for) {
  Table t{exp, title, {what}, {}, {}};
  const std::vector<const Impl*> swept = d.swept();
  for (const Impl* impl : swept)
    t.columns.push_back(d.label(*impl) + " ms");
  for (const Impl* impl : swept)
    t.columns.push_back(impl->name() + " TFLOP/s");
  Progress progress(exp, int(values.size() * swept.size()));
  std::vector<Row> rows;
  for (int x : values) {
    std::vector<std::string> ms, tf;
    for (const Impl* impl : swept) {
      const Shape s = shape_for(x, d.sweep_dtype[impl->name()]);
      progress.next(impl->name() + " " + s.describe());
      const Row r = d.measure(exp, *impl, s, false);
      rows.push_back(r);
      ms.push_back(ms_cell(r));
      tf.push_back(tflops_cell(r));
    }
    std::vector<std::string> cells{std::to_string(x)};
    cells.insert(cells.end(), ms.begin(), ms.end());
    cells.insert(cells.end(), tf.begin(), tf.end());
    t.rows.push_back(cells);
  }
  add_missing_notes(t, rows);
  show(d, std::move(t));
}

Shape seq_shape(int T, kattn::DType dtype) {
  Shape s = Demo::default_shape(dtype);
  s.T = s.S = T;
  return s;
}

} // namespace

void step_default(Demo& d) {
  print_heading("5. Timings at the default shape");
  Table t{"default",
          "Forward, B=4 T=S=128 N=K=8 H=64: median of " + std::to_string(d.cfg.policy.repeats) +
              " runs after " + std::to_string(d.cfg.policy.warmups) + " warm-up" +
              " (CPU: wall time of a fenced call; GPU: CUDA events)",
          {"backend", "dtype", "ms", "TFLOP/s"},
          {},
          {}};
  std::vector<std::pair<std::string, double>> bars;
  std::vector<Row> rows;
  for (kattn::DType type : {kattn::DType::f32, kattn::DType::bf16})
    for (const Impl& impl : d.impls) {
      const Row r = d.measure("default", impl, Demo::default_shape(type), false, false);
      if (r.error.rfind("refused", 0) == 0)
        continue; // step 3 shows why
      rows.push_back(r);
      t.rows.push_back({impl.name(), dt(type), ms_cell(r), tflops_cell(r)});
      if (r.ms)
        bars.emplace_back(impl.name() + " " + dt(type), *r.ms);
    }
  add_missing_notes(t, rows);
  show(d, std::move(t));
  print_bar_chart(bars, "ms");
}

void step_sweeps(Demo& d) {
  print_heading("6. Sequence and batch sweeps");
  sweep(d, "seq", "Forward time vs sequence length T=S (B=4, N=K=8, H=64)", "T", d.cfg.seq,
        seq_shape);
  const int T = d.cfg.batch_T;
  sweep(d, "batch", "Forward time vs batch size B (T=S=" + std::to_string(T) + ", N=K=8, H=64)",
        "B", d.cfg.batch, [T](int B, kattn::DType dtype) {
          Shape s = seq_shape(T, dtype);
          s.B = B;
          return s;
        });
}

void step_heads(Demo& d) {
  print_heading("7. MHA / GQA / MQA");
  Table t{"heads",
          "N=8 query heads sharing K key/value heads (query head n reads KV head n / (N/K))",
          {"variant", "N", "K", "q shape", "k, v shape"},
          {},
          {}};
  const std::vector<const Impl*> swept = d.swept();
  for (const Impl* impl : swept)
    t.columns.push_back(d.label(*impl) + " ms");
  std::vector<Row> rows;
  for (const auto& [name, K] : {std::pair{"MHA", 8}, {"GQA", 2}, {"MQA", 1}}) {
    Shape s = Demo::default_shape(kattn::DType::f32);
    s.K = K;
    std::vector<std::string> cells{
        name, std::to_string(s.N), std::to_string(K),
        kattn::Tensor::contiguous(nullptr, s.dtype, {s.B, s.T, s.N, s.H}).shape_string(),
        kattn::Tensor::contiguous(nullptr, s.dtype, {s.B, s.S, K, s.H}).shape_string()};
    for (const Impl* impl : swept) {
      s.dtype = d.sweep_dtype[impl->name()];
      const Row r = d.measure("heads", *impl, s, false, false);
      rows.push_back(r);
      cells.push_back(ms_cell(r));
    }
    t.rows.push_back(cells);
  }
  t.notes.push_back("k and v are N/K times smaller with GQA/MQA; the attention FLOPs are the same");
  add_missing_notes(t, rows);
  show(d, std::move(t));
}

namespace {

// With a GPU, the sweep times the GPU backends only: at 16k tokens a host backend takes
// seconds per cell (portable ~0.5 TFLOP/s on 16 cores) and every cell would run into
// --cell-limit, which cost minutes on the H200 for "skip" cells. Without one, the host ones.
std::vector<const Impl*> flash_backends(const Demo& d) {
  std::vector<const Impl*> gpu;
  for (const Impl* impl : d.swept())
    if (impl->gpu)
      gpu.push_back(impl);
  return gpu.empty() ? d.swept() : gpu;
}

} // namespace

void step_flash(Demo& d) {
  print_heading("FlashAttention sweep (--full): 16k tokens, hidden 2048");

  const std::vector<int> Ts = {512, 1024, 2048, 4096, 8192, 16384};
  for (int H : {64, 128, 256})
    for (bool causal : {false, true})
      for (bool backward : {false, true}) {
        const std::string pass = backward ? "fwd+bwd" : "fwd";
        Table t{"flash",
                "H=" + std::to_string(H) + ", N=" + std::to_string(2048 / H) +
                    (causal ? ", causal" : ", not causal") + ", " + pass +
                    ": TFLOP/s (B = 16384/T)",
                {"T"},
                {},
                {}};
        const std::vector<const Impl*> swept = flash_backends(d);
        for (const Impl* impl : swept)
          t.columns.push_back(d.label(*impl));
        Progress progress("flash H=" + std::to_string(H), int(Ts.size() * swept.size()));
        std::vector<Row> rows;
        for (int T : Ts) {
          std::vector<std::string> cells{std::to_string(T)};
          for (const Impl* impl : swept) {
            Shape s = Demo::default_shape(d.sweep_dtype[impl->name()]);
            s.T = s.S = T;
            s.B = 16384 / T;
            s.H = H;
            s.N = s.K = 2048 / H;
            s.causal = causal;
            progress.next(impl->name() + " " + s.describe() + " " + pass);
            const Row r = d.measure("flash", *impl, s, backward);
            rows.push_back(r);
            cells.push_back(r.tflops ? tflops_cell(r) : ms_cell(r));
          }
          t.rows.push_back(cells);
        }
        add_missing_notes(t, rows);
        if (swept.size() < d.swept().size())
          t.notes.push_back(
              "GPU backends only: a host backend needs seconds per cell at 16k tokens");
        show(d, std::move(t));
      }
}

} // namespace codelab
