#include "report.hpp"

#include <kokkosattn/errors.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace codelab {
namespace {

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\t':
      out += "\\t";
      break;
    default:
      if (c < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        out += buf;
      } else {
        out += char(c);
      }
    }
  }
  return out + "\"";
}

std::string number(const std::optional<double>& x) {
  if (!x || !std::isfinite(*x))
    return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", *x);
  return buf;
}

std::string list(const std::vector<std::string>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i)
    out += (i ? ", " : "") + quoted(v[i]);
  return out + "]";
}

std::ofstream open_or_throw(const std::string& path) {
  std::ofstream f(path);
  if (!f)
    throw kattn::InvalidArgument("codelab: cannot write " + path);
  return f;
}

} // namespace

void Report::write_json(const std::string& path) const {
  std::ostringstream o;
  o << "{\n \"run_id\": " << quoted(run_id) << ",\n \"env\": {";
  for (std::size_t i = 0; i < env.size(); ++i)
    o << (i ? ",\n  " : "\n  ") << quoted(env[i].first) << ": " << quoted(env[i].second);
  o << "\n },\n \"rows\": [";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    const Shape& s = r.shape;
    o << (i ? ",\n  " : "\n  ") << "{\"exp\": " << quoted(r.exp) << ", \"impl\": " << quoted(r.impl)
      << ", \"B\": " << s.B << ", \"T\": " << s.T << ", \"S\": " << s.S << ", \"N\": " << s.N
      << ", \"K\": " << s.K << ", \"H\": " << s.H
      << ", \"dtype\": " << quoted(std::string(kattn::to_string(s.dtype)))
      << ", \"causal\": " << (s.causal ? "true" : "false") << ", \"pass\": " << quoted(r.pass)
      << ", \"ms\": " << number(r.ms) << ", \"tflops\": " << number(r.tflops)
      << ", \"peak_bytes\": " << number(r.peak_bytes)
      << ", \"error\": " << (r.error.empty() ? "null" : quoted(r.error));
    for (const auto& [key, value] : r.more_text)
      o << ", " << quoted(key) << ": " << quoted(value);
    for (const auto& [key, value] : r.more_numbers)
      o << ", " << quoted(key) << ": " << number(value);
    o << "}";
  }
  o << "\n ],\n \"tables\": [";
  for (std::size_t i = 0; i < tables.size(); ++i) {
    const Table& t = tables[i];
    o << (i ? ",\n  " : "\n  ") << "{\"id\": " << quoted(t.id) << ", \"title\": " << quoted(t.title)
      << ",\n   \"columns\": " << list(t.columns) << ",\n   \"rows\": [";
    for (std::size_t r = 0; r < t.rows.size(); ++r)
      o << (r ? ",\n    " : "\n    ") << list(t.rows[r]);
    o << "],\n   \"notes\": " << list(t.notes) << "}";
  }
  o << "\n ],\n \"messages\": [";
  for (std::size_t i = 0; i < messages.size(); ++i)
    o << (i ? ",\n  " : "\n  ") << "{\"id\": " << quoted(messages[i].first)
      << ", \"text\": " << quoted(messages[i].second) << "}";
  o << "\n ]\n}\n";
  open_or_throw(path) << o.str();
}

void Report::write_csv(const std::string& path) const {
  std::ofstream f = open_or_throw(path);
  f << "exp,impl,B,T,S,N,K,H,dtype,causal,pass,ms,tflops,peak_bytes,error\n";
  const auto cell = [](const std::optional<double>& x) {
    return x && std::isfinite(*x) ? number(x) : std::string();
  };
  for (const Row& r : rows) {
    const Shape& s = r.shape;
    std::string err = r.error;
    for (char& c : err)
      if (c == '"')
        c = '\'';
    f << r.exp << ',' << r.impl << ',' << s.B << ',' << s.T << ',' << s.S << ',' << s.N << ','
      << s.K << ',' << s.H << ',' << kattn::to_string(s.dtype) << ','
      << (s.causal ? "true" : "false") << ',' << r.pass << ',' << cell(r.ms) << ','
      << cell(r.tflops) << ',' << cell(r.peak_bytes) << ','
      << (err.empty() ? "" : "\"" + err + "\"") << '\n';
  }
}

} // namespace codelab
