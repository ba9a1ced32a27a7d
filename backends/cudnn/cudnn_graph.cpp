#include "cudnn/cudnn_graph.hpp"

#include <cudnn_frontend.h>

#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "cudnn/cudnn_status.hpp"
#include "cudnn/cudnn_varlen.hpp"

namespace kattn::cudnn::detail {
namespace {

namespace fe = cudnn_frontend;

// Tensor uids of the variant pack.
enum : std::int64_t {
  uid_q = 1,
  uid_k,
  uid_v,
  uid_o,
  uid_stats,
  uid_bias,
  uid_do,
  uid_dq,
  uid_dk,
  uid_dv,
  uid_dbias,
  uid_seed,
  uid_offset,
  uid_descale_q, // FP8 factors, in the order of Fp8Scales
  uid_descale_k,
  uid_descale_v,
  uid_descale_s,
  uid_scale_s,
  uid_scale_o,
  uid_amax_s,
  uid_amax_o,
  uid_descale_o, // FP8 backward factors, in the order of Fp8BackwardScales
  uid_descale_do,
  uid_descale_dp,
  uid_scale_dp,
  uid_scale_dq,
  uid_scale_dk,
  uid_scale_dv,
  uid_amax_dq,
  uid_amax_dk,
  uid_amax_dv,
  uid_amax_dp,
  uid_seq_q, // varlen: per-batch lengths, then the ragged offsets (max_ragged of them)
  uid_seq_kv,
  uid_ragged0
};

// FP8 factors the caller left out: one 1.0 that every missing input factor reads, then one
// scratch float per amax output of a graph (written, never read back; the backward has four).
// One buffer per device, made on first use.
constexpr int fp8_amax_scratch = 4;
constexpr int fp8_default_count = 1 + fp8_amax_scratch;

fe::DataType_t fe_type(DType t) {
  switch (t) {
  case DType::bf16:
    return fe::DataType_t::BFLOAT16;
  case DType::f16:
    return fe::DataType_t::HALF;
  case DType::f32:
    return fe::DataType_t::FLOAT;
  case DType::f8_e4m3:
    return fe::DataType_t::FP8_E4M3;
  case DType::f8_e5m2:
    return fe::DataType_t::FP8_E5M2;
  default:
    return fe::DataType_t::NOT_SET;
  }
}

std::vector<std::int64_t> vec(const Strides4& s) {
  return {s[0], s[1], s[2], s[3]};
}

// One cached graph (or cuDNN's reason for refusing it) and the workspace it runs with.
struct Entry {
  std::shared_ptr<fe::graph::Graph> graph;
  std::string refusal; // non-empty: cuDNN cannot run this key
  void* workspace = nullptr;
  std::int64_t workspace_bytes = 0;
  void* rng = nullptr;    // dropout: device seed and offset (two int64), written before each run
  int* lengths = nullptr; // varlen: seq_q [B], seq_kv [B], then n_ragged offset arrays [B+1]
  float* stats = nullptr; // varlen: LSE scratch (packed forward, backward), grown on demand
  std::size_t stats_bytes = 0;
  int device = 0;

