// How the C API reports: every entry point runs its body through guarded(), which maps the
// library's exceptions to a kattn_status_t and keeps the message for kattn_last_error().
#pragma once

#include <string>

#include "kokkosattn.h"
#include "kokkosattn/errors.hpp"

namespace kattn::c_api {

// Kokkos is not initialised: KATTN_ERROR_NOT_INITIALIZED.
class NotInitialized : public Error {
public:
  NotInitialized()
      : Error("Kokkos is not initialised: call kattn_initialize() (or Kokkos::initialize) "
              "first") {}
};

// This thread's message of the last failed call.
std::string& last_error();

// `f()` (returning void) with every exception caught: KATTN_OK, or the status of the exception
// and its message prefixed with `where` (the entry point's name).
template <class F>
kattn_status_t guarded(const char* where, F&& f);

kattn_status_t fail(const char* where, kattn_status_t status, const std::string& message);
kattn_status_t current_exception_status(const char* where);

template <class F>
kattn_status_t guarded(const char* where, F&& f) {
  try {
    f();
    last_error().clear();
    return KATTN_OK;
  } catch (...) {
    return current_exception_status(where);
  }
}

// A null handle or output pointer: an InvalidArgument naming it.
void require(const void* p, const char* name);

} // namespace kattn::c_api
