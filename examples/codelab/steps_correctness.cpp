// Steps 1-4: the inputs, naive vs fused against the reference, forcing each backend, causal.
#include <cmath>

#include "demo.hpp"
#include "terminal.hpp"

namespace codelab {
namespace {

constexpr kattn::DType dtypes[] = {kattn::DType::f32, kattn::DType::bf16};

std::string dt(kattn::DType t) {
  return std::string(kattn::to_string(t));
}

void show(Demo& d, Table t) {
  print_table(t);
  d.report.tables.push_back(std::move(t));
}

// How close a backend must be to the reference (double accumulation, output rounded to the
// dtype) on these N(0, 1) inputs:
// - f32: differences of a few 1e-7 at H = 64; 1e-5 flags any real error.
// - bf16: both outputs are rounded to bf16 (8 significant bits), so they may differ by one bf16
//   ulp of the largest output, <= 2^-7 max|ref|; fused GPU kernels also round the softmax
//   weights P to bf16 before P·V (relative 2^-9 each), adding up to 2^-9·Σp|v| <= 2^-8 max|v|
//   with margin 2.
double tolerance(kattn::DType t, double max_ref, double max_v) {
  if (t == kattn::DType::f32)
    return 1e-5;
  return std::ldexp(max_ref, -7) + std::ldexp(max_v, -8);
}

} // namespace

void step_inputs(Demo& d) {
  print_heading("1. Inputs");
  Table t{"inputs",
          "The codelab's problem: layout [batch, tokens, heads, head_dim], random N(0, 1) inputs",
          {"tensor", "shape", "dtype", "bytes"},
          {},
          {}};
  for (kattn::DType type : dtypes) {
    HostProblem p(Demo::default_shape(type));
    for (const auto& [name, tensor] :
         {std::pair{"q", &p.q}, {"k", &p.k}, {"v", &p.v}, {"out", &p.out}})
      t.rows.push_back(
          {name, tensor->tensor().shape_string(), dt(type),
           format_bytes(double(tensor->tensor().numel()) * double(kattn::size_bytes(type)))});
  }
  const Shape s = Demo::default_shape(kattn::DType::f32);
  t.notes.push_back("B=" + std::to_string(s.B) + " T=S=" + std::to_string(s.T) + " N=K=" +
                    std::to_string(s.N) + " H=" + std::to_string(s.H) + "; one forward pass is " +
                    format("%.3f", s.flops(false) / 1e9) + " GFLOP (4*B*N*T*S*H)");
  std::string names;
  for (const Impl& impl : d.impls)
    names += (names.empty() ? "" : ", ") + impl.name() + (impl.gpu ? " (GPU)" : " (CPU)");
  t.notes.push_back("backends available here: " + names);
  show(d, std::move(t));
}

void step_accuracy(Demo& d) {
  print_heading("2. Naive vs fused: every backend against the reference");
  Table t{"accuracy",
          "Output of each backend vs the reference (double accumulation) on the same inputs",
          {"backend", "dtype", "out shape", "out dtype", "max|diff|", "tolerance", "close"},
          {},
          {}};
  for (kattn::DType type : dtypes) {
    HostProblem p(Demo::default_shape(type));
    std::vector<float> ref;
    {
      Placed r(p, Impl{kattn::Backend::reference, false});
      ref = r.output();
    }
    const double tol = tolerance(type, max_abs(ref), max_abs(p.v.to_float()));
    for (const Impl& impl : d.impls) {
      Placed placed(p, impl);
      std::string why;
      if (!placed.supported(&why)) {
        t.rows.push_back({impl.name(), dt(type), "-", "-", "-", "-", "not run (step 3)"});
        continue;
      }
      if (!d.sweep_dtype.count(impl.name()) || d.sweep_dtype[impl.name()] != kattn::DType::f32)
        d.sweep_dtype[impl.name()] = type; // f32 if served, else the first one that is
      try {
        const std::vector<float> out = placed.output();
        const double diff = max_abs_diff(out, ref, p.shape);
        const bool close = diff <= tol;
        d.all_close = d.all_close && close;
        t.rows.push_back({impl.name(), dt(type), p.out.tensor().shape_string(),
                          dt(p.out.tensor().dtype), format("%.2e", diff), format("%.1e", tol),
                          close ? "yes" : "NO"});
      } catch (const std::exception& e) {
        d.all_close = false;
        t.rows.push_back(
            {impl.name(), dt(type), "-", "-", "-", "-", std::string("failed: ") + e.what()});
      }
    }
  }
  t.notes.push_back("f32: 1e-5 (differences are a few 1e-7); bf16: one bf16 ulp of max|out| "
                    "plus the bf16 rounding of the softmax weights (2^-7 max|ref| + 2^-8 max|v|)");
  show(d, std::move(t));
}

void step_forcing(Demo& d) {
  print_heading("3. Forcing each backend (the codelab's try/except)");
  Table t{"forcing",
          "options.backend = X never falls back: it runs, or raises and says why",
          {"backend", "dtype", "result"},
          {},
          {}};
  for (kattn::DType type : dtypes) {
    HostProblem p(Demo::default_shape(type));
    for (const Impl& impl : all_impls()) {
      std::string why;
      if (!runnable_here(impl, &why)) {
        t.rows.push_back({impl.name(), dt(type), "not run: " + why});
        continue;
      }
      std::string result = "ok (ran)";
      try {
        Placed placed(p, impl);
        placed.run_forward();
        placed.wait();
      } catch (const kattn::Unsupported& e) {
        result = std::string("raised Unsupported: ") + e.what();
      } catch (const kattn::InvalidArgument& e) {
        result = std::string("raised InvalidArgument: ") + e.what();
      } catch (const std::exception& e) {
        result = std::string("raised: ") + e.what();
      }
      t.rows.push_back({impl.name(), dt(type), result});
    }
  }
  show(d, std::move(t));
}

void step_causal(Demo& d) {
  print_heading("4. Causal masking");
  Table t{"causal",
          "max|causal - full| per query row: row 0 sees key 0 only, the last row sees every key",
          {"backend", "dtype", "first row (i=0)", "last row (i=T-1)", "full ms", "causal ms"},
          {},
          {}};
  for (const Impl& impl : d.impls) {
    const auto type = d.sweep_dtype.find(impl.name());
    if (type == d.sweep_dtype.end())
      continue; // serves neither dtype here (step 3 says why)
    Shape s = Demo::default_shape(type->second);
    try {
      HostProblem full(s);
      s.causal = true;
      HostProblem causal(s);
      Placed pf(full, impl), pc(causal, impl);
      const std::vector<float> a = pf.output(), b = pc.output();
      const Row rf = d.measure("causal", impl, full.shape, false, false);
      const Row rc = d.measure("causal", impl, causal.shape, false, false);
      t.rows.push_back({impl.name(), dt(s.dtype), format("%.4f", max_abs_diff(a, b, s, 0, 1)),
                        format("%.2e", max_abs_diff(a, b, s, s.T - 1, s.T)), ms_cell(rf),
                        ms_cell(rc)});
    } catch (const std::exception& e) {
      t.rows.push_back(
          {impl.name(), dt(s.dtype), "-", "-", "-", std::string("failed: ") + e.what()});
    }
  }
  t.notes.push_back("the last row differs by rounding only: it sees the same keys either way");
  show(d, std::move(t));
}

} // namespace codelab