  Entry() = default;
  Entry(const Entry&) = delete;
  Entry& operator=(const Entry&) = delete;
  ~Entry() {
    if (workspace == nullptr && rng == nullptr && lengths == nullptr && stats == nullptr)
      return;
    // cudaFree waits for work still using the buffers; restore the caller's device.
    int current = 0;
    if (cudaGetDevice(&current) == cudaSuccess && cudaSetDevice(device) == cudaSuccess) {
      if (workspace)
        (void)cudaFree(workspace);
      if (rng)
        (void)cudaFree(rng);
      if (lengths)
        (void)cudaFree(lengths);
      if (stats)
        (void)cudaFree(stats);
      (void)cudaSetDevice(current);
    }
  }
};

std::string refusal(const char* step, fe::error_t& e) {
  return std::string("cuDNN refused the graph (") + step + "): " + e.get_message();
}

using TA = fe::graph::Tensor_attributes;
using Graph = fe::graph::Graph;

// The ragged-offset tensors of a packed spec (one per slot), made once per graph.
struct Ragged {
  std::vector<std::shared_ptr<TA>> slots;
  const GraphSpec* spec = nullptr;
  // Attaches tensor `which`'s offsets (packed specs only).
  void attach(TA& t, RaggedTensor which) const {
    if (spec == nullptr || !spec->packed || spec->ragged_slot[which] < 0)
      return;
    t.set_ragged_offset(slots[static_cast<std::size_t>(spec->ragged_slot[which])]);
  }
};

Ragged make_ragged(Graph& g, const GraphSpec& s) {
  Ragged r;
  r.spec = &s;
  for (int i = 0; s.packed && i < s.n_ragged; ++i)
    r.slots.push_back(g.tensor(TA().set_name("ragged_offset_" + std::to_string(i))
                                   .set_uid(uid_ragged0 + i)
                                   .set_dim({s.B + 1, 1, 1, 1})
                                   .set_stride({1, 1, 1, 1})
                                   .set_data_type(fe::DataType_t::INT32)));
  return r;
}

std::shared_ptr<TA> input(Graph& g, const char* name, std::int64_t uid,
                          std::vector<std::int64_t> dim, const Strides4& stride,
                          const Ragged& ragged, RaggedTensor which) {
  TA t = TA().set_name(name).set_uid(uid).set_dim(std::move(dim)).set_stride(vec(stride));
  ragged.attach(t, which);
  return g.tensor(t);
}

void output(const std::shared_ptr<TA>& t, std::int64_t uid, std::vector<std::int64_t> dim,
            const Strides4& stride, const Ragged& ragged, RaggedTensor which) {
  t->set_output(true).set_uid(uid).set_dim(std::move(dim)).set_stride(vec(stride));
  ragged.attach(*t, which);
}

// Scale and mask band: every SDPA attribute set has these (the FP8 backward's has no more of
// set_common's: the backend refuses the rest for it).
template <class Attr>
void set_scale_and_band(const GraphSpec& s, Attr& attr) {
  attr.set_attn_scale(s.scale);
  if (s.right_bound >= 0)
    attr.set_diagonal_band_right_bound(static_cast<int>(s.right_bound));
  if (s.left_bound >= 0)
    attr.set_diagonal_band_left_bound(static_cast<int>(s.left_bound));
  attr.set_diagonal_alignment(s.bottom_right ? fe::DiagonalAlignment_t::BOTTOM_RIGHT
                                             : fe::DiagonalAlignment_t::TOP_LEFT);
}

// Mask, scale and bias settings shared by the forward and backward attributes.
template <class Attr>
void set_common(Graph& g, const GraphSpec& s, Attr& attr) {
  set_scale_and_band(s, attr);
  if (s.bias) {
    auto bias = g.tensor(TA().set_name("bias")
                             .set_uid(uid_bias)
                             .set_data_type(fe_type(s.bias_dtype))
                             .set_dim({s.bias_dim[0], s.bias_dim[1], s.bias_dim[2], s.bias_dim[3]})
                             .set_stride(vec(s.bias_stride)));
    attr.set_bias(bias);
  }
  if (s.alibi)
    attr.set_alibi_mask(true);
  if (s.varlen()) {
    auto lengths = [&](const char* name, std::int64_t uid) {
      return g.tensor(TA().set_name(name)
                          .set_uid(uid)
                          .set_dim({s.B, 1, 1, 1})
                          .set_stride({1, 1, 1, 1})
                          .set_data_type(fe::DataType_t::INT32));
    };
    attr.set_padding_mask(true)
        .set_seq_len_q(lengths("seq_len_q", uid_seq_q))
        .set_seq_len_kv(lengths("seq_len_kv", uid_seq_kv));
  }
  if (s.dropout) {
    auto scalar = [&](const char* name, std::int64_t uid) {
      return g.tensor(TA().set_name(name)
                          .set_uid(uid)
                          .set_dim({1, 1, 1, 1})
                          .set_stride({1, 1, 1, 1})
                          .set_data_type(fe::DataType_t::INT64));
    };
    attr.set_dropout(s.dropout_p, scalar("seed", uid_seed), scalar("offset", uid_offset));
  }
}

std::shared_ptr<TA> fp8_factor(Graph& g, const char* name, std::int64_t uid) {
  return g.tensor(TA().set_name(name)
                      .set_uid(uid)
                      .set_dim({1, 1, 1, 1})
                      .set_stride({1, 1, 1, 1})
                      .set_data_type(fe::DataType_t::FLOAT));
}

void add_forward_fp8(Graph& g, const GraphSpec& s) {
  const Ragged r; // FP8 is served batched only
  auto q = input(g, "Q", uid_q, {s.B, s.N, s.T, s.H}, s.q, r, rt_q);
  auto k = input(g, "K", uid_k, {s.B, s.K, s.S, s.H}, s.k, r, rt_k);
  auto v = input(g, "V", uid_v, {s.B, s.K, s.S, s.Hv}, s.v, r, rt_v);
  auto attr = fe::graph::SDPA_fp8_attributes()
                  .set_name("kokkosattn_sdpa_fp8")
                  .set_generate_stats(s.lse)
                  ._set_mma_core_mode(fe_type(s.dtype));
  set_common(g, s, attr);
  auto [o, stats, amax_s, amax_o] = g.sdpa_fp8(
      q, k, v, fp8_factor(g, "descale_q", uid_descale_q), fp8_factor(g, "descale_k", uid_descale_k),
      fp8_factor(g, "descale_v", uid_descale_v), fp8_factor(g, "descale_s", uid_descale_s),
      fp8_factor(g, "scale_s", uid_scale_s), fp8_factor(g, "scale_o", uid_scale_o), attr);
  output(o, uid_o, {s.B, s.N, s.T, s.Hv}, s.o, r, rt_o);
  o->set_data_type(fe_type(s.dtype));
  if (s.lse) {
    output(stats, uid_stats, {s.B, s.N, s.T, 1}, s.lse_stride, r, rt_stats);
    stats->set_data_type(fe::DataType_t::FLOAT);
  }
  for (auto& [t, uid] : {std::pair{amax_s, uid_amax_s}, std::pair{amax_o, uid_amax_o}}) {
    output(t, uid, {1, 1, 1, 1}, {1, 1, 1, 1}, r, rt_o);
    t->set_data_type(fe::DataType_t::FLOAT);
  }
}

// The FP8 backward (cuDNN's sdpa_fp8_backward): batched, no bias, ALiBi, dropout or varlen
// (cudnn_backend.cpp refuses those first). The forward's factors (descale_q/k/v, descale_s,
// scale_s) recompute and re-quantise P as the forward did; O is in q's FP8 format, dO in its own,
// dQ/dK/dV in grad_dtype. cuDNN's "dP" is our Fp8BackwardScales' dp.
void add_backward_fp8(Graph& g, const GraphSpec& s) {
  const Ragged r;
  auto q = input(g, "Q", uid_q, {s.B, s.N, s.T, s.H}, s.q, r, rt_q);
  auto k = input(g, "K", uid_k, {s.B, s.K, s.S, s.H}, s.k, r, rt_k);
  auto v = input(g, "V", uid_v, {s.B, s.K, s.S, s.Hv}, s.v, r, rt_v);
  auto o = input(g, "O", uid_o, {s.B, s.N, s.T, s.Hv}, s.o, r, rt_o);
  auto dout = input(g, "dO", uid_do, {s.B, s.N, s.T, s.Hv}, s.dout, r, rt_do);
  dout->set_data_type(fe_type(s.dout_dtype));
  auto stats = input(g, "Stats", uid_stats, {s.B, s.N, s.T, 1}, s.lse_stride, r, rt_stats);
  stats->set_data_type(fe::DataType_t::FLOAT);
  auto attr = fe::graph::SDPA_fp8_backward_attributes()
                  .set_name("kokkosattn_sdpa_fp8_backward")
                  .set_deterministic_algorithm(s.deterministic);
  set_scale_and_band(s, attr);
  auto [dq, dk, dv, amax_dq, amax_dk, amax_dv, amax_dp] = g.sdpa_fp8_backward(
      q, k, v, o, dout, stats, fp8_factor(g, "descale_q", uid_descale_q),
      fp8_factor(g, "descale_k", uid_descale_k), fp8_factor(g, "descale_v", uid_descale_v),
      fp8_factor(g, "descale_o", uid_descale_o), fp8_factor(g, "descale_dO", uid_descale_do),
      fp8_factor(g, "descale_s", uid_descale_s), fp8_factor(g, "descale_dP", uid_descale_dp),
      fp8_factor(g, "scale_s", uid_scale_s), fp8_factor(g, "scale_dQ", uid_scale_dq),
      fp8_factor(g, "scale_dK", uid_scale_dk), fp8_factor(g, "scale_dV", uid_scale_dv),
      fp8_factor(g, "scale_dP", uid_scale_dp), attr);
  output(dq, uid_dq, {s.B, s.N, s.T, s.H}, s.dq, r, rt_dq);
  output(dk, uid_dk, {s.B, s.K, s.S, s.H}, s.dk, r, rt_dk);
  output(dv, uid_dv, {s.B, s.K, s.S, s.Hv}, s.dv, r, rt_dv);
  for (auto& t : {dq, dk, dv})
    t->set_data_type(fe_type(s.grad_dtype));
  for (auto& [t, uid] : {std::pair{amax_dq, uid_amax_dq}, std::pair{amax_dk, uid_amax_dk},
                         std::pair{amax_dv, uid_amax_dv}, std::pair{amax_dp, uid_amax_dp}}) {
    output(t, uid, {1, 1, 1, 1}, {1, 1, 1, 1}, r, rt_o);
    t->set_data_type(fe::DataType_t::FLOAT);
  }
}

void add_forward(Graph& g, const GraphSpec& s) {
  const Ragged r = make_ragged(g, s);
  auto q = input(g, "Q", uid_q, {s.B, s.N, s.T, s.H}, s.q, r, rt_q);
  auto k = input(g, "K", uid_k, {s.B, s.K, s.S, s.H}, s.k, r, rt_k);
  auto v = input(g, "V", uid_v, {s.B, s.K, s.S, s.Hv}, s.v, r, rt_v);
  auto attr = fe::graph::SDPA_attributes().set_name("kokkosattn_sdpa").set_generate_stats(s.lse);
  set_common(g, s, attr);
  auto [o, stats] = g.sdpa(q, k, v, attr);
  output(o, uid_o, {s.B, s.N, s.T, s.Hv}, s.o, r, rt_o);
  if (s.lse) {
    output(stats, uid_stats, {s.B, s.N, s.T, 1}, s.lse_stride, r, rt_stats);
    stats->set_data_type(fe::DataType_t::FLOAT);
  }
}

void add_backward(Graph& g, const GraphSpec& s) {
  const Ragged r = make_ragged(g, s);
  auto q = input(g, "Q", uid_q, {s.B, s.N, s.T, s.H}, s.q, r, rt_q);
  auto k = input(g, "K", uid_k, {s.B, s.K, s.S, s.H}, s.k, r, rt_k);
  auto v = input(g, "V", uid_v, {s.B, s.K, s.S, s.Hv}, s.v, r, rt_v);
  auto o = input(g, "O", uid_o, {s.B, s.N, s.T, s.Hv}, s.o, r, rt_o);
  auto dout = input(g, "dO", uid_do, {s.B, s.N, s.T, s.Hv}, s.dout, r, rt_do);
  auto stats = input(g, "Stats", uid_stats, {s.B, s.N, s.T, 1}, s.lse_stride, r, rt_stats);
  stats->set_data_type(fe::DataType_t::FLOAT);
  auto attr = fe::graph::SDPA_backward_attributes()
                  .set_name("kokkosattn_sdpa_backward")
                  .set_deterministic_algorithm(s.deterministic);
  set_common(g, s, attr);
  if (s.dbias)
    attr.set_dbias(
        g.tensor(TA().set_name("dbias")
                     .set_uid(uid_dbias)
                     .set_data_type(fe_type(s.bias_dtype))
                     .set_dim({s.bias_dim[0], s.bias_dim[1], s.bias_dim[2], s.bias_dim[3]})
                     .set_stride(vec(s.dbias_stride))));
  auto [dq, dk, dv] = g.sdpa_backward(q, k, v, o, dout, stats, attr);
  output(dq, uid_dq, {s.B, s.N, s.T, s.H}, s.dq, r, rt_dq);
  output(dk, uid_dk, {s.B, s.K, s.S, s.H}, s.dk, r, rt_dk);
  output(dv, uid_dv, {s.B, s.K, s.S, s.Hv}, s.dv, r, rt_dv);
}

std::shared_ptr<Entry> build(const GraphSpec& s, cudnnHandle_t handle) {
  auto e = std::make_shared<Entry>();
  e->device = s.device;
  auto g = std::make_shared<Graph>();
  g->set_io_data_type(fe_type(s.dtype))
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  if (s.backward && s.fp8())
    add_backward_fp8(*g, s);
  else if (s.backward)
    add_backward(*g, s);
  else if (s.fp8())
    add_forward_fp8(*g, s);
  else
    add_forward(*g, s);

  if (auto st = g->validate(); st.is_bad())
    return e->refusal = refusal("validate", st), e;
  if (auto st = g->build_operation_graph(handle); st.is_bad())
    return e->refusal = refusal("build_operation_graph", st), e;
  if (auto st = g->create_execution_plans({fe::HeurMode_t::A}); st.is_bad())
    return e->refusal = refusal("create_execution_plans", st), e;
  if (auto st = g->check_support(handle); st.is_bad())
    return e->refusal = refusal("check_support", st), e;
  if (auto st = g->build_plans(fe::BuildPlanPolicy_t::HEURISTICS_CHOICE); st.is_bad())
    return e->refusal = refusal("build_plans", st), e;
  if (auto st = g->get_workspace_size(e->workspace_bytes); st.is_bad())
    return e->refusal = refusal("get_workspace_size", st), e;
  if (e->workspace_bytes > 0)
    check_cuda(cudaMalloc(&e->workspace, static_cast<std::size_t>(e->workspace_bytes)),
               "cudaMalloc(workspace)");
  if (s.dropout)
    check_cuda(cudaMalloc(&e->rng, 2 * sizeof(std::int64_t)), "cudaMalloc(dropout seed/offset)");
  if (s.varlen())
    check_cuda(cudaMalloc(reinterpret_cast<void**>(&e->lengths),
                          static_cast<std::size_t>(2 * s.B + s.n_ragged * (s.B + 1)) * sizeof(int)),
               "cudaMalloc(varlen lengths)");
  e->graph = std::move(g);
  return e;
}

// Process-wide: one cuDNN handle per device and the bounded LRU of graphs, under one mutex
// (graph builds and the handle's set-stream + enqueue are serialised; enqueueing is cheap).
class Cache {
public:
  std::shared_ptr<Entry> get(const GraphSpec& s, cudnnHandle_t* handle_out) {
    // Caller holds mutex_.
    const std::string key = s.key();
    cudnnHandle_t h = handle(s.device);
    if (handle_out)
      *handle_out = h;
    if (auto it = map_.find(key); it != map_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second.second);
      return it->second.first;
    }
    std::shared_ptr<Entry> e = build(s, h);
    ++built_;
    lru_.push_front(key);
    map_.emplace(key, std::make_pair(e, lru_.begin()));
    while (map_.size() > graph_cache_capacity) {
      map_.erase(lru_.back());
      lru_.pop_back();
    }
    return e;
  }

