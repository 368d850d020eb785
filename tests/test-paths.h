// Paths the test suites share: the model the engine-backed tests load, and
// fresh temporary file names. Header-only; the including target must define
// RADIXCHAT_SOURCE_DIR (rc_add_gtest and the GUI test registrations do).
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace rc::test {

// $RADIXCHAT_MODEL when set (to run a suite on another model), else the
// bundled model.
inline std::string test_model_path() {
  if (const char* env = std::getenv("RADIXCHAT_MODEL"); env && *env) return env;
  return RADIXCHAT_SOURCE_DIR "/assets/model/radixchat-demo.gguf";
}

// Whether test_model_path() names a file. The engine-backed tests need it;
// RC_REQUIRE_TEST_MODEL (require-test-model.h) is their guard.
inline bool have_test_model() { return std::filesystem::exists(test_model_path()); }

// "<tmp>/<prefix>-<pid>-<name>", unique to this process, with any file left
// there by an earlier run removed (SQLite's -wal and -shm companions too),
// so a test starts from nothing.
inline std::string temp_path(const std::string& prefix, const std::string& name) {
  const std::filesystem::path p = std::filesystem::temp_directory_path() /
                                  (prefix + "-" + std::to_string(getpid()) + "-" + name);
  for (const char* ext : {"", "-wal", "-shm"}) std::filesystem::remove(p.string() + ext);
  return p.string();
}

}  // namespace rc::test
