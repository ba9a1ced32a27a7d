// KokkosAttn::append_kv (docs/semantics.md, paged_kv) on host memory: the new keys and values land
// bit for bit in their pages' rows (or rows lens + t of a contiguous cache), every other element
// of the cache stays, seqlens_k grows by T_new; bad appends are refused naming the argument with
// nothing written (caches and lengths compared byte for byte). The decode step it serves (append,
// then sdpa) is checked against the reference in tests/frontend/frontend_tests_paged.hpp.
#include <doctest/doctest.h>

#include <KokkosAttn.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "common/host_tensor.hpp"
#include "common/validate_fixture.hpp"
#include "kokkosattn/kv_append.hpp"

using namespace kattn;
using namespace kattn::test;

namespace {

// B = 2 sequences, K = 2, H = 3, Hv = 2, pages of 4 keys, 3 slots each (S = 12), 6 pages.
struct Append {
  static constexpr std::int64_t B = 2, T = 3, K = 2, H = 3, Hv = 2, P = 4, slots = 3, pages = 6;
  HostTensor k_new{DType::f32, {B, T, K, H}}, v_new{DType::f32, {B, T, K, Hv}};
  HostTensor k_cache{DType::f32, {pages, P, K, H}}, v_cache{DType::f32, {pages, P, K, Hv}};
  HostTensor table{DType::i32, {B, slots}}, lens{DType::i32, {B}};
  Append() {
    k_new.fill_normal(1);
    v_new.fill_normal(2);
    k_cache.fill_normal(3);
    v_cache.fill_normal(4);
    const std::int32_t ids[B * slots] = {3, 0, -1, 4, 1, 2};
    for (std::int64_t i = 0; i < B * slots; ++i)
      table.set_int(i, ids[i]);
    lens.set_int(0, 6); // sequence 0: new keys 6..8 (page 0 rows 2, 3; key 8 in slot 2: -1 here)
    lens.set_int(1, 9); // sequence 1: new keys 9..11 (page 2 rows 1..3)
  }
  KvAppend problem() const {
    return {k_new.view(), v_new.view(), k_cache.view(), v_cache.view(), table.view(), lens.view()};
  }
};

void run_append(const KvAppend& a) {
  KokkosAttn::append_kv(Kokkos::DefaultHostExecutionSpace{}, a);
  Kokkos::DefaultHostExecutionSpace{}.fence();
}

} // namespace

TEST_CASE("semantics/paged_kv: append_kv writes each new key into its page's row, nothing else") {
  Append a;
  a.table.set_int(2, 5); // sequence 0's key 8 needs slot 2: page 5 (every page used once)
  const std::vector<double> k0 = a.k_cache.to_doubles(), v0 = a.v_cache.to_doubles();
  const std::vector<double> kn = a.k_new.to_doubles(), vn = a.v_new.to_doubles();
  run_append(a.problem());
  CHECK(a.lens.to_doubles() == std::vector<double>{9, 12});
  std::vector<double> k1 = k0, v1 = v0; // what the caches must hold now
  const std::int64_t start[2] = {6, 9};
  for (std::int64_t b = 0; b < Append::B; ++b)
    for (std::int64_t t = 0; t < Append::T; ++t) {
      const std::int64_t j = start[b] + t, slot = j / Append::P, row = j % Append::P;
      const std::int64_t page = a.table.to_doubles()[std::size_t(b * Append::slots + slot)];
      for (std::int64_t kv = 0; kv < Append::K; ++kv) {
        for (std::int64_t f = 0; f < Append::H; ++f)
          k1[std::size_t(((page * Append::P + row) * Append::K + kv) * Append::H + f)] =
              kn[std::size_t(((b * Append::T + t) * Append::K + kv) * Append::H + f)];
        for (std::int64_t f = 0; f < Append::Hv; ++f)
          v1[std::size_t(((page * Append::P + row) * Append::K + kv) * Append::Hv + f)] =
              vn[std::size_t(((b * Append::T + t) * Append::K + kv) * Append::Hv + f)];
      }
    }
  CHECK(a.k_cache.to_doubles() == k1);
  CHECK(a.v_cache.to_doubles() == v1);
}

TEST_CASE("semantics/paged_kv: bad appends are refused naming the argument, nothing written") {
  const auto refused = [](Append& a, const std::vector<std::string>& needles) {
    const auto k = a.k_cache.raw(), v = a.v_cache.raw(), l = a.lens.raw();
    check_invalid([&] { run_append(a.problem()); }, needles);
    CHECK(a.k_cache.raw() == k);
    CHECK(a.v_cache.raw() == v);
    CHECK(a.lens.raw() == l);
  };
  {
    Append a; // sequence 0's new key 8 goes to slot 2, whose id is -1
    refused(a, {"extras.page_table: expected page ids in [0, num_pages) = [0, 6)",
                "new keys of sequence 0 go to, got -1 at [0, 2]"});
  }
  {
    Append a;
    a.table.set_int(2, 5);
    a.lens.set_int(1, 10); // 10 + 3 > 12
    refused(a,
            {"extras.seqlens_k: expected values in [0, S - T_new] = [0, 9]", "got 10 at index 1"});
  }
  {
    Append a;
    a.table.set_int(2, 5);
    HostTensor wrong(DType::f64, {Append::pages, Append::P, Append::K, Append::H});
    KvAppend p = a.problem();
    p.k_cache = wrong.view();
    check_invalid([&] { run_append(p); }, {"k_cache: expected dtype f32 like k_new, got f64"});
  }
  {
    Append a;
    a.table.set_int(2, 5);
    KvAppend p = a.problem();
    p.seqlens_k = Tensor();
    check_invalid([&] { run_append(p); }, {"extras.seqlens_k: expected the keys each sequence"});
  }
  {
    Append a;
    a.table.set_int(2, 5);
    KvAppend p = a.problem();
    p.k_new = Tensor::contiguous(a.k_cache.view().data, DType::f32,
                                 {Append::B, Append::T, Append::K, Append::H});
    const auto v = a.v_cache.raw(), l = a.lens.raw();
    check_invalid([&] { run_append(p); }, {"k_cache", "k_new"}); // k_new inside k_cache
    CHECK(a.v_cache.raw() == v);
    CHECK(a.lens.raw() == l);
  }
}
