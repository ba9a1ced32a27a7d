// JUnit XML: one testsuite per backend, one testcase per case; unsupported cases are <skipped>
// with the backend's reason, so CI dashboards never count them as passes.
#include <cstdio>

#include "conformance/reporters.hpp"

namespace kattn::conformance {
namespace {

std::string xml(const std::string& s) {
  std::string o;
  for (char ch : s) {
    switch (ch) {
    case '&':
      o += "&amp;";
      break;
    case '<':
      o += "&lt;";
      break;
    case '>':
      o += "&gt;";
      break;
    case '"':
      o += "&quot;";
      break;
    case '\'':
      o += "&apos;";
      break;
    default:
      o += (static_cast<unsigned char>(ch) < 0x20 && ch != '\n') ? ' ' : ch;
    }
  }
  return o;
}

std::string secs(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6f", s);
  return buf;
}

} // namespace

void write_junit(std::ostream& os, const RunInfo& info, const std::vector<Result>& results) {
  std::int64_t fails = 0, skipped = 0;
  for (const Result& r : results) {
    fails += r.status == Status::fail;
    skipped += r.status == Status::unsupported || r.status == Status::skipped;
  }
  os << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"kokkos-attn-conformance\" "
        "tests=\""
     << results.size() << "\" failures=\"" << fails << "\" skipped=\"" << skipped << "\" time=\""
     << secs(info.seconds) << "\">\n";
  for (const std::string& b : info.backends) {
    std::int64_t n = 0, f = 0, s = 0;
    double t = 0;
    for (const Result& r : results)
      if (r.backend == b) {
        ++n;
        f += r.status == Status::fail;
        s += r.status == Status::unsupported || r.status == Status::skipped;
        t += r.seconds;
      }
    os << "  <testsuite name=\"conformance." << xml(b) << "\" tests=\"" << n << "\" failures=\""
       << f << "\" skipped=\"" << s << "\" time=\"" << secs(t) << "\">\n";
    for (const Result& r : results) {
      if (r.backend != b)
        continue;
      os << "    <testcase classname=\"conformance." << xml(b) << "\" name=\""
         << xml(r.case_name + ": " + r.description) << "\" time=\"" << secs(r.seconds) << "\"";
      if (r.status == Status::pass) {
        os << "/>\n";
        continue;
      }
      os << ">\n";
      if (r.status == Status::fail)
        os << "      <failure message=\"" << xml(r.reason) << "\">"
           << xml("reproduce: " + reproduce_command(r, info)) << "</failure>\n";
      else
        os << "      <skipped message=\""
           << xml((r.status == Status::unsupported ? "unsupported: " : "skipped: ") + r.reason)
           << "\"/>\n";
      os << "    </testcase>\n";
    }
    os << "  </testsuite>\n";
  }
  os << "</testsuites>\n";
}

} // namespace kattn::conformance
