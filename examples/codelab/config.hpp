// The demo's command line.
#pragma once

#include <string>
#include <vector>

#include "runner.hpp"

namespace codelab {

struct Config {
  std::string out_dir = "report";
  bool quick = false; // tiny sweeps (the CI browser test)
  bool full = false;  // adds the FlashAttention sweep
  std::vector<int> seq = {64, 128, 256, 512, 1024, 2048};
  std::vector<int> batch = {1, 2, 4, 8, 16};
  int batch_T = 256;
  std::vector<int> memory_T = {256, 512, 1024, 2048};
  // Step 10's cache lengths; empty: the defaults for where it runs (steps_decode.cpp).
  std::vector<int> decode_S;
  int decode_B = 4;
  // A sweep cell whose estimated time per call (FLOPs / the backend's last measured rate)
  // exceeds this is skipped, and the table says so: naive is quadratic in memory and slow.
  double cell_limit_s = 1.0;
  TimePolicy policy;
  std::vector<std::string> backends; // empty: every backend available here
};

// Parses argv (see usage()); throws std::invalid_argument on a bad option.
Config parse_args(int argc, char* argv[]);
std::string usage();

} // namespace codelab
