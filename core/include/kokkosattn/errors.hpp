// The one exception hierarchy of the library. Every message names the argument, what was
// expected and what came.
#pragma once

#include <stdexcept>
#include <string>

namespace kattn {

class Error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// The caller passed something the semantics do not allow (shape, dtype, layout, option value).
class InvalidArgument : public Error {
public:
  using Error::Error;
};

// The problem is valid but the chosen backend (or every backend) cannot serve it.
class Unsupported : public Error {
public:
  using Error::Error;
};

// A backend library call failed at run time (CUDA/HIP/cuDNN error code, allocation failure).
class BackendFailure : public Error {
public:
  using Error::Error;
};

} // namespace kattn
