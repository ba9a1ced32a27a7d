// A contract header that includes something other than the standard library and kattn_kernels/.
#pragma once

#include "kattn_kernels/flash_params.hpp"
#include "other/header.hpp"
