// The state the codelab's steps share, and the steps in the codelab's order.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config.hpp"
#include "report.hpp"
#include "runner.hpp"

namespace codelab {

struct Demo {
  Config cfg;
  Report report;
  std::vector<Impl> impls; // available here (and asked for), reference first
  bool all_close = true;   // step 2's verdicts
  // The dtype each backend is swept in: f32 when it serves f32, else bf16 (GPU backends).
  std::map<std::string, kattn::DType> sweep_dtype;
  // FLOP/s last measured per backend, dtype and pass: what a cell's skip estimate uses.
  std::map<std::string, double> rate;

  // The codelab's default shape: B=4, T=S=128, N=K=8, H=64.
  static Shape default_shape(kattn::DType dtype);
  // "portable (f32)"
  std::string label(const Impl& impl) const;

  // A timed cell: runs (or, when `capped`, skips it with the reason in the row: sweeps only)
  // and records the row.
  Row measure(const std::string& exp, const Impl& impl, const Shape& shape, bool backward,
              bool capped = true);
  // The backends the sweeps, heads and memory steps time: every one but the reference (the
  // slow double-precision ground truth: steps 2, 4 and 5 show it).
  std::vector<const Impl*> swept() const;
  // Why a cell is skipped (estimated too slow / too big), or nothing.
  std::optional<std::string> skip_reason(const Impl& impl, const Shape& shape, bool backward,
                                         double limit_s) const;
};

void step_inputs(Demo& d);   // 1
void step_accuracy(Demo& d); // 2
void step_forcing(Demo& d);  // 3
void step_causal(Demo& d);   // 4
void step_default(Demo& d);  // 5
void step_sweeps(Demo& d);   // 6
void step_heads(Demo& d);    // 7
void step_fp8(Demo& d);      // 8
void step_memory(Demo& d);   // 9
void step_decode(Demo& d);   // 10
void step_flash(Demo& d);    // --full

// Cell text for a row: "12.345" ms, or "skip"/"fail" (the notes say why).
std::string ms_cell(const Row& r);
// The table's notes: one line per distinct reason a cell is missing.
void add_missing_notes(Table& t, const std::vector<Row>& rows);

} // namespace codelab
