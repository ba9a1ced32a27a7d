// Layout copies in dispatch (kokkosattn/layout_copies.hpp): when the tensors' layout keeps the
// GPU kernel backends out (head-dim stride != 1, as LayoutLeft Views have), `auto` with
// LayoutCopy::available runs one of them on row-major copies instead of falling to a slow
// backend; a forced backend may use copies, never another backend; explain() and notes say so.
// Fake backends stand in for cuda (needs row-major, 16-bit) and portable (takes anything).
#include <doctest/doctest.h>

#include "common/dispatch_fixture.hpp"
#include "kokkosattn/layout_copies.hpp"

using namespace kattn;
using namespace kattn::test;

namespace {

// Column-major ("LayoutLeft") strides over the same elements.
void make_left(Tensor& t) {
  std::int64_t s = 1;
  for (int d = 0; d < t.rank; ++d)
    t.stride[std::size_t(d)] = s, s *= t.extent[std::size_t(d)];
}

// Row-major strides again.
void make_right(Tensor& t) {
  std::int64_t s = 1;
  for (int d = t.rank - 1; d >= 0; --d)
    t.stride[std::size_t(d)] = s, s *= t.extent[std::size_t(d)];
}

ExecContext cuda_context() {
  ExecContext x;
  x.device = Device::cuda;
  return x;
}

bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

} // namespace

TEST_CASE("layout copies: row-major tensors need none; LayoutLeft ones need all four") {
  ForwardFixture f(DType::bf16);
  CHECK(is_row_major(f.p.q));
  CHECK(!copies_for(f.p).any());
  make_left(f.p.q);
  make_left(f.p.out);
  CHECK(!is_row_major(f.p.q));
  const LayoutCopies c = copies_for(f.p);
  CHECK(c.names() == "q, out");
  const ForwardProblem r = with_copies(f.p, c);
  CHECK(is_row_major(r.q));
  CHECK(r.q.data == nullptr); // the front end points copies at its scratch
  CHECK(r.k.data == f.p.k.data);
  // Extent-1 dimensions may carry any stride (Kokkos gives them the product of the others).
  Tensor one = Tensor::contiguous(nullptr, DType::f32, {1, 4, 1, 8});
  one.stride[0] = 7;
  one.stride[2] = 99;
  CHECK(is_row_major(one));
}

TEST_CASE("layout copies: auto runs a GPU kernel backend on copies instead of a slow backend") {
  EnvGuard no_env("KOKKOSATTN_BACKEND", nullptr);
  FakeSet s({Backend::cuda, Backend::portable, Backend::reference});
  s.fake(Backend::cuda).need_row_major();
  ForwardFixture f(DType::bf16);
  for (Tensor* t : {&f.p.q, &f.p.k, &f.p.v, &f.p.out})
    make_left(*t);
  const ExecContext x = cuda_context();

  const Selection with = select(s.registry, f.p, x, LayoutCopy::available);
  CHECK(with.impl->id() == Backend::cuda);
  CHECK(with.copies.names() == "q, k, v, out");
  CHECK(has(format_selection(with), "through row-major copies of q, k, v, out"));
  CHECK(has(with.note, "layout copies read and write q, k, v, out once more"));
  const auto verdicts = explain(s.registry, f.p, x, LayoutCopy::available);
  REQUIRE(verdicts.front().backend == Backend::cuda);
  CHECK(verdicts.front().supported);
  CHECK(verdicts.front().copies.any());
  CHECK(has(format_explain(verdicts), "ok through row-major copies of q, k, v, out (as given: "
                                      "expected head-dim stride 1"));

  // Without copies (raw-memory calls, or options.allow_layout_copies = false): the tensors as
  // given, and a note that names what would reach the GPU kernel backend.
  const Selection raw = select(s.registry, f.p, x);
  CHECK(raw.impl->id() == Backend::portable);
  CHECK(!raw.copies.any());
  CHECK(has(raw.note, "cuda serves this problem with row-major"));
  f.p.options.allow_layout_copies = false;
  const Selection off = select(s.registry, f.p, x, LayoutCopy::available);
  CHECK(off.impl->id() == Backend::portable);
  CHECK(!off.copies.any());
  CHECK(has(off.note, "row-major"));
}