  std::size_t size() {
    std::lock_guard<std::mutex> lock(mutex_);
    return map_.size();
  }

  std::size_t built() {
    std::lock_guard<std::mutex> lock(mutex_);
    return built_;
  }

  // Caller holds mutex_ and has made `device` current.
  float* fp8_defaults(int device) {
    if (auto it = fp8_defaults_.find(device); it != fp8_defaults_.end())
      return it->second;
    float host[fp8_default_count] = {1}; // then zeros: the amax scratch
    void* d = nullptr;
    check_cuda(cudaMalloc(&d, sizeof host), "cudaMalloc(fp8 default factors)");
    check_cuda(cudaMemcpy(d, host, sizeof host, cudaMemcpyHostToDevice),
               "cudaMemcpy(fp8 default factors)");
    fp8_defaults_.emplace(device, static_cast<float*>(d));
    return static_cast<float*>(d);
  }

  std::mutex mutex_;

private:
  std::size_t built_ = 0;
  std::map<int, float*> fp8_defaults_;
  cudnnHandle_t handle(int device) {
    if (auto it = handles_.find(device); it != handles_.end())
      return it->second;
    cudnnHandle_t h = nullptr;
    check_cudnn(cudnnCreate(&h), "cudnnCreate");
    handles_.emplace(device, h);
    return h;
  }

