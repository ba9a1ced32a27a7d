#include "conformance/runner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <utility>

#include <KokkosAttn.hpp>

#include "conformance/device_copy.hpp"
#include "kokkosattn/dispatch.hpp"
#include "kokkosattn/errors.hpp"

namespace kattn::conformance {

std::string_view to_string(Status s) {
  switch (s) {
  case Status::pass:
    return "pass";
  case Status::fail:
    return "fail";
  case Status::unsupported:
    return "unsupported";
  case Status::skipped:
    return "skipped";
  }
  return "?";
}

namespace {

using test::read_logical;

double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v)
    if (std::isfinite(x))
      m = std::max(m, std::abs(x));
  return m;
}

// Largest Euclidean norm of a row of `dim` consecutive logical elements.
double max_row_norm(const std::vector<double>& v, std::int64_t dim) {
  double m = 0;
  for (std::size_t r = 0; r + static_cast<std::size_t>(dim) <= v.size();
       r += static_cast<std::size_t>(dim)) {
    double s = 0;
    for (std::int64_t h = 0; h < dim; ++h)
      s += v[r + static_cast<std::size_t>(h)] * v[r + static_cast<std::size_t>(h)];
    m = std::max(m, std::sqrt(s));
  }
  return m;
}

Magnitudes measure(const test::Attn& a) {
  const test::Spec& s = a.spec;
  Magnitudes m;
  m.H = s.H;
  m.S = a.dims.S;
  m.T = a.dims.T;
  m.logit_dot = a.dims.scale * max_row_norm(read_logical(a.q.view), s.H) *
                max_row_norm(read_logical(a.k.view), s.H);
  if (s.bias)
    m.logit_extra += max_abs(a.bias.to_doubles());
  if (s.alibi)
    m.logit_extra += max_abs(a.slopes.to_doubles()) * static_cast<double>(std::max(m.S, m.T));
  m.logit_extra += s.opt.softcap;
  m.v_max = max_abs(read_logical(a.v.view));
  if (s.opt.dropout_p > 0)
    m.keep_scale = 1.0 / (1.0 - s.opt.dropout_p);
  const double q = max_abs(read_logical(a.q.view)), k = max_abs(read_logical(a.k.view));
  const double dout = max_abs(read_logical(a.dout.view));
  m.dv_term = m.keep_scale * dout;
  m.dbias_term = m.dv_term * m.v_max;
  m.dq_term = a.dims.scale * m.dbias_term * k;
  m.dk_term = a.dims.scale * m.dbias_term * q;
  m.dbias_reduce = (s.bias_bcast_b ? a.dims.B : 1) * (s.bias_bcast_n ? a.dims.N : 1);
  if (s.sinks) { // dout is [.., N, H] in logical order: element e belongs to head (e / H) % N
    const std::vector<double> g = read_logical(a.dout.view);
    std::vector<double> per_head(static_cast<std::size_t>(a.dims.N), 0.0);
    for (std::size_t e = 0; e < g.size(); ++e)
      per_head[(e / static_cast<std::size_t>(s.H)) % per_head.size()] += std::abs(g[e]);
    m.dsinks_terms = m.keep_scale * m.v_max * max_abs(per_head);
  }
  return m;
}

// Past 2^31 elements: batch entry 1 starts here (a multiple of 64 keeps rows aligned).
constexpr std::int64_t huge_batch_stride = (std::int64_t{1} << 31) + 64;

// Moves a batched buffer into a sparse mapping with batch stride huge_batch_stride.
void make_huge(test::Buffer& b, std::vector<std::unique_ptr<SparseMapping>>& keep,
               std::string& why) {
  const std::vector<double> values = read_logical(b.view);
  Tensor t = b.view;
  const std::int64_t inner = t.extent[1] * t.extent[2] * t.extent[3];
  t.stride = {huge_batch_stride, t.extent[2] * t.extent[3], t.extent[3], 1};
  const std::int64_t elems = huge_batch_stride * (t.extent[0] - 1) + inner;
  auto m = SparseMapping::create(static_cast<std::size_t>(elems) * size_bytes(t.dtype) + 64, why);
  if (!m)
    return;
  t.data = m->data();
  keep.push_back(std::move(m));
  b.view = t;
  test::write_logical(b.view, values);
}