TEST_CASE("layout copies: never instead of a GPU kernel backend that reads the tensors as given") {
  EnvGuard no_env("KOKKOSATTN_BACKEND", nullptr);
  FakeSet s({Backend::cudnn, Backend::cuda, Backend::portable});
  s.fake(Backend::cudnn).need_row_major(); // first in the order, but only through copies
  ForwardFixture f(DType::bf16);
  for (Tensor* t : {&f.p.q, &f.p.k, &f.p.v, &f.p.out})
    make_left(*t);
  const Selection sel = select(s.registry, f.p, cuda_context(), LayoutCopy::available);
  CHECK(sel.impl->id() == Backend::cuda);
  CHECK(!sel.copies.any());
  // Row-major tensors: no copies and the same choice as without them.
  ForwardFixture g(DType::bf16);
  const Selection direct = select(s.registry, g.p, cuda_context(), LayoutCopy::available);
  CHECK(direct.impl == select(s.registry, g.p, cuda_context()).impl);
  CHECK(!direct.copies.any());
}

TEST_CASE("layout copies: a forced backend runs on copies or throws; never another backend") {
  EnvGuard no_env("KOKKOSATTN_BACKEND", nullptr);
  FakeSet s({Backend::cuda, Backend::portable});
  s.fake(Backend::cuda).need_row_major();
  ForwardFixture f(DType::bf16);
  for (Tensor* t : {&f.p.q, &f.p.k, &f.p.v, &f.p.out})
    make_left(*t);
  f.p.options.backend = Backend::cuda;
  const Selection sel = select(s.registry, f.p, cuda_context(), LayoutCopy::available);
  CHECK(sel.impl->id() == Backend::cuda);
  CHECK(sel.copies.names() == "q, k, v, out");
  CHECK(sel.how == "forced by options");
  const std::string msg =
      unsupported_message([&] { (void)select(s.registry, f.p, cuda_context()); });
  CHECK(has(msg, "backend cuda cannot run this problem: expected head-dim stride 1"));
  // A backend that reads the strides itself is not given copies.
  f.p.options.backend = Backend::portable;
  CHECK(!select(s.registry, f.p, cuda_context(), LayoutCopy::available).copies.any());
}

TEST_CASE("layout copies: the outputs alone when a backend reads the inputs as given") {
  EnvGuard no_env("KOKKOSATTN_BACKEND", nullptr);
  FakeSet s({Backend::cudnn, Backend::cuda, Backend::portable});
  s.fake(Backend::cudnn).need_row_major();        // first in the order, needs all four copies
  s.fake(Backend::cuda).need_row_major_outputs(); // reads LayoutLeft q, k, v (sm90 does)
  ForwardFixture f(DType::bf16);
  for (Tensor* t : {&f.p.q, &f.p.k, &f.p.v, &f.p.out})
    make_left(*t);
  const ExecContext x = cuda_context();
  CHECK(copy_choices(copies_for(f.p), false).size() == 2);
  CHECK(copy_choices(copies_for(f.p), false).front().names() == "out");
  const Selection sel = select(s.registry, f.p, x, LayoutCopy::available);
  CHECK(sel.impl->id() == Backend::cuda); // one copy beats cudnn's four
  CHECK(sel.copies.names() == "out");
  CHECK(has(sel.note, "layout copies read and write out once more"));
  const auto verdicts = explain(s.registry, f.p, x, LayoutCopy::available);
  const auto copies_of = [&](Backend b) {
    for (const BackendVerdict& v : verdicts)
      if (v.backend == b)
        return v.copies.names();
    return std::string("(no verdict)");
  };
  CHECK(copies_of(Backend::cudnn) == "q, k, v, out");
  CHECK(copies_of(Backend::cuda) == "out");
  // Forced: the same fewest copies; a backend needing all four still gets them.
  f.p.options.backend = Backend::cuda;
  CHECK(select(s.registry, f.p, x, LayoutCopy::available).copies.names() == "out");
  f.p.options.backend = Backend::cudnn;
  CHECK(select(s.registry, f.p, x, LayoutCopy::available).copies.names() == "q, k, v, out");
  // Only inputs off row-major: no outputs-only choice, and this backend reads them as given.
  make_right(f.p.out);
  CHECK(copy_choices(copies_for(f.p), false).size() == 1);
  f.p.options.backend = Backend::cuda;
  CHECK(!select(s.registry, f.p, x, LayoutCopy::available).copies.any());
  // Backward: the gradients alone.
  BackwardFixture b;
  for (Tensor* t : {&b.bp.forward.q, &b.bp.dout, &b.bp.dk})
    make_left(*t);
  const std::vector<LayoutCopies> bc = copy_choices(copies_for(b.bp), true);
  REQUIRE(bc.size() == 2);
  CHECK(bc[0].names() == "dk");
  CHECK(bc[1].names() == "q, dout, dk");
}