  std::map<int, cudnnHandle_t> handles_;
  std::list<std::string> lru_; // front = most recently used
  std::unordered_map<std::string,
                     std::pair<std::shared_ptr<Entry>, std::list<std::string>::iterator>>
      map_;
};

// Never destroyed: handles and device memory must not be released during static destruction,
// after the CUDA runtime may already be gone.
Cache& cache() {
  static Cache* c = new Cache;
  return *c;
}

} // namespace

Support check_graph(const GraphSpec& spec) {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex_);
  std::shared_ptr<Entry> e = c.get(spec, nullptr);
  if (!e->refusal.empty())
    return Support::no(e->refusal + " [" + spec.describe() + "]");
  return Support::yes();
}

namespace {

// Run-time values that are not tensors of the problem.
struct RunValues {
  const Options* options = nullptr; // dropout seed and offset
  const Fp8Scales* fp8 = nullptr;
  const ForwardProblem* forward = nullptr;   // varlen: lengths, offsets, out/lse for the fix-up
  const BackwardProblem* backward = nullptr; // varlen backward: its gradients; FP8: its factors
};

// The FP8 factors of the graph into the pack: the caller's tensors, or the device defaults (1.0
// for an input factor, a scratch float per amax output) where the caller gave none.
void fp8_factors(const GraphSpec& s, const RunValues& values, float* defaults,
                 std::unordered_map<std::int64_t, void*>& pack) {
  const Fp8Scales& f = *values.fp8;
  std::vector<std::pair<std::int64_t, const Tensor*>> inputs = {{uid_descale_q, &f.descale_q},
                                                                {uid_descale_k, &f.descale_k},
                                                                {uid_descale_v, &f.descale_v},
                                                                {uid_descale_s, &f.descale_s},
                                                                {uid_scale_s, &f.scale_s}};
  std::vector<std::pair<std::int64_t, const Tensor*>> amax;
  if (!s.backward) {
    inputs.emplace_back(uid_scale_o, &f.scale_o);
    amax = {{uid_amax_s, &f.amax_s}, {uid_amax_o, &f.amax_o}};
  } else {
    const Fp8BackwardScales& b = values.backward->fp8;
    inputs.insert(inputs.end(), {{uid_descale_o, &b.descale_o},
                                 {uid_descale_do, &b.descale_dout},
                                 {uid_descale_dp, &b.descale_dp},
                                 {uid_scale_dp, &b.scale_dp},
                                 {uid_scale_dq, &b.scale_dq},
                                 {uid_scale_dk, &b.scale_dk},
                                 {uid_scale_dv, &b.scale_dv}});
    amax = {{uid_amax_dq, &b.amax_dq},
            {uid_amax_dk, &b.amax_dk},
            {uid_amax_dv, &b.amax_dv},
            {uid_amax_dp, &b.amax_dp}};
  }
  for (const auto& [uid, t] : inputs)
    pack[uid] = t->defined() ? t->data : defaults;
  for (std::size_t i = 0; i < amax.size(); ++i)
    pack[amax[i].first] = amax[i].second->defined() ? amax[i].second->data : defaults + 1 + i;
}

// ------------------------------------------------------------------ varlen (cudnn_varlen.hpp)

// The grown-on-demand LSE scratch of an entry (caller holds the cache mutex).
float* stats_scratch(Entry& e, std::size_t floats) {
  if (e.stats_bytes < floats * sizeof(float)) {
    if (e.stats)
      check_cuda(cudaFree(e.stats), "cudaFree(varlen LSE scratch)"); // waits for its users
    e.stats = nullptr;
    check_cuda(cudaMalloc(reinterpret_cast<void**>(&e.stats), floats * sizeof(float)),
               "cudaMalloc(varlen LSE scratch)");
    e.stats_bytes = floats * sizeof(float);
  }
  return e.stats;
}

// Rows of an [B, T, heads, dim] / [total, heads, dim] tensor for the fix-up kernel.
RowsArgs rows_of(const Tensor& t) {
  RowsArgs r;
  r.data = t.data;
  const bool packed = t.rank == 3;
  r.batch_stride = packed ? 0 : t.stride[0];
  r.token_stride = t.stride[packed ? 0 : 1];
  r.head_stride = t.stride[packed ? 1 : 2];
  r.heads = static_cast<int>(t.extent[packed ? 1 : 2]);
  r.dim = static_cast<int>(t.extent[packed ? 2 : 3]);
  return r;
}

// Lengths and ragged offsets into e.lengths, their uids into the pack; the LSE scratch for packed
// forwards and for backwards (a copy with -inf made +inf).
void varlen_before(const GraphSpec& s, Entry& e, const RunValues& values,
                   std::unordered_map<std::int64_t, void*>& pack, cudaStream_t stream) {
  const ForwardProblem& f = *values.forward;
  const Extras& x = f.extras;
  PrepArgs a;
  a.B = static_cast<int>(s.B), a.T = static_cast<int>(s.T), a.S = static_cast<int>(s.S);
  if (s.packed) {
    a.cu_q = static_cast<const int*>(x.cu_seqlens_q.data);
    a.cu_k = static_cast<const int*>(x.cu_seqlens_k.data);
    a.cu_q_stride = x.cu_seqlens_q.stride[0], a.cu_k_stride = x.cu_seqlens_k.stride[0];
  } else {
    a.len_q = static_cast<const int*>(x.seqlens_q.data);
    a.len_k = static_cast<const int*>(x.seqlens_k.data);
    a.len_q_stride = x.seqlens_q.defined() ? x.seqlens_q.stride[0] : 1;
    a.len_k_stride = x.seqlens_k.defined() ? x.seqlens_k.stride[0] : 1;
  }
  a.seq_q = e.lengths;
  a.seq_k = e.lengths + s.B;
  a.n_off = s.n_ragged;
  for (int i = 0; i < s.n_ragged; ++i) {
    const auto u = static_cast<std::size_t>(i);
    a.off[u] = e.lengths + 2 * s.B + i * (s.B + 1);
    a.token_stride[u] = s.ragged_token_stride[u];
    a.side_k[u] = s.ragged_side_k[u];
    pack[uid_ragged0 + i] = a.off[u];
  }
  launch_prep(a, stream);
  pack[uid_seq_q] = a.seq_q;
  pack[uid_seq_kv] = a.seq_k;

  const std::int64_t total_q = s.packed ? f.q.extent[0] : 0;
  if (!s.backward) {
    if (s.packed && s.lse)
      pack[uid_stats] = stats_scratch(e, static_cast<std::size_t>(total_q * s.N));
    return;
  }
  const Tensor& lse = x.lse;
  StatsArgs c;
  c.src = static_cast<const float*>(lse.data);
  c.B = static_cast<int>(s.B), c.N = static_cast<int>(s.N), c.T = static_cast<int>(s.T);
  c.inf_to_pos = 1;
  if (s.packed) {
    c.packed = 1;
    c.total = total_q;
    c.src_head = lse.stride[0], c.src_token = lse.stride[1];
    c.dst_head = 1, c.dst_token = s.N;
    c.dst = stats_scratch(e, static_cast<std::size_t>(total_q * s.N));
  } else {
    c.src_batch = lse.stride[0], c.src_head = lse.stride[1], c.src_token = lse.stride[2];
    c.dst_batch = s.N * s.T, c.dst_head = s.T, c.dst_token = 1;
    c.dst = stats_scratch(e, static_cast<std::size_t>(s.B * s.N * s.T));
  }
  launch_stats(c, stream);
  pack[uid_stats] = c.dst;
}

FixArgs fix_args(const GraphSpec& s, const Entry& e, const ForwardProblem& f, const Tensor& t,
                 bool keys_side) {
  FixArgs a;
  a.rows = rows_of(t);
  a.seq_q = e.lengths;
  a.seq_k = e.lengths + s.B;
  if (s.packed) {
    const Tensor& cu = keys_side ? f.extras.cu_seqlens_k : f.extras.cu_seqlens_q;
    a.cu = static_cast<const int*>(cu.data);
    a.cu_stride = cu.stride[0];
  }
  a.B = static_cast<int>(s.B);
  a.T = static_cast<int>(keys_side ? s.S : s.T);
  a.left = s.left_bound < 0 ? -1 : s.left_bound - 1; // back to our inclusive bound
  a.right = s.right_bound;
  a.bottom_right = s.bottom_right;
  a.keys_side = keys_side;
  return a;
}

// After the graph: the packed forward's LSE copied out of the scratch, then the rows our
// semantics fix (out 0 / LSE -inf; zero gradients).
void varlen_after(const GraphSpec& s, const Entry& e, const RunValues& values,
                  cudaStream_t stream) {
  const ForwardProblem& f = *values.forward;
  if (!s.backward) {
    const Tensor& lse = f.extras.lse;
    FixArgs a = fix_args(s, e, f, f.out, false);
    if (s.lse) {
      a.rows.lse = static_cast<float*>(lse.data);
      if (s.packed) {
        StatsArgs c;
        c.src = e.stats;
        c.src_head = 1, c.src_token = s.N;
        c.dst = static_cast<float*>(lse.data);
        c.dst_head = lse.stride[0], c.dst_token = lse.stride[1];
        c.N = static_cast<int>(s.N), c.B = static_cast<int>(s.B), c.T = static_cast<int>(s.T);
        c.total = f.q.extent[0];
        c.packed = 1;
        launch_stats(c, stream);
        a.rows.lse_head = lse.stride[0], a.rows.lse_token = lse.stride[1];
      } else {
        a.rows.lse_batch = lse.stride[0], a.rows.lse_head = lse.stride[1];
        a.rows.lse_token = lse.stride[2];
      }
    }
    launch_fix_rows(a, stream);
    return;
  }
  const BackwardProblem& b = *values.backward;
  launch_fix_rows(fix_args(s, e, f, b.dq, false), stream);
  if (s.padded) { // packed key rows past k_len do not exist
    launch_fix_rows(fix_args(s, e, f, b.dk, true), stream);
    launch_fix_rows(fix_args(s, e, f, b.dv, true), stream);
  }
}

// ------------------------------------------------------------------------------------ execute

void execute(const GraphSpec& spec, std::unordered_map<std::int64_t, void*>& pack,
             const RunValues& values) {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex_);
  cudnnHandle_t h = nullptr;
  std::shared_ptr<Entry> e = c.get(spec, &h);
  if (!e->refusal.empty())
    throw Unsupported("cudnn: " + e->refusal + " [" + spec.describe() + "]");
  const auto stream = static_cast<cudaStream_t>(spec.stream);
  if (spec.dropout) {
    // Pageable source: the copy is staged before cudaMemcpyAsync returns, so the next call may
    // reuse `rng` at once; stream order puts it before this graph's launch.
    const std::int64_t host[2] = {static_cast<std::int64_t>(values.options->dropout_seed),
                                  static_cast<std::int64_t>(values.options->dropout_offset)};
    check_cuda(cudaMemcpyAsync(e->rng, host, sizeof host, cudaMemcpyHostToDevice, stream),
               "cudaMemcpyAsync(dropout seed/offset)");
    pack[uid_seed] = e->rng;
    pack[uid_offset] = static_cast<std::int64_t*>(e->rng) + 1;
  }
  if (spec.fp8())
    fp8_factors(spec, values, c.fp8_defaults(spec.device), pack);
  if (spec.varlen())
    varlen_before(spec, *e, values, pack, stream);
  check_cudnn(cudnnSetStream(h, stream), "cudnnSetStream");
  if (auto st = e->graph->execute(h, pack, e->workspace); st.is_bad())
    throw BackendFailure("cudnn backend: graph execute failed: " + st.get_message() + " [" +
                         spec.describe() + "]");
  if (spec.varlen())
    varlen_after(spec, *e, values, stream);
}

} // namespace

