// Command line of kokkos-attn-conformance.
#pragma once

#include "conformance/conformance_case.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kattn::conformance {

struct CliOptions {
  std::uint64_t seed = 1;
  Mix mix = Mix::all;                // which problems the random matrix draws (--mix)
  std::int64_t cases = 4000;         // random cases to run (after the regression list)
  std::int64_t first_case = 0;       // index of the first random case
  bool single = false;               // --case given: reproduce, skip the regression list
  double time_budget = 0;            // seconds for the random matrix; 0 = no limit
  std::vector<std::string> backends; // empty = every built backend
  std::string filter;                // substring of a case's name, description or features
  std::string json_path = "report/conformance.json";
  std::string junit_path = "report/conformance.junit.xml";
  std::string summary_path;           // compact summary JSON (counts, reasons, failures); "" = none
  std::string tsv_path;               // one line per result, for --merge; "" = none
  std::vector<std::string> merge;     // --merge: report on these --tsv files instead of running
  bool supported_only = false;        // random cases every backend refuses are not counted
  std::int64_t shard = 0, shards = 1; // this process takes random indices i % shards == shard
  bool list = false;                  // print the cases, run nothing
  bool verbose = false;               // one line per result
};

extern const char* const usage_text;

// nullopt after printing usage (--help); throws std::invalid_argument on bad input.
std::optional<CliOptions> parse_cli(int argc, char** argv);

} // namespace kattn::conformance