void copy_logical(const Tensor& from, const Tensor& to) {
  test::write_logical(to, read_logical(from));
}

// The paged cache of a Case::page_size case (the same one in prepare() and all_refuse()).
test::PagedLayout paged_layout(const Case& c) {
  test::PagedLayout l;
  l.page_size = c.page_size;
  l.spare_pages = 2;
  l.shared_pages = 1;
  l.seed = c.spec.seed;
  return l;
}

} // namespace

Prepared prepare(const Case& c) {
  Prepared p;
  p.lo = std::make_unique<test::Attn>(c.spec);
  test::Attn& lo = *p.lo;
  test::Spec s64 = c.spec;
  s64.dtype = DType::f64;
  test::Attn hi(s64);
  if (c.customize) {
    c.customize(lo);
    c.customize(hi);
  }
  if (c.page_size > 0) // (before the copies below: shared pages rewrite lo's k and v)
    p.paged = std::make_unique<test::PagedCache>(test::make_paged(lo, paged_layout(c)));
  // The truth is computed from the very values the backends see (rounded to the dtype).
  copy_logical(lo.q.view, hi.q.view);
  copy_logical(lo.k.view, hi.k.view);
  copy_logical(lo.v.view, hi.v.view);
  copy_logical(lo.dout.view, hi.dout.view);
  if (c.huge_strides) {
    for (test::Buffer* b : {&lo.q, &lo.k, &lo.v, &lo.out, &lo.dout, &lo.dq, &lo.dk, &lo.dv}) {
      make_huge(*b, p.mappings, p.skip_reason);
      if (!p.skip_reason.empty()) {
        p.skip_reason = "64-bit indexing case needs sparse memory: " + p.skip_reason;
        return p;
      }
    }
  }
  p.magnitudes = measure(hi);
  const DType t = c.spec.dtype;
  const Magnitudes& m = p.magnitudes;
  auto add = [&](const std::string& name, std::vector<double> ref, std::vector<double> base) {
    const double scale = max_abs(ref);
    const double floor = atol_floor(name, t, m, scale);
    p.outputs.push_back({name, std::move(ref), std::move(base), floor});
  };
  hi.forward();
  lo.forward(); // the baseline: reference arithmetic, outputs rounded to the dtype
  if (!c.backward) {
    add("out", hi.out_values(), lo.out_values());
    add("lse", hi.lse_values(), lo.lse_values());
    return p;
  }
  const bool dbias = c.spec.bias;
  hi.backward(dbias);
  lo.backward(dbias);
  add("dq", read_logical(hi.dq.view), read_logical(lo.dq.view));
  add("dk", read_logical(hi.dk.view), read_logical(lo.dk.view));
  add("dv", read_logical(hi.dv.view), read_logical(lo.dv.view));
  if (dbias)
    add("dbias", hi.dbias.to_doubles(), lo.dbias.to_doubles());
  if (c.spec.sinks)
    add("dsinks", hi.dsinks.to_doubles(), lo.dsinks.to_doubles());
  // lo.out / lo.lse keep the baseline forward: every backend's backward gets the same inputs.
  return p;
}

std::vector<double> read_output(const Prepared& p, const std::string& name) {
  const test::Attn& a = *p.lo;
  if (name == "out")
    return a.out_values();
  if (name == "lse")
    return a.lse_values();
  if (name == "dq")
    return read_logical(a.dq.view);
  if (name == "dk")
    return read_logical(a.dk.view);
  if (name == "dv")
    return read_logical(a.dv.view);
  if (name == "dsinks")
    return a.dsinks.to_doubles();
  return a.dbias.to_doubles();
}

