// report/conformance.json: {"cases", "failures", "backends": [...], "results": [...]}.
#include <algorithm>
#include <array>
#include <cmath>
#include <iomanip>
#include <map>
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
     << ",\n  \"mix\": " << quote(std::string(to_string(info.mix)))
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
      os << ", \"reproduce\": " << quote(reproduce_command(r, info));
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

void write_summary_json(std::ostream& os, const RunInfo& info, const std::vector<Result>& results) {
  using Counts = std::array<std::int64_t, 4>; // pass, fail, unsupported, skipped
  std::map<std::string, Counts> per_backend;
  std::vector<std::string> features{"all cases"};
  std::map<std::string, std::map<std::string, Counts>> per_feature;
  std::map<std::string, std::map<std::string, std::int64_t>> reasons;
  std::int64_t failures = 0;
  for (const Result& r : results) {
    const auto s = static_cast<std::size_t>(r.status);
    ++per_backend[r.backend][s];
    ++per_feature["all cases"][r.backend][s];
    for (const std::string& f : r.features) {
      if (f.rfind("regression/", 0) == 0)
        continue; // one case each: the failures list names them
      if (!per_feature.count(f))
        features.push_back(f);
      ++per_feature[f][r.backend][s];
    }
    if (r.status == Status::unsupported || r.status == Status::skipped)
      ++reasons[r.backend][std::string(to_string(r.status)) + ": " + r.reason];
    failures += r.status == Status::fail;
  }
  auto counts = [](const Counts& c) {
    return "{\"pass\": " + std::to_string(c[0]) + ", \"fail\": " + std::to_string(c[1]) +
           ", \"unsupported\": " + std::to_string(c[2]) + ", \"skipped\": " + std::to_string(c[3]) +
           "}";
  };
  os << "{\n  \"cases\": " << info.cases << ",\n  \"results_count\": " << results.size()
     << ",\n  \"failures\": " << failures << ",\n  \"seed\": " << info.seed
     << ",\n  \"mix\": " << quote(std::string(to_string(info.mix)))
     << ",\n  \"seconds\": " << number(info.seconds) << ",\n  \"shards\": " << info.shards
     << ",\n  \"command\": " << quote(info.command) << ",\n  \"device\": " << quote(info.device);
  if (!info.stopped_early.empty())
    os << ",\n  \"stopped_early\": " << quote(info.stopped_early);
  os << ",\n  \"uncounted_refused_by_all\": " << info.uncounted << ",\n  \"backends\": [";
  for (std::size_t i = 0; i < info.backends.size(); ++i)
    os << (i ? ",\n    " : "\n    ") << "{\"name\": " << quote(info.backends[i])
       << ", \"description\": " << quote(info.backend_descriptions[i])
       << ", \"counts\": " << counts(per_backend[info.backends[i]]) << "}";
  os << "\n  ],\n  \"features\": {";
  for (std::size_t i = 0; i < features.size(); ++i) {
    os << (i ? ",\n    " : "\n    ") << quote(features[i]) << ": {";
    bool first = true;
    for (const auto& [backend, c] : per_feature[features[i]]) {
      os << (first ? "" : ", ") << quote(backend) << ": " << counts(c);
      first = false;
    }
    os << "}";
  }
  auto write_reasons = [&](const std::map<std::string, std::map<std::string, std::int64_t>>& m) {
    os << "[";
    bool first = true;
    for (const auto& [backend, byreason] : m) {
      std::vector<std::pair<std::int64_t, std::string>> v;
      for (const auto& [why, n] : byreason)
        v.emplace_back(n, why);
      std::sort(v.rbegin(), v.rend()); // most frequent first
      for (const auto& [n, why] : v) {
        os << (first ? "\n    " : ",\n    ") << "{\"backend\": " << quote(backend)
           << ", \"count\": " << n << ", \"reason\": " << quote(why) << "}";
        first = false;
      }
    }
    os << "\n  ]";
  };
  os << "\n  },\n  \"unsupported_reasons\": ";
  write_reasons(reasons);
  os << ",\n  \"uncounted_reasons\": ";
  write_reasons(info.uncounted_reasons);
  os << ",\n  \"failures_list\": [";
  bool first = true;
  for (const Result& r : results)
    if (r.status == Status::fail) {
      os << (first ? "\n    " : ",\n    ") << "{\"backend\": " << quote(r.backend)
         << ", \"case\": " << quote(r.case_name) << ", \"description\": " << quote(r.description)
         << ", \"reason\": " << quote(r.reason)
         << ", \"reproduce\": " << quote(reproduce_command(r, info)) << "}";
      first = false;
    }
  os << "\n  ]\n}\n";
}

} // namespace kattn::conformance
