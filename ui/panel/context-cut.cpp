#include "panel/context-cut.h"

#include <algorithm>

#include "panel/label-text.h"

namespace rc::ui::panel {

void ContextCut::mark(int dropped_messages, std::vector<Token> sent, int64_t reused_tokens,
                      double now) {
  dropped = std::max(dropped_messages, 0);
  prompt = std::move(sent);
  reused = std::clamp<int64_t>(reused_tokens, 0, int64_t(prompt.size()));
  at = now;
  ++cuts;
  node = kNoNode;
  node_shared = 0;
  structure_ = UINT64_MAX;  // found again by the next resolve()
}

void ContextCut::resolve(const TreeModel& m, bool force) {
  if (!force && model_ == &m && structure_ == m.structure_version()) return;
  model_ = &m;
  structure_ = m.structure_version();
  node = kNoNode;
  node_shared = 0;
  if (!active() || prompt.empty()) return;
  if (reused == 0) {  // nothing was shared: the new prompt starts at the root
    node = kRootNode;
    return;
  }
  // The reused prefix ends at a node boundary once the new prompt is in the
  // tree (the match split there); before that, inside `partial`.
  const std::vector<Token> prefix(prompt.begin(), prompt.begin() + reused);
  NodeId partial = kNoNode;
  const NodeId at_node = m.locate(prefix, &partial);
  const TreeNode* n = m.find(at_node);
  const int64_t end = n ? n->depth_tokens + int64_t(n->tokens.size()) : 0;
  if (end == reused && at_node != kRootNode) {
    node = at_node;
    node_shared = int64_t(n->tokens.size());
  } else if (const TreeNode* p = m.find(partial); p && p->depth_tokens < reused) {
    node = partial;
    node_shared = reused - p->depth_tokens;
  }
  // Else the shared prefix was evicted (in part): no branch point to mark.
}

void ContextCut::clear() { *this = ContextCut{}; }

std::string ContextCut::badge() const {
  return "context cut: " + plural(dropped, "message") + " dropped";
}

std::string ContextCut::detail() const {
  std::string s = "The earliest " + plural(dropped, "message") +
                  " no longer fit the context, so the prompt sent after the cut (" +
                  plural(int64_t(prompt.size()), "token") + ") ";
  if (reused == 0) return s + "shares nothing cached: it starts a new path at the root.";
  s += "shares only its first " + plural(reused, "token") + " with the cached path";
  if (node != kNoNode && node_shared > 0 && model_) {
    if (const TreeNode* n = model_->find(node); n && node_shared < int64_t(n->tokens.size()))
      return s + ": it leaves this node after its first " + plural(node_shared, "token") + ".";
  }
  return s + " and branches off after this node; what followed was computed again.";
}

std::string ContextCut::banner(double now) const {
  if (!active() || now - at > kBannerSeconds || now < at) return "";
  std::string s = "Context cut: the earliest " + plural(dropped, "message") +
                  " no longer fit, so the cached prefix changed";
  if (prompt.empty()) return s + ".";
  if (node == kNoNode) return s + " (the shared prefix is no longer cached).";
  return s + "; the new prompt reused " + thousands(reused) + " of " +
         thousands(int64_t(prompt.size())) + " tokens and branches off at " +
         (node == kRootNode ? std::string("the root")
                            : std::string(1, '#').append(std::to_string(node))) +
         ".";
}

}  // namespace rc::ui::panel