TEST_CASE("layout copies: the backward copies its inputs and its gradients") {
  EnvGuard no_env("KOKKOSATTN_BACKEND", nullptr);
  FakeSet s({Backend::cudnn, Backend::portable});
  s.fake(Backend::cudnn).need_row_major();
  BackwardFixture b;
  for (Tensor* t : {&b.bp.forward.q, &b.bp.dout, &b.bp.dk})
    make_left(*t);
  const Selection sel = select(s.registry, b.bp, cuda_context(), LayoutCopy::available);
  CHECK(sel.impl->id() == Backend::cudnn);
  CHECK(sel.copies.names() == "q, dout, dk");
  CHECK(!LayoutCopies::is_output(LayoutCopies::q, true));
  CHECK(!LayoutCopies::is_output(LayoutCopies::out, true)); // the forward's out is an input here
  CHECK(LayoutCopies::is_output(LayoutCopies::dk, true));
  CHECK(LayoutCopies::is_output(LayoutCopies::out, false));
}

TEST_CASE("dispatch notes: f32 on a GPU runs a slow backend, and the note names bf16") {
  EnvGuard no_env("KOKKOSATTN_BACKEND", nullptr);
  FakeSet s({Backend::cuda, Backend::portable});
  s.fake(Backend::cuda).need_16bit().need_row_major();
  ForwardFixture f(DType::f32);
  make_left(f.p.q);
  const Selection sel = select(s.registry, f.p, cuda_context(), LayoutCopy::available);
  CHECK(sel.impl->id() == Backend::portable);
  CHECK(has(sel.note, "cuda serves this problem with bf16 or f16 tensors"));
  CHECK(has(format_selection(sel), "\nnote: "));
  // On the CPU there is nothing to note: the CPU backends are the fast ones there.
  CHECK(select(s.registry, f.p, ExecContext{}, LayoutCopy::available).note.empty());
}

TEST_CASE("layout copies: the order for the copies counts a measured lead for row-major tensors") {
  EnvGuard no_env("KOKKOSATTN_BACKEND", nullptr);
  FakeSet s({Backend::cudnn, Backend::cuda, Backend::portable});
  s.fake(Backend::cudnn).need_row_major();
  s.fake(Backend::cuda).need_row_major().kernel("sm90_fwd_bf16_h64");
  ForwardFixture f(DType::bf16);
  f.p.q.extent = {1, 8192, 1, 64}; // a shipped lead of cuda's sm90 kernels (auto_policy.cpp)
  f.p.q.data = f.p.k.data = f.p.v.data = reinterpret_cast<void*>(64); // never read (fakes)
  f.p.out.data = reinterpret_cast<void*>(std::uintptr_t{1} << 40);    // apart from the inputs
  f.p.extras.lse = {};
  for (Tensor* t : {&f.p.k, &f.p.v, &f.p.out})
    t->extent = f.p.q.extent;
  for (Tensor* t : {&f.p.q, &f.p.k, &f.p.v, &f.p.out})
    make_left(*t);
  const Selection sel = select(s.registry, f.p, cuda_context(), LayoutCopy::available);
  CHECK(sel.impl->id() == Backend::cuda); // not cudnn, first in the order for the Views as given
  CHECK(sel.copies.any());
  CHECK(sel.order_rule.find("cuda first: its sm90 kernel measured") == 0);
}
