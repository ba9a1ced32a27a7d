#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "cudnn/cudnn_graph_build.hpp"
#include "cudnn/cudnn_status.hpp"

// One graph from a spec: the SDPA node, then validate, build, heuristics, check_support, plans
// and the device buffers it runs with.
namespace kattn::cudnn::detail::graph_internal {
namespace {

std::string refusal(const char* step, fe::error_t& e) {
  return std::string("cuDNN refused the graph (") + step + "): " + e.get_message();
}

} // namespace

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

} // namespace kattn::cudnn::detail::graph_internal
