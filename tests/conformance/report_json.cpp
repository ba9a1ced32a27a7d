// report/conformance.json: {"cases", "failures", "backends": [...], "results": [...]}.
#include <cmath>
#include <iomanip>
#include <sstream>

#include "conformance/reporters.hpp"

namespace kattn::conformance {
namespace {

std::string quote(const std::string& s) {
  std::ostringstream o;
  o << '"';
  for (unsigned char ch : s) {
    if (ch == '"' || ch == '\\')
      o << '\\' << ch;
    else if (ch < 0x20)
      o << "\\u" << std::hex << std::setw(4) << std::setfill('0') << int(ch) << std::dec;
    else
      o << ch;
  }
  o << '"';
  return o.str();
}

// JSON has no inf/NaN: those become null (an error of +inf means NaN or a wrong infinity).
std::string number(double x) {
  if (!std::isfinite(x))
    return "null";
  std::ostringstream o;
  o << std::setprecision(6) << x;
  return o.str();
}

} // namespace

void write_json(std::ostream& os, const RunInfo& info, const std::vector<Result>& results) {
  std::int64_t failures = 0;
  for (const Result& r : results)
    failures += r.status == Status::fail;
  os << "{\n  \"cases\": " << info.cases << ",\n  \"results_count\": " << results.size()
     << ",\n  \"failures\": " << failures << ",\n  \"seed\": " << info.seed
     << ",\n  \"seconds\": " << number(info.seconds);
  if (!info.stopped_early.empty())
    os << ",\n  \"stopped_early\": " << quote(info.stopped_early);
  os << ",\n  \"backends\": [";
  for (std::size_t i = 0; i < info.backends.size(); ++i) {
    std::int64_t c[4] = {0, 0, 0, 0};
    for (const Result& r : results)
      if (r.backend == info.backends[i])
        ++c[static_cast<int>(r.status)];
    os << (i ? ",\n    " : "\n    ") << "{\"name\": " << quote(info.backends[i])
       << ", \"description\": " << quote(info.backend_descriptions[i]) << ", \"pass\": " << c[0]
       << ", \"fail\": " << c[1] << ", \"unsupported\": " << c[2] << ", \"skipped\": " << c[3]
       << "}";
  }
  os << "\n  ],\n  \"results\": [";
  for (std::size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    os << (i ? ",\n    " : "\n    ") << "{\"backend\": " << quote(r.backend)
       << ", \"case\": " << quote(r.case_name) << ", \"index\": " << r.index
       << ", \"status\": " << quote(std::string(to_string(r.status)))
       << ", \"description\": " << quote(r.description) << ", \"features\": [";
    for (std::size_t f = 0; f < r.features.size(); ++f)
      os << (f ? ", " : "") << quote(r.features[f]);
    os << "], \"seconds\": " << number(r.seconds);
    if (!r.reason.empty())
      os << ", \"reason\": " << quote(r.reason);
    if (r.status == Status::fail)
      os << ", \"reproduce\": " << quote(reproduce_command(r, info.seed));
    os << ", \"checks\": [";
    for (std::size_t k = 0; k < r.checks.size(); ++k) {
      const Check& c = r.checks[k];
      os << (k ? ", " : "") << "{\"tensor\": " << quote(c.tensor) << ", \"err\": " << number(c.err)
         << ", \"tol\": " << number(c.tol) << ", \"baseline_err\": " << number(c.baseline_err)
         << ", \"floor\": " << number(c.floor) << ", \"ok\": " << (c.ok ? "true" : "false") << "}";
    }
    os << "]}";
  }
  os << "\n  ]\n}\n";
}

} // namespace kattn::conformance
