#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cudnn/cudnn_graph.hpp"
#include "cudnn/cudnn_graph_internal.hpp"
#include "cudnn/cudnn_status.hpp"

// Execution: the variant pack from a problem (tensors, dropout seed/offset, FP8 factors, varlen
// buffers) and the graph launch on the spec's stream.
namespace kattn::cudnn::detail {
namespace graph_internal {
namespace {

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
} // namespace graph_internal

void execute_graph(const GraphSpec& spec, const ForwardProblem& p) {
  using namespace graph_internal;
  std::unordered_map<std::int64_t, void*> pack = {
      {uid_q, p.q.data}, {uid_k, p.k.data}, {uid_v, p.v.data}, {uid_o, p.out.data}};
  if (spec.lse)
    pack.emplace(uid_stats, p.extras.lse.data);
  if (spec.bias)
    pack.emplace(uid_bias, p.extras.bias.data);
  execute(spec, pack, {&p.options, &p.extras.fp8, &p, nullptr});
}

void execute_graph(const GraphSpec& spec, const BackwardProblem& p) {
  using namespace graph_internal;
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

} // namespace kattn::cudnn::detail
