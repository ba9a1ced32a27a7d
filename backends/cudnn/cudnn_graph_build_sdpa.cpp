#include "cudnn/cudnn_graph_build.hpp"

// The f16/bf16 forward and backward SDPA nodes (batched, padded or packed).
namespace kattn::cudnn::detail::graph_internal {

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

} // namespace kattn::cudnn::detail::graph_internal
