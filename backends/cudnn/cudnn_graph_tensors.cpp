#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cudnn/cudnn_graph_build.hpp"

// The tensor attributes the graphs are made of: dtypes, strides, inputs, outputs, ragged
// offsets and FP8 factors.
namespace kattn::cudnn::detail::graph_internal {

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

std::shared_ptr<TA> fp8_factor(Graph& g, const char* name, std::int64_t uid) {
  return g.tensor(TA().set_name(name)
                      .set_uid(uid)
                      .set_dim({1, 1, 1, 1})
                      .set_stride({1, 1, 1, 1})
                      .set_data_type(fe::DataType_t::FLOAT));
}

} // namespace kattn::cudnn::detail::graph_internal
