// The fuzzer's problems (issue 20): a forward or backward problem drawn from libFuzzer's bytes,
// mostly near valid (the shapes a caller means, in any layout) and sometimes anything (ranks,
// extents, strides, dtypes, spaces and enums out of range). Every tensor that a host buffer can
// hold lies on a buffer of exactly its byte span, so AddressSanitizer reports any access outside
// it; the others point at distinct fake addresses, and such a problem is only validated.
#pragma once

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kokkosattn/problem.hpp"

namespace kattn::fuzz {

// One tensor's storage: exactly `size` bytes (null for none).
struct Buffer {
  std::unique_ptr<unsigned char[]> bytes;
  std::size_t size = 0;
  bool output = false; // written by a successful run
};

struct Inputs {
  bool backward = false;
  ForwardProblem forward;  // the forward, or the backward's forward part
  BackwardProblem problem; // the backward (forward copied in by finish())
  std::vector<Buffer> buffers;
  bool runnable = true; // every tensor on a real host buffer: backends may run it
};

// Draws one problem; the tensors point into `in.buffers`.
void draw(FuzzedDataProvider& fdp, Inputs& in);

// Every tensor's name, shape, strides, dtype, space and address, and the options: what a
// finding prints.
std::string describe(const Inputs& in);

// The bytes of every buffer, to compare after a call.
std::vector<std::vector<unsigned char>> snapshot(const Inputs& in);

} // namespace kattn::fuzz
