#include "default-model.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>

#ifndef RADIXCHAT_SOURCE_DIR
#error "RADIXCHAT_SOURCE_DIR must be defined for default-model.cpp (engine/CMakeLists.txt)"
#endif

namespace rc::model {

namespace {

constexpr const char* kBundledName = "radixchat-demo.gguf";

// <prefix>/share/radixchat/ next to <prefix>/bin/<this program>, so an
// installed (or dpkg -x unpacked) package finds its model wherever it lives.
std::string installed_model_path() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  const std::filesystem::path p =
      exe.parent_path().parent_path() / "share" / "radixchat" / kBundledName;
  return std::filesystem::exists(p, ec) ? p.string() : std::string();
}

}  // namespace

std::string default_model_path() {
  if (const char* env = std::getenv("RADIXCHAT_MODEL"); env && *env) return env;
  if (std::string installed = installed_model_path(); !installed.empty()) return installed;
  return std::string(RADIXCHAT_SOURCE_DIR) + "/assets/model/" + kBundledName;
}

std::string sidecar_tokenizer_path(const std::string& model_path) {
  const size_t slash = model_path.find_last_of('/');
  return (slash == std::string::npos ? std::string() : model_path.substr(0, slash + 1)) +
         "tokenizer.model";
}

}  // namespace rc::model
