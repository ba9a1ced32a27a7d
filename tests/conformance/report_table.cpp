// The summary table: one row per feature, one "pass/fail/unsupported" column per backend.
#include <algorithm>
#include <iomanip>
#include <map>

#include "conformance/reporters.hpp"

namespace kattn::conformance {

std::string reproduce_command(const Result& r, const RunInfo& info) {
  std::string cmd = "kokkos-attn-conformance --backend " + r.backend;
  if (r.index >= 0)
    return cmd + " --seed " + std::to_string(info.seed) +
           (info.mix == Mix::gpu ? " --mix gpu" : "") + " --case " + std::to_string(r.index) +
           " --cases 1";
  return cmd + " --filter '" + r.case_name + "' --cases 0";
}

namespace {
struct Counts {
  std::int64_t pass = 0, fail = 0, unsupported = 0, skipped = 0;
  void add(Status s) {
    (s == Status::pass          ? pass
     : s == Status::fail        ? fail
     : s == Status::unsupported ? unsupported
                                : skipped)++;
  }
  std::string cell() const {
    std::string c =
        std::to_string(pass) + "/" + std::to_string(fail) + "/" + std::to_string(unsupported);
    if (skipped)
      c += " (" + std::to_string(skipped) + " skipped)";
    return c;
  }
};
} // namespace

void write_table(std::ostream& os, const RunInfo& info, const std::vector<Result>& results) {
  // Feature rows: the matrix's dimensions in a fixed order, then anything else in order of first
  // appearance, then the regression ids. Fixed rows show even when no case carried them.
  std::vector<std::string> rows{"all cases",
                                "f64",
                                "f32",
                                "f16",
                                "bf16",
                                "forward",
                                "backward",
                                "contiguous",
                                "strided [B,N,T,H] view",
                                "head dim >= 64",
                                "Hv != H",
                                "T = 1 (decode)",
                                "T or S not a multiple of 16",
                                "T or S > 64 (several tiles)",
                                "GQA",
                                "MQA",
                                "causal",
                                "window",
                                "bottom_right alignment",
                                "padded varlen",
                                "packed varlen",
                                "bias",
                                "boolean mask",
                                "ALiBi",
                                "softcap",
                                "attention sinks",
                                "paged KV cache",
                                "dropout",
                                "explicit scale"};
  std::vector<std::string> regressions;
  std::map<std::pair<std::string, std::string>, Counts> cells;
  for (const Result& r : results) {
    cells[{"all cases", r.backend}].add(r.status);
    for (const std::string& f : r.features) {
      auto& list = f.rfind("regression/", 0) == 0 ? regressions : rows;
      if (std::find(list.begin(), list.end(), f) == list.end())
        list.push_back(f);
      cells[{f, r.backend}].add(r.status);
    }
  }
  rows.insert(rows.end(), regressions.begin(), regressions.end());
  std::size_t w0 = 7;
  for (const std::string& f : rows)
    w0 = std::max(w0, f.size());
  std::vector<std::size_t> w;
  for (const std::string& b : info.backends) {
    std::size_t wb = std::max<std::size_t>(b.size(), 16);
    for (const std::string& f : rows)
      wb = std::max(wb, cells[{f, b}].cell().size());
    w.push_back(wb);
  }
  os << "\nconformance summary: pass/fail/unsupported per backend and feature\n";
  os << std::left << std::setw(static_cast<int>(w0 + 2)) << "feature";
  for (std::size_t i = 0; i < info.backends.size(); ++i)
    os << std::setw(static_cast<int>(w[i] + 2)) << info.backends[i];
  os << "\n" << std::string(w0 + 2, '-');
  for (std::size_t wb : w)
    os << std::string(wb + 2, '-');
  os << "\n";
  for (const std::string& f : rows) {
    os << std::setw(static_cast<int>(w0 + 2)) << f;
    for (std::size_t i = 0; i < info.backends.size(); ++i)
      os << std::setw(static_cast<int>(w[i] + 2)) << cells[{f, info.backends[i]}].cell();
    os << "\n";
  }
  os << std::right;
}

} // namespace kattn::conformance
