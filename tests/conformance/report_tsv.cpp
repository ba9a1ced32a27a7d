// --tsv / --merge: the results of shards of one run, one tab-separated line each.
#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "conformance/reporters.hpp"

namespace kattn::conformance {
namespace {

std::string clean(std::string s) {
  std::replace_if(
      s.begin(), s.end(), [](char c) { return c == '\t' || c == '\n' || c == '\r'; }, ' ');
  return s;
}

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> v;
  std::size_t start = 0;
  for (;;) {
    const std::size_t at = line.find(sep, start);
    v.push_back(line.substr(start, at - start));
    if (at == std::string::npos)
      return v;
    start = at + 1;
  }
}

Status status_of(const std::string& s) {
  for (Status x : {Status::pass, Status::fail, Status::unsupported, Status::skipped})
    if (to_string(x) == s)
      return x;
  throw std::runtime_error("--merge: unknown status \"" + s + "\"");
}

} // namespace

void write_tsv_info(std::ostream& os, const RunInfo& info) {
  os << "#seed\t" << info.seed << "\n#mix\t" << to_string(info.mix) << "\n#cases\t" << info.cases
     << "\n#seconds\t" << info.seconds << "\n#uncounted\t" << info.uncounted << "\n#device\t"
     << clean(info.device) << "\n";
  if (!info.stopped_early.empty())
    os << "#stopped\t" << clean(info.stopped_early) << "\n";
  for (std::size_t i = 0; i < info.backends.size(); ++i)
    os << "#backend\t" << info.backends[i] << "\t" << clean(info.backend_descriptions[i]) << "\n";
  for (const auto& [backend, m] : info.uncounted_reasons)
    for (const auto& [why, n] : m)
      os << "#uncounted_reason\t" << backend << "\t" << n << "\t" << clean(why) << "\n";
}

void write_tsv_result(std::ostream& os, const Result& r) {
  os << r.backend << "\t" << r.case_name << "\t" << r.index << "\t" << to_string(r.status) << "\t"
     << r.seconds << "\t" << clean(r.description) << "\t" << clean(r.reason) << "\t";
  for (std::size_t f = 0; f < r.features.size(); ++f)
    os << (f ? "|" : "") << clean(r.features[f]);
  os << "\n";
}

void read_tsv(std::istream& is, RunInfo& info, std::vector<Result>& results) {
  std::string line;
  bool complete = false;
  while (std::getline(is, line)) {
    const std::vector<std::string> f = split(line, '\t');
    if (f[0] == "#seed" && f.size() > 1) {
      info.seed = std::stoull(f[1]);
      complete = true;
    } else if (f[0] == "#mix" && f.size() > 1) {
      info.mix = f[1] == "gpu" ? Mix::gpu : Mix::all;
    } else if (f[0] == "#cases" && f.size() > 1) {
      info.cases += std::stoll(f[1]);
    } else if (f[0] == "#seconds" && f.size() > 1) {
      info.seconds = std::max(info.seconds, std::stod(f[1]));
    } else if (f[0] == "#uncounted" && f.size() > 1) {
      info.uncounted += std::stoll(f[1]);
    } else if (f[0] == "#device" && f.size() > 1) {
      if (info.device.empty())
        info.device = f[1];
    } else if (f[0] == "#stopped" && f.size() > 1) {
      info.stopped_early += (info.stopped_early.empty() ? "" : "; ") + f[1];
    } else if (f[0] == "#backend" && f.size() > 2) {
      if (std::find(info.backends.begin(), info.backends.end(), f[1]) == info.backends.end()) {
        info.backends.push_back(f[1]);
        info.backend_descriptions.push_back(f[2]);
      }
    } else if (f[0] == "#uncounted_reason" && f.size() > 3) {
      info.uncounted_reasons[f[1]][f[3]] += std::stoll(f[2]);
    } else if (f.size() == 8) {
      Result r;
      r.backend = f[0];
      r.case_name = f[1];
      r.index = std::stoll(f[2]);
      r.status = status_of(f[3]);
      r.seconds = std::stod(f[4]);
      r.description = f[5];
      r.reason = f[6];
      if (!f[7].empty())
        r.features = split(f[7], '|');
      results.push_back(std::move(r));
    } else if (!line.empty()) {
      throw std::runtime_error("--merge: unreadable line \"" + line.substr(0, 80) + "\"");
    }
  }
  if (!complete) // the shard died: its finished results count, its case total is unknown
    info.stopped_early += std::string(info.stopped_early.empty() ? "" : "; ") +
                          "a shard did not finish (its results are kept, its cases not counted)";
}

} // namespace kattn::conformance
