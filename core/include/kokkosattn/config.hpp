// Portability macros for the framework-free headers that device code also includes: defined
// once, in the kernel contract (kernels/include/kattn_kernels/host_device.hpp).
#pragma once

#include "kattn_kernels/host_device.hpp"
