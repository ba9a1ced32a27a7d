// The cudnn-frontend side of the backend: graphs built from a GraphSpec, kept in a bounded,
// thread-safe cache (with the support verdict, good or bad), and executed on a stream. Only the
// cudnn_graph_*.cpp files include cudnn_frontend.h (through cudnn_graph_internal.hpp).
#pragma once

#include <cstddef>
#include <string>

#include "cudnn/cudnn_spec.hpp"
#include "kokkosattn/registry.hpp"

namespace kattn::cudnn::detail {

// Finds or builds the graph for `spec` (validate, build, heuristics, check_support, plans,
// workspace). Returns cuDNN's verdict; failures are cached like successes, so a refused key
// is answered without rebuilding.
Support check_graph(const GraphSpec& spec);

// Executes the cached graph for `spec` (building it first when needed) on spec.stream.
// Throws Unsupported when cuDNN refuses the graph, BackendFailure when execution fails.
void execute_graph(const GraphSpec& spec, const ForwardProblem& p);
// The backward (spec.backward): reads q, k, v, out, dout and extras.lse, writes dq, dk, dv.
void execute_graph(const GraphSpec& spec, const BackwardProblem& p);

// Runtime cuDNN and compile-time cudnn-frontend versions, or why cuDNN is unavailable.
std::string library_versions();

std::size_t graph_cache_size();
// Graph builds since the process started (cache misses), successful or refused.
std::size_t graphs_built();
inline constexpr std::size_t graph_cache_capacity = 64;

} // namespace kattn::cudnn::detail