namespace {

std::string sci(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", x);
  return buf;
}

// Against a Kokkos with CUDA the device cases go through the Kokkos front end on Kokkos::Cuda
// (KokkosAttn::sdpa on the problem: layout copies and the instance's stream), as a user's Views
// would; otherwise through kattn's raw-memory dispatch with a CUDA context.
#ifdef KOKKOS_ENABLE_CUDA
constexpr LayoutCopy copies = LayoutCopy::available;
#else
constexpr LayoutCopy copies = LayoutCopy::unavailable;
#endif

template <class Problem>
BackendVerdict verdict_of(const Problem& p, Backend b, const ExecContext& x) {
  for (BackendVerdict& v : explain(default_registry(), p, x, copies))
    if (v.backend == b)
      return v;
  BackendVerdict v;
  v.backend = b;
  v.reason = "explain() does not list this backend";
  return v;
}

// The problem as backend b takes it: host memory as built, or (GPU backends, when a CUDA GPU is
// present) every tensor copied to device memory with the same strides, outputs NaN-poisoned on
// the host first and uploaded so; collect() copies the outputs back into the host problem.
class Staged {
public:
  Staged(const test::Attn& a, const Case& c, Backend b, const ExecContext& host_x,
         const test::PagedCache* paged)
      : fp_(paged ? paged->problem(a) : a.forward_problem()), bp_(a.backward_problem(c.spec.bias)),
        x_(host_x) {
    fp_.options.backend = b;
    bp_.forward.options.backend = b;
#ifdef KOKKOSATTN_CONFORMANCE_CUDA
    if (!needs_cuda_device(b) || !cuda_device_present())
      return;
#ifdef KOKKOS_ENABLE_CUDA
    x_ = KokkosAttn::make_exec_context(cuda_);
#else
    x_ = ExecContext{};
    x_.device = Device::cuda;
#endif
    ForwardProblem& f = c.backward ? bp_.forward : fp_;
    if (a.spec.packed) { // the device cannot read cu_seqlens on the host: say the longest
      f.extras.max_seqlen_q = a.dims.T;
      f.extras.max_seqlen_k = a.dims.S;
    }
    for (Tensor* t : {&f.q, &f.k, &f.v, &f.extras.bias, &f.extras.mask, &f.extras.alibi_slopes,
                      &f.extras.sinks, &f.extras.seqlens_q, &f.extras.seqlens_k,
                      &f.extras.cu_seqlens_q, &f.extras.cu_seqlens_k, &f.extras.page_table})
      mirror(*t, false);
    mirror(f.out, !c.backward); // backward: the baseline forward's out and LSE are inputs
    mirror(f.extras.lse, !c.backward);
    if (c.backward) {
      mirror(bp_.dout, false);
      for (Tensor* t : {&bp_.dq, &bp_.dk, &bp_.dv, &bp_.dbias, &bp_.dsinks})
        mirror(*t, true);
    }
#endif
  }

  const ExecContext& context() const { return x_; }

  void run(bool backward) const {
#ifdef KOKKOS_ENABLE_CUDA
    if (x_.device == Device::cuda) {
      if (backward)
        KokkosAttn::sdpa_backward(cuda_, bp_);
      else
        KokkosAttn::sdpa(cuda_, fp_);
      return;
    }
#endif
    if (backward)
      run_backward(default_registry(), bp_, x_);
    else
      run_forward(default_registry(), fp_, x_);
  }
  const ForwardProblem& forward() const { return fp_; }
  const BackwardProblem& backward() const { return bp_; }

  // Poisons the outputs where the backend will write them.
  void poison(const test::Attn& a, bool backward) {
    if (!backward) {
      test::poison(a.out.view);
      test::poison(a.lse.view());
    } else {
      for (const Tensor* t : {&a.dq.view, &a.dk.view, &a.dv.view, &a.dbias.view()})
        test::poison(*t);
    }
#ifdef KOKKOSATTN_CONFORMANCE_CUDA
    for (auto& o : outputs_)
      o->upload();
#endif
  }

