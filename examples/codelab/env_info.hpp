// What the results say about where they came from: CPU, threads, GPU, driver, library versions,
// load, time.
#pragma once

#include "report.hpp"

namespace codelab {

// Fills report.env and report.run_id.
void describe_environment(Report& report);
// "/proc/loadavg" as one line.
std::string load_average();

} // namespace codelab
