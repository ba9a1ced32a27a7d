// Terminal output: aligned tables, horizontal bar charts and a progress line for sweeps.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "report.hpp"

namespace codelab {

// "%.3f" etc. applied to one number.
std::string format(const char* fmt, double x);
// 12.3 KiB / 4.0 MiB / 1.2 GiB
std::string format_bytes(double bytes);

void print_heading(const std::string& text);
// Title, columns padded to their widest cell (numbers right-aligned), a rule, then the notes.
void print_table(const Table& t);
// One bar per (label, value), scaled to the largest value.
void print_bar_chart(const std::vector<std::pair<std::string, double>>& bars,
                     const std::string& unit);

// "  [seq 7/18] portable T=1024" rewritten in place on stderr when it is a terminal; silent
// otherwise (logs stay readable).
class Progress {
public:
  Progress(std::string step, int total);
  ~Progress();
  void next(const std::string& what);

private:
  std::string step_;
  int total_, done_ = 0;
  bool tty_;
  std::size_t last_width_ = 0;
};

} // namespace codelab
