// FinishReason's names (radixchat/request.h).
#include "radixchat/request.h"

namespace rc {

const char* finish_reason_name(FinishReason r) {
  switch (r) {
    case FinishReason::none:
      return "none";
    case FinishReason::stop:
      return "stop";
    case FinishReason::length:
      return "length";
    case FinishReason::cancelled:
      return "cancelled";
    case FinishReason::error:
      return "error";
  }
  return "unknown";
}

}  // namespace rc
