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
  uid_dv
};

fe::DataType_t fe_type(DType t) {
  switch (t) {
  case DType::bf16:
    return fe::DataType_t::BFLOAT16;
  case DType::f16:
    return fe::DataType_t::HALF;
  case DType::f32:
    return fe::DataType_t::FLOAT;
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
  int device = 0;

  Entry() = default;
  Entry(const Entry&) = delete;
  Entry& operator=(const Entry&) = delete;
  ~Entry() {
    if (workspace == nullptr)
      return;
    // cudaFree waits for work still using the workspace; restore the caller's device.
    int current = 0;
    if (cudaGetDevice(&current) == cudaSuccess && cudaSetDevice(device) == cudaSuccess) {
      (void)cudaFree(workspace);
      (void)cudaSetDevice(current);
    }
  }
};

std::string refusal(const char* step, fe::error_t& e) {
  return std::string("cuDNN refused the graph (") + step + "): " + e.get_message();
}

using TA = fe::graph::Tensor_attributes;
using Graph = fe::graph::Graph;

std::shared_ptr<TA> input(Graph& g, const char* name, std::int64_t uid,
                          std::vector<std::int64_t> dim, const Strides4& stride) {
  return g.tensor(TA().set_name(name).set_uid(uid).set_dim(std::move(dim)).set_stride(vec(stride)));
}

void output(const std::shared_ptr<TA>& t, std::int64_t uid, std::vector<std::int64_t> dim,
            const Strides4& stride) {
  t->set_output(true).set_uid(uid).set_dim(std::move(dim)).set_stride(vec(stride));
}

// Mask, scale and bias settings shared by the forward and backward attributes.
template <class Attr>
void set_common(Graph& g, const GraphSpec& s, Attr& attr) {
  attr.set_attn_scale(s.scale);
  if (s.right_bound >= 0)
    attr.set_diagonal_band_right_bound(static_cast<int>(s.right_bound));
  if (s.left_bound >= 0)
    attr.set_diagonal_band_left_bound(static_cast<int>(s.left_bound));
  attr.set_diagonal_alignment(s.bottom_right ? fe::DiagonalAlignment_t::BOTTOM_RIGHT
                                             : fe::DiagonalAlignment_t::TOP_LEFT);
  if (s.bias) {
    auto bias = g.tensor(TA().set_name("bias")
                             .set_uid(uid_bias)
                             .set_data_type(fe_type(s.bias_dtype))
                             .set_dim({s.bias_dim[0], s.bias_dim[1], s.bias_dim[2], s.bias_dim[3]})
                             .set_stride(vec(s.bias_stride)));
    attr.set_bias(bias);
  }
}

void add_forward(Graph& g, const GraphSpec& s) {
  auto q = input(g, "Q", uid_q, {s.B, s.N, s.T, s.H}, s.q);
  auto k = input(g, "K", uid_k, {s.B, s.K, s.S, s.H}, s.k);
  auto v = input(g, "V", uid_v, {s.B, s.K, s.S, s.Hv}, s.v);
  auto attr = fe::graph::SDPA_attributes().set_name("kokkosattn_sdpa").set_generate_stats(s.lse);
  set_common(g, s, attr);
  auto [o, stats] = g.sdpa(q, k, v, attr);
  output(o, uid_o, {s.B, s.N, s.T, s.Hv}, s.o);
  if (s.lse) {
    output(stats, uid_stats, {s.B, s.N, s.T, 1}, s.lse_stride);
    stats->set_data_type(fe::DataType_t::FLOAT);
  }
}

void add_backward(Graph& g, const GraphSpec& s) {
  auto q = input(g, "Q", uid_q, {s.B, s.N, s.T, s.H}, s.q);
  auto k = input(g, "K", uid_k, {s.B, s.K, s.S, s.H}, s.k);
  auto v = input(g, "V", uid_v, {s.B, s.K, s.S, s.Hv}, s.v);
  auto o = input(g, "O", uid_o, {s.B, s.N, s.T, s.Hv}, s.o);
  auto dout = input(g, "dO", uid_do, {s.B, s.N, s.T, s.Hv}, s.dout);
  auto stats = input(g, "Stats", uid_stats, {s.B, s.N, s.T, 1}, s.lse_stride);
  stats->set_data_type(fe::DataType_t::FLOAT);
  auto attr = fe::graph::SDPA_backward_attributes()
                  .set_name("kokkosattn_sdpa_backward")
                  .set_deterministic_algorithm(s.deterministic);
  set_common(g, s, attr);
  auto [dq, dk, dv] = g.sdpa_backward(q, k, v, o, dout, stats, attr);
  output(dq, uid_dq, {s.B, s.N, s.T, s.H}, s.dq);
  output(dk, uid_dk, {s.B, s.K, s.S, s.H}, s.dk);
  output(dv, uid_dv, {s.B, s.K, s.S, s.Hv}, s.dv);
}

std::shared_ptr<Entry> build(const GraphSpec& s, cudnnHandle_t handle) {
  auto e = std::make_shared<Entry>();
  e->device = s.device;
  auto g = std::make_shared<Graph>();
  g->set_io_data_type(fe_type(s.dtype))
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  if (s.backward)
    add_backward(*g, s);
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

  std::mutex mutex_;

private:
  std::size_t built_ = 0;
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

void execute(const GraphSpec& spec, std::unordered_map<std::int64_t, void*>& pack) {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex_);
  cudnnHandle_t h = nullptr;
  std::shared_ptr<Entry> e = c.get(spec, &h);
  if (!e->refusal.empty())
    throw Unsupported("cudnn: " + e->refusal + " [" + spec.describe() + "]");
  check_cudnn(cudnnSetStream(h, static_cast<cudaStream_t>(spec.stream)), "cudnnSetStream");
  if (auto st = e->graph->execute(h, pack, e->workspace); st.is_bad())
    throw BackendFailure("cudnn backend: graph execute failed: " + st.get_message() + " [" +
                         spec.describe() + "]");
}

} // namespace

void execute_graph(const GraphSpec& spec, const ForwardProblem& p) {
  std::unordered_map<std::int64_t, void*> pack = {
      {uid_q, p.q.data}, {uid_k, p.k.data}, {uid_v, p.v.data}, {uid_o, p.out.data}};
  if (spec.lse)
    pack.emplace(uid_stats, p.extras.lse.data);
  if (spec.bias)
    pack.emplace(uid_bias, p.extras.bias.data);
  execute(spec, pack);
}

void execute_graph(const GraphSpec& spec, const BackwardProblem& p) {
  const ForwardProblem& f = p.forward;
  std::unordered_map<std::int64_t, void*> pack = {
      {uid_q, f.q.data},   {uid_k, f.k.data},     {uid_v, f.v.data},
      {uid_o, f.out.data}, {uid_do, p.dout.data}, {uid_stats, f.extras.lse.data},
      {uid_dq, p.dq.data}, {uid_dk, p.dk.data},   {uid_dv, p.dv.data}};
  if (spec.bias)
    pack.emplace(uid_bias, f.extras.bias.data);
  execute(spec, pack);
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
