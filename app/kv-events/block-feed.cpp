#include "block-feed.h"

namespace rc::kv_events {

std::string unknown_status(const TreeStats& tree, const SubscriberStats& feed) {
  auto n = [](uint64_t v) { return std::to_string(v); };
  std::string out;
  auto add = [&](const std::string& part) { out += (out.empty() ? "" : "; ") + part; };
  if (feed.dropped_messages > 0) add(n(feed.dropped_messages) + " messages lost and not replayed");
  if (tree.unknown_parent_blocks > 0) {
    add(n(tree.unknown_parent_blocks) + " blocks under " + n(tree.unknown_parent_roots) +
        " parents never seen (stored before you attached): their prefixes are unknown");
  }
  if (feed.history_unheld_messages > 0) {
    add("the publisher no longer held its first " + n(feed.history_unheld_messages) + " messages");
  }
  if (feed.resync_pending) {
    add("resync asked for, no snapshot came (vLLM and SGLang publishers send none): the tree "
        "may differ from the server's");
  }
  std::string done;
  if (feed.resyncs > 0) done = "resynced from a snapshot " + n(feed.resyncs) + " times";
  if (feed.history_messages > 0) {
    done += (done.empty() ? "" : "; ") + std::string("attached late: ") + n(feed.history_messages) +
            " buffered messages replayed";
  }
  if (out.empty()) return "view: complete" + (done.empty() ? "" : " (" + done + ")");
  return "warning: " + out + (done.empty() ? "" : " (" + done + ")");
}

}  // namespace rc::kv_events
