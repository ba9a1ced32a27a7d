#include "cudnn/cudnn_graph_build.hpp"

// The FP8 forward and backward SDPA nodes (batched only).
namespace kattn::cudnn::detail::graph_internal {

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

} // namespace kattn::cudnn::detail::graph_internal
