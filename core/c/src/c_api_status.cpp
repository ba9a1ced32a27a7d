#include "c_api_status.hpp"

#include <exception>
#include <new>

#include "kokkosattn/errors.hpp"

namespace kattn::c_api {

std::string& last_error() {
  thread_local std::string message;
  return message;
}

kattn_status_t fail(const char* where, kattn_status_t status, const std::string& message) {
  try {
    last_error() = std::string(where) + ": " + message;
  } catch (...) { // no memory for the message: the status still says what happened
    last_error().clear();
  }
  return status;
}

kattn_status_t current_exception_status(const char* where) {
  try {
    throw;
  } catch (const NotInitialized& e) {
    return fail(where, KATTN_ERROR_NOT_INITIALIZED, e.what());
  } catch (const InvalidArgument& e) {
    return fail(where, KATTN_ERROR_INVALID_ARGUMENT, e.what());
  } catch (const Unsupported& e) {
    return fail(where, KATTN_ERROR_UNSUPPORTED, e.what());
  } catch (const BackendFailure& e) {
    return fail(where, KATTN_ERROR_BACKEND_FAILURE, e.what());
  } catch (const std::bad_alloc&) {
    return fail(where, KATTN_ERROR_OUT_OF_MEMORY, "out of host memory");
  } catch (const std::exception& e) {
    return fail(where, KATTN_ERROR_INTERNAL, e.what());
  } catch (...) {
    return fail(where, KATTN_ERROR_INTERNAL, "unknown exception");
  }
}

void require(const void* p, const char* name) {
  if (p == nullptr)
    throw InvalidArgument(std::string(name) + ": expected a non-null pointer, got NULL");
}

} // namespace kattn::c_api
