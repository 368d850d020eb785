// Helpers for the chat suites: waiting on the event loop, and the model file.
#pragma once

#include <QTest>
#include <QtGlobal>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace rc::test {

// Runs the event loop until pred() holds or `ms` pass.
template <typename Pred>
bool waitUntil(Pred pred, int ms = 60000) {
  return QTest::qWaitFor(pred, ms);
}

// The model the engine loads by default: $RADIXCHAT_MODEL, else the bundled
// one (what rc::model::default_model_path() picks).
inline std::string testModelPath() {
  if (const char* env = std::getenv("RADIXCHAT_MODEL"); env && *env) return env;
  return std::string(RADIXCHAT_SOURCE_DIR) + "/assets/model/radixchat-demo.gguf";
}

inline bool haveTestModel() { return std::filesystem::exists(testModelPath()); }

}  // namespace rc::test
