// Steps 8 (FP8 where a backend serves it) and 9 (peak memory vs T).
#include "demo.hpp"
#include "element_convert.hpp"
#include "memory_child.hpp"
#include "terminal.hpp"

namespace codelab {
namespace {

void show(Demo& d, Table t) {
  print_table(t);
  d.report.tables.push_back(std::move(t));
}

} // namespace

void step_fp8(Demo& d) {
  print_heading("8. FP8");
  Table t{"fp8",
          "FP8 (E4M3) q, k, v, out at the default shape: what each backend says",
          {"backend", "FP8 E4M3", "ms", "max|diff| vs reference"},
          {},
          {}};
  const Shape s = Demo::default_shape(kattn::DType::f8_e4m3);
  bool any = false;
  std::string reasons;
  for (const Impl& impl : all_impls()) {
    Row r;
    r.exp = "fp8";
    r.impl = impl.name();
    r.shape = s;
    std::string why;
    if (!runnable_here(impl, &why)) {
      if (impl.backend == kattn::Backend::hip)
        continue; // no AMD backend in this build: nothing to say about FP8
      r.error = "not run: " + why;
    } else {
      try {
        HostProblem host(s);
        Placed placed(host, impl);
        if (!placed.supported(&why)) {
          r.error = "refused: " + why;
        } else {
          any = true;
          // The reference reads no FP8: it runs on the same values widened to f32.
          Shape s32 = s;
          s32.dtype = kattn::DType::f32;
          HostProblem wide(s32);
          for (auto [from, to] :
               {std::pair{&host.q, &wide.q}, {&host.k, &wide.k}, {&host.v, &wide.v}}) {
            const std::vector<float> x = from->to_float();
            for (std::size_t i = 0; i < x.size(); ++i)
              store_element(to->tensor().data, kattn::DType::f32, long(i), x[i]);
          }
          Placed ref(wide, Impl{kattn::Backend::reference, false});
          const double diff = max_abs_diff(placed.output(), ref.output(), s);
          const Timing tm = time_it(placed, impl.gpu, false, d.cfg.policy);
          r.ms = tm.ms;
          r.tflops = s.flops(false) / (tm.ms * 1e-3) / 1e12;
          t.rows.push_back({impl.name(), "yes", format("%.3f", tm.ms), format("%.2e", diff)});
        }
      } catch (const std::exception& e) {
        r.error = std::string("failed: ") + e.what();
      }
    }
    if (!r.error.empty()) {
      t.rows.push_back({impl.name(), r.error, "-", "-"});
      reasons += (reasons.empty() ? "" : ", ") + impl.name() +
                 (r.error.rfind("refused", 0) == 0 ? " refuses f8_e4m3" : " not run here");
    }
    d.report.rows.push_back(r);
  }
  if (!any) {
    const std::string line = "FP8: not available on this machine (" + reasons + ")";
    t.notes.push_back("no backend here serves FP8: the codelab's \"not available on this GPU\"");
    d.report.messages.emplace_back("fp8", line);
  }
  show(d, std::move(t));
}

void step_memory(Demo& d) {
  print_heading("9. Memory");
  Table t{"memory",
          "Peak memory of one forward pass vs T (B=4, N=K=8, H=64), each in a fresh process",
          {"T", "inputs only (host)"},
          {},
          {}};
  const std::vector<const Impl*> measured = d.swept();
  for (const Impl* impl : measured)
    t.columns.push_back(d.label(*impl) + (impl->gpu ? " device" : " host"));
  Progress progress("memory", int(d.cfg.memory_T.size() * (measured.size() + 1)));
  std::vector<Row> rows;
  for (int T : d.cfg.memory_T) {
    std::vector<std::string> cells{std::to_string(T)};
    Shape base = Demo::default_shape(kattn::DType::f32);
    base.T = base.S = T;
    progress.next("inputs only T=" + std::to_string(T));
    const PeakMemory inputs = measure_peak_memory("inputs-only", base);
    Row ri{"memory", "inputs-only", base, "fwd", {}, {}, {}, inputs.error, {}, {}};
    if (inputs.error.empty())
      ri.peak_bytes = inputs.host_bytes;
    d.report.rows.push_back(ri);
    cells.push_back(ri.peak_bytes ? format_bytes(*ri.peak_bytes) : "fail");
    for (const Impl* impl : measured) {
      Shape s = base;
      s.dtype = d.sweep_dtype[impl->name()];
      progress.next(impl->name() + " T=" + std::to_string(T));
      Row r{"memory", impl->name(), s, "fwd", {}, {}, {}, {}, {}, {}};
      // One call per measurement: allow three cell limits.
      if (const auto why = d.skip_reason(*impl, s, false, 3 * d.cfg.cell_limit_s)) {
        r.error = *why;
      } else {
        const PeakMemory m = measure_peak_memory(impl->name(), s);
        r.error = m.error;
        if (m.error.empty())
          r.peak_bytes = impl->gpu ? m.device_bytes : m.host_bytes;
      }
      d.report.rows.push_back(r);
      rows.push_back(r);
      cells.push_back(r.peak_bytes ? format_bytes(*r.peak_bytes) : ms_cell(r));
    }
    t.rows.push_back(cells);
  }
  t.notes.push_back("host: the child's peak resident set (VmHWM: runtime + inputs + the "
                    "backend's memory); compare with 'inputs only'");
  if (device::built())
    t.notes.push_back("device: GPU memory in use after the call minus before the inputs "
                      "(cudaMemGetInfo): inputs + what the backend keeps allocated");
  add_missing_notes(t, rows);
  show(d, std::move(t));
}

} // namespace codelab
