#include "radixchat/status.h"

namespace rc {

const char* status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::ok: return "ok";
    case StatusCode::invalid_argument: return "invalid argument";
    case StatusCode::not_found: return "not found";
    case StatusCode::corrupt_data: return "corrupt data";
    case StatusCode::unsupported: return "unsupported";
    case StatusCode::no_pages: return "no free KV pages";
    case StatusCode::too_long: return "too long";
    case StatusCode::cancelled: return "cancelled";
    case StatusCode::permission_denied: return "permission denied";
    case StatusCode::internal: return "internal error";
  }
  return "unknown";
}

std::string Status::to_string() const {
  if (ok()) return "ok";
  return std::string(status_code_name(code_)) + ": " + message_;
}

}  // namespace rc
