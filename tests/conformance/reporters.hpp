// Reports of a conformance run: the summary table (backend x feature), report JSON and JUnit XML.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "conformance/runner.hpp"

namespace kattn::conformance {

struct RunInfo {
  std::uint64_t seed = 0;
  std::int64_t cases = 0; // problems generated and run (regression + random)
  double seconds = 0;
  std::vector<std::string> backends;
  std::vector<std::string> backend_descriptions;
  std::string stopped_early; // why the random matrix stopped before --cases, if it did
};

// The one-line command that runs this result's case alone on its backend.
std::string reproduce_command(const Result& r, std::uint64_t seed);

void write_table(std::ostream& os, const RunInfo& info, const std::vector<Result>& results);
void write_json(std::ostream& os, const RunInfo& info, const std::vector<Result>& results);
void write_junit(std::ostream& os, const RunInfo& info, const std::vector<Result>& results);

} // namespace kattn::conformance
