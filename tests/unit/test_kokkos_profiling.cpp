// Kokkos Tools see every KokkosAttn call as a profiling region named after the backend that ran.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "test_kokkos_helpers.hpp"

using namespace kattn;
using namespace kattn::test;

namespace {

std::vector<std::string> pushed;
int depth = 0;

// Installs region callbacks for the lifetime of the object.
struct RegionRecorder {
  RegionRecorder() {
    pushed.clear();
    depth = 0;
    Kokkos::Tools::Experimental::set_push_region_callback([](const char* name) {
      pushed.emplace_back(name);
      ++depth;
    });
    Kokkos::Tools::Experimental::set_pop_region_callback([] { --depth; });
  }
  ~RegionRecorder() {
    Kokkos::Tools::Experimental::set_push_region_callback(nullptr);
    Kokkos::Tools::Experimental::set_pop_region_callback(nullptr);
  }
};

} // namespace

TEST_CASE("kokkos/profiling: sdpa and Plan::execute push regions named after the backend") {
  const Kokkos::DefaultHostExecutionSpace exec;
  View4<float> q("q", 1, 4, 2, 8), k("k", 1, 6, 2, 8), v("v", 1, 6, 2, 8), out("out", 1, 4, 2, 8);
  fill_random(q, 1);
  fill_random(k, 2);
  fill_random(v, 3);
  Options o;
  o.backend = Backend::naive;
  KokkosAttn::Plan plan(exec, q, k, v, out, o);
  {
    RegionRecorder rec;
    KokkosAttn::sdpa(exec, q, k, v, out, o);
    plan.execute(q, k, v, out);
    o.backend = Backend::reference;
    KokkosAttn::sdpa(exec, q, k, v, out, o);
    exec.fence();
    // Ours only: Kokkos Kernels' GEMMs (naive's products in a build with it) push their own,
    // inside ours.
    std::vector<std::string> ours;
    for (const std::string& name : pushed)
      if (name.rfind("KokkosAttn::", 0) == 0)
        ours.push_back(name);
    REQUIRE(ours.size() == 3);
    CHECK(ours[0] == "KokkosAttn::sdpa[naive]");
    CHECK(ours[1] == "KokkosAttn::Plan::execute[naive]");
    CHECK(ours[2] == "KokkosAttn::sdpa[reference]");
    CHECK(depth == 0);
  }
}

TEST_CASE("kokkos/profiling: the region is popped when the backend throws") {
  const auto backend = naive::make_naive_backend();
  RegionRecorder rec;
  CHECK_THROWS_AS(KokkosAttn::Impl::run_in_region("KokkosAttn::sdpa", *backend,
                                                  [] { throw std::runtime_error("boom"); }),
                  BackendFailure); // foreign exceptions become BackendFailure, as in dispatch
  CHECK_THROWS_AS(KokkosAttn::Impl::run_in_region("KokkosAttn::sdpa", *backend,
                                                  [] { throw Unsupported("no"); }),
                  Unsupported);
  REQUIRE(pushed.size() == 2);
  CHECK(pushed[0] == "KokkosAttn::sdpa[naive]");
  CHECK(depth == 0);
}

TEST_CASE("kokkos/profiling: cuDNN's region carries the Kokkos Kernels TPL tag") {
  CHECK(KokkosAttn::Impl::region_name("KokkosAttn::sdpa", kattn::Backend::cudnn) ==
        "KokkosAttn::sdpa[TPL_CUDNN]");
  CHECK(KokkosAttn::Impl::region_name("KokkosAttn::Plan::execute", kattn::Backend::cuda) ==
        "KokkosAttn::Plan::execute[cuda]");
}
