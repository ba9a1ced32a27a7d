// A kernel header that includes core: check_kernel_layering.cmake must reject it (CTest
// kernel_layering_detects_stray_include expects the check to fail on this folder).
#pragma once

#include "kokkosattn/problem.hpp"
