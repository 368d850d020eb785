#include "welcome.h"

#include <string>

namespace rc::gui {

namespace {

constexpr const char* kWelcomedKey = "app.welcomed";

constexpr const char* kQuestion = "What am I looking at?";

constexpr const char* kAnswer =
    "Welcome to **RadixChat**: a chat with a small language model that runs on this computer.\n\n"
    "The panel on the right (F9 shows or hides it) draws the model's **KV cache** as a radix "
    "tree. Every reply needs the keys and values of the whole conversation so far; instead of "
    "computing them again for each message, the engine keeps them in a tree of token spans:\n\n"
    "- A new message **matches** the longest prefix already in the tree (highlighted) and only "
    "the rest is computed. The status bar shows how many prompt tokens were *cached*.\n"
    "- What was computed is **inserted** as a new branch. Conversations that share a system "
    "prompt, or a branch made by editing an earlier message, share one node.\n"
    "- When memory runs short, the least recently used leaves are **evicted**; nodes in use by a "
    "reply are protected.\n\n"
    "Try it: send a message, then another in the same chat, and watch the second one reuse the "
    "first. The panel's *Demos* play scripted scenarios, and a smaller pool shows eviction.";

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
