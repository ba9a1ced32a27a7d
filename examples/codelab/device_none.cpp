// device.hpp without CUDA: no device; the rest is never called (available() is false).
#include <stdexcept>

#include "device.hpp"

namespace codelab::device {
namespace {
[[noreturn]] void no_cuda() {
  throw std::logic_error("codelab: this build has no CUDA support");
}
} // namespace

bool built() {
  return false;
}
bool available(std::string* why_not) {
  if (why_not)
    *why_not = "this build has no CUDA support";
  return false;
}
std::vector<std::pair<std::string, std::string>> describe() {
  return {};
}
void* stream() {
  return nullptr;
}
void synchronize() {}
std::size_t used_bytes() {
  return 0;
}
double time_ms(const std::function<void()>&) {
  no_cuda();
}
Mirror::Mirror(const kattn::Tensor& host) : host_(host) {
  no_cuda();
}
Mirror::~Mirror() = default;
void Mirror::upload() {}
void Mirror::download() {}
kattn::Tensor Mirror::view() const {
  return host_;
}

} // namespace codelab::device
