// Text helpers the GPU benchmarks share: comma lists from the command line, and the few JSON
// pieces their results files are written from.
#pragma once

#include <cstdint>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

namespace kattn_bench {

// "a,b,,c" -> {"a", "b", "c"}.
inline std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> r;
  std::stringstream ss(s);
  for (std::string x; std::getline(ss, x, ',');)
    if (!x.empty())
      r.push_back(x);
  return r;
}

inline std::vector<std::int64_t> ints(const std::string& s) {
  std::vector<std::int64_t> r;
  for (const std::string& x : split(s))
    r.push_back(std::stoll(x));
  return r;
}

// A JSON string literal (control characters become spaces).
inline std::string json_str(const std::string& s) {
  std::string r = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      r += '\\', r += c;
    else if (static_cast<unsigned char>(c) < 0x20)
      r += ' ';
    else
      r += c;
  }
  return r + "\"";
}

inline std::string num(double x) {
  char b[64];
  std::snprintf(b, sizeof b, "%.6g", x);
  return b;
}

} // namespace kattn_bench