  // After the run: the outputs back into the host problem.
  void collect() {
#ifdef KOKKOSATTN_CONFORMANCE_CUDA
    if (x_.device != Device::cuda)
      return;
    cuda_synchronize();
    for (auto& o : outputs_)
      o->download();
#endif
  }

private:
#ifdef KOKKOSATTN_CONFORMANCE_CUDA
  void mirror(Tensor& t, bool output) {
    if (!t.defined())
      return;
    auto d = std::make_unique<DeviceCopy>(t);
    t = d->view();
    (output ? outputs_ : inputs_).push_back(std::move(d));
  }
  std::vector<std::unique_ptr<DeviceCopy>> inputs_, outputs_;
#endif
#ifdef KOKKOS_ENABLE_CUDA
  Kokkos::Cuda cuda_; // the instance the device context points at
#endif
  ForwardProblem fp_;
  BackwardProblem bp_;
  ExecContext x_;
};

BackendVerdict verdict_of(const Staged& st, bool backward, Backend b) {
  return backward ? verdict_of(st.backward(), b, st.context())
                  : verdict_of(st.forward(), b, st.context());
}

void run_one(const Case& c, Prepared& p, Backend b, const ExecContext& x, Result& r) {
  test::Attn& a = *p.lo;
  Staged st(a, c, b, x, p.paged.get());
  const BackendVerdict v = verdict_of(st, c.backward, b);
  if (!v.supported) {
    r.status = Status::unsupported;
    r.reason = v.reason;
    return;
  }
  st.poison(a, c.backward);
  st.run(c.backward);
  st.collect();
  r.status = Status::pass;
  for (const Prepared::Output& o : p.outputs) {
    Check ch = judge(o.tensor, read_output(p, o.tensor), o.ref, o.baseline, o.floor);
    if (!ch.ok && r.status == Status::pass) {
      r.status = Status::fail;
      r.reason = o.tensor + ": max|err| " + sci(ch.err) + " > tolerance " + sci(ch.tol) +
                 " (2 x baseline " + sci(ch.baseline_err) + " + floor " + sci(ch.floor) + ")";
    }
    r.checks.push_back(ch);
  }
}

// Every backend's verdict on the case's problem before any reference is computed; true when all
// refuse (each result then says why).
bool all_refuse(const Case& c, const std::vector<Backend>& backends, const ExecContext& x,
                std::vector<Result>& results) {
  test::Attn a(c.spec);
  std::unique_ptr<test::PagedCache> paged;
  if (c.page_size > 0)
    paged = std::make_unique<test::PagedCache>(test::make_paged(a, paged_layout(c)));
  for (std::size_t i = 0; i < backends.size(); ++i) {
    const Staged st(a, c, backends[i], x, paged.get());
    const BackendVerdict v = verdict_of(st, c.backward, backends[i]);
    if (v.supported)
      return false;
    results[i].status = Status::unsupported;
    results[i].reason = v.reason;
  }
  return true;
}

} // namespace

std::vector<Result> run_case(const Case& c, const std::vector<Backend>& backends,
                             const ExecContext& x, bool precheck) {
  std::vector<Result> results;
  Result proto;
  proto.case_name = c.name;
  proto.index = c.index;
  proto.description = c.description;
  proto.features = c.features;
  if (precheck && !c.huge_strides && !c.customize) {
    std::vector<Result> refused(backends.size(), proto);
    for (std::size_t i = 0; i < backends.size(); ++i)
      refused[i].backend = std::string(kattn::to_string(backends[i]));
    try {
      if (all_refuse(c, backends, x, refused))
        return refused;
    } catch (const std::exception&) {
      // a case that cannot even be staged is judged (and reported) by the full run below
    }
  }
  Prepared p;
  std::string broken;
  try {
    p = prepare(c);
  } catch (const std::exception& e) {
    broken = std::string("case could not be prepared: ") + e.what();
  }
  for (Backend b : backends) {
    Result r = proto;
    r.backend = std::string(kattn::to_string(b));
    const auto t0 = std::chrono::steady_clock::now();
    if (!broken.empty()) {
      r.status = Status::fail;
      r.reason = broken;
    } else if (!p.skip_reason.empty()) {
      r.status = Status::skipped;
      r.reason = p.skip_reason;
    } else if (b == Backend::cudnn && c.spec.opt.dropout_p > 0) {
      // cuDNN draws its own dropout mask (tests/gpu/test_cudnn_dropout.cpp checks it
      // statistically); element-wise comparison with the reference's Philox mask is meaningless.
      r.status = Status::skipped;
      r.reason = "dropout: cudnn's mask is cuDNN's own random stream, not comparable with the "
                 "reference's Philox mask";
    } else {
      try {
        run_one(c, p, b, x, r);
      } catch (const std::exception& e) {
        r.status = Status::fail;
        r.reason = std::string("threw: ") + e.what();
      }
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    results.push_back(std::move(r));
  }
  return results;
}

} // namespace kattn::conformance
