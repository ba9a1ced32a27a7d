// Reports of a conformance run: the summary table (backend x feature), report JSON and JUnit XML.
#pragma once

#include <cstdint>
#include <istream>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "conformance/runner.hpp"

namespace kattn::conformance {

struct RunInfo {
  std::uint64_t seed = 0;
  Mix mix = Mix::all;
  std::int64_t cases = 0; // problems generated and run (regression + random)
  double seconds = 0;
  std::vector<std::string> backends;
  std::vector<std::string> backend_descriptions;
  std::string stopped_early; // why the random matrix stopped before --cases, if it did
  std::string command;       // the command line (summary JSON)
  std::string device;        // the GPU the GPU backends ran on, if any
  // --supported-only: random cases drawn but refused by every backend, hence neither run nor
  // counted in `cases`, and their reasons (backend -> reason -> count).
  std::int64_t uncounted = 0;
  std::map<std::string, std::map<std::string, std::int64_t>> uncounted_reasons;
  std::int64_t shards = 1;
};

// The one-line command that runs this result's case alone on its backend.
std::string reproduce_command(const Result& r, const RunInfo& info);

void write_table(std::ostream& os, const RunInfo& info, const std::vector<Result>& results);
void write_json(std::ostream& os, const RunInfo& info, const std::vector<Result>& results);
void write_junit(std::ostream& os, const RunInfo& info, const std::vector<Result>& results);
// Compact summary: counts per backend and per feature x backend, unsupported reasons with counts,
// each failure with its reproduce command; no per-result records.
void write_summary_json(std::ostream& os, const RunInfo& info, const std::vector<Result>& results);

// One line per result plus "#"-lines for the run info: what --merge reads back (checks' numbers
// are not kept). read_tsv adds to info (cases, seconds as the longest shard) and results.
// write_tsv_result lines may come first (written as cases finish, so a shard that dies still
// leaves them); write_tsv_info goes last.
void write_tsv_result(std::ostream& os, const Result& r);
void write_tsv_info(std::ostream& os, const RunInfo& info);
void read_tsv(std::istream& is, RunInfo& info, std::vector<Result>& results);

} // namespace kattn::conformance
