#include "config.hpp"

#include <stdexcept>

namespace codelab {
namespace {

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    const std::size_t comma = s.find(',', start);
    const std::string item = s.substr(start, comma == std::string::npos ? comma : comma - start);
    if (!item.empty())
      out.push_back(item);
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  return out;
}

int to_int(const std::string& s, const std::string& option) {
  std::size_t used = 0;
  int v = 0;
  try {
    v = std::stoi(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != s.size() || v <= 0)
    throw std::invalid_argument(option + ": expected a positive integer, got '" + s + "'");
  return v;
}

std::vector<int> to_ints(const std::string& s, const std::string& option) {
  std::vector<int> v;
  for (const std::string& item : split(s))
    v.push_back(to_int(item, option));
  if (v.empty())
    throw std::invalid_argument(option + ": expected a comma-separated list, got '" + s + "'");
  return v;
}

} // namespace

std::string usage() {
  return "usage: codelab_demo [options]\n"
         "  The seed codelab's experiment on every backend this machine has: tables on the\n"
         "  terminal, <out>/results.json and <out>/results.csv (render the plots and\n"
         "  <out>/index.html with scripts/report/make_report.py; `make demo` does both).\n"
         "  --out DIR          report directory (default: report)\n"
         "  --quick            tiny sweeps, one timed call per cell, a few seconds (CI)\n"
         "  --full             also the FlashAttention sweep: 16k tokens, hidden 2048,\n"
         "                     head dims 64/128/256, T 512..16384, causal and not, fwd and\n"
         "                     fwd+bwd (cell limit 5 s unless --cell-limit is given)\n"
         "  --seq LIST         sequence sweep T=S values (default 64,128,256,512,1024,2048)\n"
         "  --batch LIST       batch sweep B values (default 1,2,4,8,16)\n"
         "  --batch-T N        T of the batch sweep (default 256)\n"
         "  --memory-T LIST    T values of the memory step (default 256,512,1024,2048)\n"
         "  --decode-S LIST    cache lengths S of the decode step (default 256,1024,4096;\n"
         "                     1024,4096,16384,65536 on a GPU execution space)\n"
         "  --decode-B N       sequences of the decode step (default 4)\n"
         "  --repeats N        timed repeats per cell, median reported (default 5)\n"
         "  --warmup N         untimed calls before (default 1)\n"
         "  --cell-limit S     skip sweep cells estimated slower than S seconds per call\n"
         "                     (default 1)\n"
         "  --backends LIST    only these backends (reference always runs as the baseline)\n";
}

Config parse_args(int argc, char* argv[]) {
  Config c;
  bool limit_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        throw std::invalid_argument(a + ": expected a value");
      return argv[++i];
    };
    if (a == "--quick") {
      c.quick = true;
    } else if (a == "--full") {
      c.full = true;
    } else if (a == "--out") {
      c.out_dir = value();
    } else if (a == "--seq") {
      c.seq = to_ints(value(), a);
    } else if (a == "--batch") {
      c.batch = to_ints(value(), a);
    } else if (a == "--batch-T") {
      c.batch_T = to_int(value(), a);
    } else if (a == "--memory-T") {
      c.memory_T = to_ints(value(), a);
    } else if (a == "--decode-S") {
      c.decode_S = to_ints(value(), a);
    } else if (a == "--decode-B") {
      c.decode_B = to_int(value(), a);
    } else if (a == "--repeats") {
      c.policy.repeats = to_int(value(), a);
    } else if (a == "--warmup") {
      const std::string v = value();
      c.policy.warmups = v == "0" ? 0 : to_int(v, a);
    } else if (a == "--cell-limit") {
      const std::string v = value();
      try {
        c.cell_limit_s = std::stod(v);
      } catch (const std::exception&) {
        throw std::invalid_argument(a + ": expected seconds, got '" + v + "'");
      }
      limit_given = true;
    } else if (a == "--backends") {
      c.backends = split(value());
    } else {
      throw std::invalid_argument("unknown option '" + a + "'");
    }
  }
  if (c.quick) {
    c.seq = {64, 128, 256};
    c.batch = {1, 2, 4};
    c.batch_T = 128;
    c.memory_T = {128, 256};
    c.policy = {0, 1, 0.0}; // one call per cell: CI checks the report, not the timings
    if (!limit_given)
      c.cell_limit_s = 0.3;
  }
  if (c.full && !limit_given)
    c.cell_limit_s = 5.0;
  return c;
}

} // namespace codelab
