#include "cudnn/cudnn_spec.hpp"

#include <cstring>
#include <sstream>

namespace kattn::cudnn::detail {
namespace {

// Our [B, seq, heads, dim] strides in cuDNN's [B, heads, seq, dim] order.
Strides4 bhsd(const Tensor& t) {
  return {t.stride[0], t.stride[2], t.stride[1], t.stride[3]};
}

void put(std::ostringstream& os, const Strides4& s) {
  os << '[' << s[0] << ',' << s[1] << ',' << s[2] << ',' << s[3] << ']';
}

} // namespace

GraphSpec make_spec(const ForwardProblem& p, const Dims& d, int device, void* stream) {
  GraphSpec g;
  g.device = device;
  g.stream = stream;
  g.dtype = p.q.dtype;
  g.B = d.B, g.T = d.T, g.S = d.S, g.N = d.N, g.K = d.K, g.H = d.H, g.Hv = d.Hv;
  g.q = bhsd(p.q), g.k = bhsd(p.k), g.v = bhsd(p.v), g.o = bhsd(p.out);
  const Tensor& lse = p.extras.lse;
  if (lse.defined()) {
    g.lse = true;
    g.lse_stride = {lse.stride[0], lse.stride[1], lse.stride[2], 1};
  }
  const Tensor& bias = p.extras.bias;
  if (bias.defined()) {
    g.bias = true;
    g.bias_dtype = bias.dtype;
    // [B|1, N|1, T, S] is already cuDNN's order; an extent-1 dim broadcasts.
    for (std::size_t i = 0; i < 4; ++i) {
      g.bias_dim[i] = bias.extent[i];
      g.bias_stride[i] = bias.stride[i];
    }
  }
  g.left_bound = cudnn_left_bound(d.window_left);
  g.right_bound = d.window_right;
  g.bottom_right = p.options.alignment == Alignment::bottom_right;
  g.scale = static_cast<float>(d.scale);
  return g;
}

GraphSpec make_spec(const BackwardProblem& p, const Dims& d, int device, void* stream) {
  GraphSpec g = make_spec(p.forward, d, device, stream);
  g.backward = true;
  g.deterministic = p.forward.options.deterministic;
  g.dout = bhsd(p.dout), g.dq = bhsd(p.dq), g.dk = bhsd(p.dk), g.dv = bhsd(p.dv);
  return g;
}

std::string GraphSpec::key() const {
  std::ostringstream os;
  std::uint32_t scale_bits = 0;
  std::memcpy(&scale_bits, &scale, sizeof scale_bits);
  os << device << '|' << stream << '|' << static_cast<int>(dtype) << '|' << B << ',' << T << ','
     << S << ',' << N << ',' << K << ',' << H << ',' << Hv << '|';
  put(os, q), put(os, k), put(os, v), put(os, o);
  os << '|' << lse;
  if (lse)
    put(os, lse_stride);
  os << '|' << bias;
  if (bias) {
    os << static_cast<int>(bias_dtype);
    put(os, bias_dim);
    put(os, bias_stride);
  }
  os << '|' << left_bound << ',' << right_bound << ',' << bottom_right << '|' << scale_bits;
  if (backward) {
    os << "|bwd" << deterministic;
    put(os, dout), put(os, dq), put(os, dk), put(os, dv);
  }
  return os.str();
}

std::string GraphSpec::describe() const {
  std::ostringstream os;
  os << (backward ? "backward " : "forward ") << to_string(dtype) << " B=" << B << " T=" << T
     << " S=" << S << " N=" << N << " K=" << K << " H=" << H << " Hv=" << Hv;
  if (left_bound >= 0 || right_bound >= 0)
    os << " band(left=" << left_bound << " exclusive, right=" << right_bound << ", "
       << (bottom_right ? "bottom_right" : "top_left") << ")";
  if (bias)
    os << " bias";
  if (lse)
    os << " stats";
  return os.str();
}

} // namespace kattn::cudnn::detail
