#include "welcome.h"

#include <QObject>

namespace rc::gui {

namespace {
constexpr const char* kWelcomedKey = "app.welcomed";
}  // namespace

QString welcomeText() {
  return QObject::tr(
      "## Welcome to RadixChat\n\n"
      "A small language model that runs on this computer. Type below to start a chat.\n\n"
      "The panel on the right (F9) draws its **KV cache**, the keys and values of past tokens, "
      "as a radix tree:\n\n"
      "- A new message **matches** the longest prefix in the tree; only the rest is computed.\n"
      "- What was computed is **inserted** as a branch. Chats that start alike share a node.\n"
      "- When memory runs short, leaves are **evicted**: those the fewest requests shared "
      "go first, then the least recently used.\n\n"
      "Send two messages and watch the second reuse the first. *Demos* in the panel show more.\n\n"
      "The bundled model is a tiny demo, trained only to show the cache at work: for real "
      "answers, get a model with **Model > Get a model…** (Ctrl+Shift+O).");
}

Result<bool> take_first_run(rc::store::Store& store) {
  Result<std::optional<std::string>> welcomed = store.get_setting(kWelcomedKey);
  if (!welcomed.ok()) return welcomed.status();
  if (welcomed.value()) return false;
  Result<std::vector<rc::store::Conversation>> existing = store.list_conversations(1);
  if (!existing.ok()) return existing.status();
  if (Status st = store.set_setting(kWelcomedKey, "1"); !st.ok()) return st;
  return existing.value().empty();
}

}  // namespace rc::gui
