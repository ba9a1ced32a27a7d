// docs/semantics.md rule tf32: Options::allow_tf32 is a permission. Backends without a TF32 path
// (every CPU backend) must give bitwise the result they give without it, in every dtype, and
// the C API's setter is covered by tests/c. The GPU side (the cuda backend's
// TF32 kernel, its error bound and its name) is tests/gpu/test_cuda_wide.cpp.
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "common/reference_helpers.hpp"
#include "common/reference_problem.hpp"
#include "kokkosattn/dispatch.hpp"
#include "kokkosattn/validate.hpp"
#include "test_naive_helpers.hpp"

using namespace kattn;
using namespace kattn::test;

namespace {

std::vector<double> forward_out(Attn& a, Backend b, bool tf32, const ExecContext& ctx) {
  poison(a.out.view);
  poison(a.lse.view());
  ForwardProblem p = a.forward_problem();
  p.options.backend = b;
  p.options.allow_tf32 = tf32;
  run_forward(default_registry(), p, ctx);
  std::vector<double> r = a.out_values();
  const std::vector<double> lse = a.lse_values();
  r.insert(r.end(), lse.begin(), lse.end());
  return r;
}

bool bitwise_equal(const std::vector<double>& x, const std::vector<double>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0;
}

} // namespace

TEST_CASE("semantics/tf32: the CPU backends ignore the permission, bit for bit") {
  HostSpaces spaces;
  for (DType t : {DType::f32, DType::f64, DType::bf16})
    for (Backend b : {Backend::reference, Backend::naive, Backend::portable}) {
      if (!default_registry().find(b))
        continue;
      for (const auto& [name, ctx] : spaces.contexts()) {
        INFO(to_string(b), " ", to_string(t), " on ", name);
        Spec s = spec_of(2, 70, 90, 4, 2, 32, 32, t);
        s.opt.causal = true;
        Attn a(s);
        const std::vector<double> plain = forward_out(a, b, false, ctx);
        const std::vector<double> tf32 = forward_out(a, b, true, ctx);
        REQUIRE(all_finite(plain));
        CHECK(bitwise_equal(plain, tf32));
      }
    }
}
