#include "welcome.h"

#include <string>

namespace rc::gui {

namespace {

constexpr const char* kWelcomedKey = "app.welcomed";

constexpr const char* kQuestion = "What am I looking at?";

// Short on purpose: the exchange and a first question of a few lines are
// prefilled in one chunk (EngineConfig::prefill_chunk tokens), so the tree's
// first node holds the welcome whole instead of ending mid-sentence where a
// chunk ended.
constexpr const char* kAnswer =
    "Welcome to **RadixChat**: a small language model that runs on this computer.\n\n"
    "The panel on the right (F9) draws its **KV cache**, the keys and values of past tokens, "
    "as a radix tree:\n\n"
    "- A new message **matches** the longest prefix in the tree; only the rest is computed.\n"
    "- What was computed is **inserted** as a branch. Chats that start alike share a node.\n"
    "- When memory runs short, the least recently used leaves are **evicted**.\n\n"
    "Send two messages and watch the second reuse the first. *Demos* in the panel show more.";

}  // namespace

Status add_welcome_once(rc::store::Store& store) {
  Result<std::optional<std::string>> welcomed = store.get_setting(kWelcomedKey);
  if (!welcomed.ok()) return welcomed.status();
  if (welcomed.value()) return Status();
  Result<std::vector<rc::store::Conversation>> existing = store.list_conversations(1);
  if (!existing.ok()) return existing.status();
  if (existing.value().empty()) {
    rc::store::NewConversation c;
    c.title = "Welcome to RadixChat";
    Result<rc::store::Id> id = store.create_conversation(c);
    if (!id.ok()) return id.status();
    rc::store::NewMessage q{id.value(), std::nullopt, rc::store::Role::user, kQuestion, "", {}};
    Result<rc::store::Id> qid = store.append_message(q);
    if (!qid.ok()) return qid.status();
    rc::store::NewMessage a{id.value(), qid.value(), rc::store::Role::assistant, kAnswer, "", {}};
    Result<rc::store::Id> aid = store.append_message(a);
    if (!aid.ok()) return aid.status();
    if (Status st = store.set_setting(kOpenAtStartKey, std::to_string(id.value())); !st.ok()) {
      return st;
    }
  }
  return store.set_setting(kWelcomedKey, "1");
}

}  // namespace rc::gui
