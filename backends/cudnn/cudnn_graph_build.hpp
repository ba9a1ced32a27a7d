// Private to the graph-building files: the tensor helpers and attribute settings that the
// forward, backward and FP8 graphs share, and the functions that add each SDPA node.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "cudnn/cudnn_graph_internal.hpp"

namespace kattn::cudnn::detail::graph_internal {

using TA = fe::graph::Tensor_attributes;
using Graph = fe::graph::Graph;

fe::DataType_t fe_type(DType t);
std::vector<std::int64_t> vec(const Strides4& s);

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

Ragged make_ragged(Graph& g, const GraphSpec& s);

std::shared_ptr<TA> input(Graph& g, const char* name, std::int64_t uid,
                          std::vector<std::int64_t> dim, const Strides4& stride,
                          const Ragged& ragged, RaggedTensor which);

void output(const std::shared_ptr<TA>& t, std::int64_t uid, std::vector<std::int64_t> dim,
            const Strides4& stride, const Ragged& ragged, RaggedTensor which);

std::shared_ptr<TA> fp8_factor(Graph& g, const char* name, std::int64_t uid);

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

// The SDPA nodes with their inputs and outputs (cudnn_graph_build_sdpa.cpp,
// cudnn_graph_build_fp8.cpp).
void add_forward(Graph& g, const GraphSpec& s);
void add_backward(Graph& g, const GraphSpec& s);
void add_forward_fp8(Graph& g, const GraphSpec& s);
void add_backward_fp8(Graph& g, const GraphSpec& s);

} // namespace kattn::cudnn::detail::graph_internal
