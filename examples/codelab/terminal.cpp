#include "terminal.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace codelab {
namespace {

bool looks_numeric(const std::string& s) {
  if (s.empty())
    return false;
  const unsigned char c = static_cast<unsigned char>(s[0]);
  return std::isdigit(c) || ((c == '-' || c == '.') && s.size() > 1);
}

// Display width of UTF-8 text: count the bytes that start a character.
std::size_t width(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s)
    n += (c & 0xc0) != 0x80;
  return n;
}

std::string pad(const std::string& s, std::size_t w, bool right) {
  const std::string fill(w > width(s) ? w - width(s) : 0, ' ');
  return right ? fill + s : s + fill;
}

} // namespace

std::string format(const char* fmt, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, x);
  return buf;
}

std::string format_bytes(double bytes) {
  if (bytes >= 1024.0 * 1024 * 1024)
    return format("%.2f GiB", bytes / (1024.0 * 1024 * 1024));
  if (bytes >= 1024.0 * 1024)
    return format("%.1f MiB", bytes / (1024.0 * 1024));
  return format("%.1f KiB", bytes / 1024.0);
}

void print_heading(const std::string& text) {
  std::printf("\n%s\n%s\n", text.c_str(), std::string(width(text), '=').c_str());
}

void print_table(const Table& t) {
  std::printf("\n%s\n", t.title.c_str());
  std::vector<std::size_t> w(t.columns.size(), 0);
  std::vector<bool> numeric(t.columns.size(), true);
  for (std::size_t c = 0; c < t.columns.size(); ++c)
    w[c] = width(t.columns[c]);
  for (const auto& row : t.rows)
    for (std::size_t c = 0; c < row.size() && c < w.size(); ++c) {
      w[c] = std::max(w[c], width(row[c]));
      // Placeholders of missing numbers keep a column right-aligned.
      const bool placeholder =
          row[c] == "-" || row[c] == "skip" || row[c] == "n/a" || row[c] == "fail";
      numeric[c] = numeric[c] && (looks_numeric(row[c]) || placeholder);
    }
  const auto line = [&](const std::vector<std::string>& cells, bool header) {
    std::string s = " ";
    for (std::size_t c = 0; c < cells.size() && c < w.size(); ++c) {
      const bool last = c + 1 == cells.size();
      s += " " +
           (last && !numeric[c] && !header ? cells[c] : pad(cells[c], w[c], numeric[c] && !header));
      if (!last)
        s += " ";
    }
    std::printf("%s\n", s.c_str());
  };
  line(t.columns, true);
  std::size_t total = 0;
  for (std::size_t x : w)
    total += x + 2;
  std::printf("  %s\n", std::string(total > 2 ? total - 2 : 0, '-').c_str());
  for (const auto& row : t.rows)
    line(row, false);
  for (const auto& note : t.notes)
    std::printf("  %s\n", note.c_str());
}

void print_bar_chart(const std::vector<std::pair<std::string, double>>& bars,
                     const std::string& unit) {
  constexpr int max_len = 50;
  double top = 0;
  std::size_t label_w = 0;
  for (const auto& [label, value] : bars) {
    top = std::max(top, value);
    label_w = std::max(label_w, width(label));
  }
  std::printf("\n");
  for (const auto& [label, value] : bars) {
    // At least one block per bar, so small values stay visible next to large ones.
    const int len = top > 0 ? std::max(1, int(value / top * max_len + 0.5)) : 0;
    std::string bar;
    for (int i = 0; i < len; ++i)
      bar += "\xe2\x96\x88"; // U+2588 FULL BLOCK
    std::printf("  %s  %s %s %s\n", pad(label, label_w, false).c_str(), bar.c_str(),
                format(value < 10 ? "%.3f" : "%.1f", value).c_str(), unit.c_str());
  }
}

Progress::Progress(std::string step, int total)
    : step_(std::move(step)), total_(total), tty_(isatty(STDERR_FILENO) != 0) {}

Progress::~Progress() {
  if (tty_ && last_width_ > 0)
    std::fprintf(stderr, "\r%s\r", std::string(last_width_, ' ').c_str());
}

void Progress::next(const std::string& what) {
  ++done_;
  if (!tty_)
    return;
  std::string s =
      "  [" + step_ + " " + std::to_string(done_) + "/" + std::to_string(total_) + "] " + what;
  const std::size_t w = width(s);
  if (w < last_width_)
    s += std::string(last_width_ - w, ' ');
  last_width_ = std::max(last_width_, w);
  std::fprintf(stderr, "\r%s", s.c_str());
  std::fflush(stderr);
}

} // namespace codelab