void execute_graph(const GraphSpec& spec, const ForwardProblem& p) {
  std::unordered_map<std::int64_t, void*> pack = {
      {uid_q, p.q.data}, {uid_k, p.k.data}, {uid_v, p.v.data}, {uid_o, p.out.data}};
  if (spec.lse)
    pack.emplace(uid_stats, p.extras.lse.data);
  if (spec.bias)
    pack.emplace(uid_bias, p.extras.bias.data);
  execute(spec, pack, {&p.options, &p.extras.fp8, &p, nullptr});
}

void execute_graph(const GraphSpec& spec, const BackwardProblem& p) {
  const ForwardProblem& f = p.forward;
  std::unordered_map<std::int64_t, void*> pack = {
      {uid_q, f.q.data},   {uid_k, f.k.data},     {uid_v, f.v.data},
      {uid_o, f.out.data}, {uid_do, p.dout.data}, {uid_stats, f.extras.lse.data},
      {uid_dq, p.dq.data}, {uid_dk, p.dk.data},   {uid_dv, p.dv.data}};
  if (spec.bias)
    pack.emplace(uid_bias, f.extras.bias.data);
  if (spec.dbias)
    pack.emplace(uid_dbias, p.dbias.data);
  execute(spec, pack, {&f.options, &f.extras.fp8, &f, &p});
}

std::string library_versions() {
  const std::size_t v = cudnnGetVersion();
  std::string s = "cuDNN " + std::to_string(v / 10000) + "." + std::to_string(v % 10000 / 100) +
                  "." + std::to_string(v % 100) + " (runtime; built against " +
                  std::to_string(CUDNN_MAJOR) + "." + std::to_string(CUDNN_MINOR) + "." +
                  std::to_string(CUDNN_PATCHLEVEL) + "), cudnn-frontend " +
                  std::to_string(CUDNN_FRONTEND_MAJOR_VERSION) + "." +
                  std::to_string(CUDNN_FRONTEND_MINOR_VERSION) + "." +
                  std::to_string(CUDNN_FRONTEND_PATCH_VERSION);
  return s;
}

std::size_t graph_cache_size() {
  return cache().size();
}
std::size_t graphs_built() {
  return cache().built();
}

} // namespace kattn::cudnn::detail
