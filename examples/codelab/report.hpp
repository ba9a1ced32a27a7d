// What the demo found: the tables it printed and the results-schema rows (docs/benchmarks.md),
// written as report/results.json and report/results.csv.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "shape.hpp"

namespace codelab {

// One results-schema row.
struct Row {
  std::string exp;  // the step: default, causal, seq, batch, heads, fp8, memory, decode, flash
  std::string impl; // backend name (or "inputs-only", the memory baseline)
  Shape shape;
  std::string pass = "fwd"; // "fwd" | "fwd+bwd"
  std::optional<double> ms, tflops, peak_bytes;
  std::string error; // why there is no measurement (refused, failed, skipped)
  // Fields past the schema's, written after them in results.json (not in results.csv): the
  // decode step's layout, page_size, tokens_per_s, ... (as benchmarks/gpu/bench_decode.cpp's).
  std::vector<std::pair<std::string, std::string>> more_text;
  std::vector<std::pair<std::string, double>> more_numbers;
};

// A table as printed: the HTML report shows the same cells.
struct Table {
  std::string id;    // the step it belongs to: inputs, accuracy, forcing, ...
  std::string title; // one line above it
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> notes; // lines printed under it
};

class Report {
public:
  std::vector<std::pair<std::string, std::string>> env;
  std::vector<Row> rows;
  std::vector<Table> tables;
  std::vector<std::pair<std::string, std::string>> messages; // (step id, line): e.g. FP8's
  std::string run_id;

  void add_env(const std::string& key, const std::string& value) { env.emplace_back(key, value); }
  // Writes run_id, env, rows, plus "tables" and "messages" (what the HTML page shows).
  void write_json(const std::string& path) const;
  // The rows alone, one line each, schema columns.
  void write_csv(const std::string& path) const;
};

} // namespace codelab
