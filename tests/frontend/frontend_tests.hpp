// The Kokkos front end's tests, written once and compiled per execution space (Kokkos Kernels'
// unit_test/backends pattern): Test_<Space>_FrontEnd.cpp defines
//   KATTN_TEST_SPACE        the execution space type, e.g. Kokkos::Cuda
//   KATTN_TEST_SPACE_NAME   its name in the test names, e.g. "Cuda"
//   KATTN_TEST_FAST         1 where GPU kernel backends (cuda/cudnn/hip) serve this space's Views
//   KATTN_TEST_WIDE_KERNEL  1 where one of them also serves f32 and f64 Views (optional, default 0)
// and includes this file, which includes the tests of each concern (every space runs them all).
// On a device space the 16-bit Views must reach a GPU kernel backend, LayoutLeft through layout
// copies; on host spaces the portable backend reads every layout.
#pragma once

// sdpa and Plan: element types, layouts, masks, head dims, packed varlen, forced Kokkos backends
#include "frontend/frontend_tests_forward.hpp"
// sdpa_backward's gradients against the reference
#include "frontend/frontend_tests_backward.hpp"
// layout copies: the backend they reach, explain() and its notes, the copy kernels
#include "frontend/frontend_tests_layout_copies.hpp"
// two execution space instances: no hidden fences or synchronisations
#include "frontend/frontend_tests_instances.hpp"
// docs/semantics.md rule empty: no tokens, no keys, no queries
#include "frontend/frontend_tests_empty.hpp"
// docs/semantics.md rule non_finite: a NaN reaches the rows that see it, and no other
#include "frontend/frontend_tests_non_finite.hpp"
// docs/semantics.md rule paged_kv: a decode step on a paged KV cache, bad page ids
#include "frontend/frontend_tests_paged.hpp"
