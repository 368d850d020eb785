// What the tests of documents in the engine's cache share
// (docs/architecture.md section 21): generated document texts, a
// conversation with documents laid out as the callers lay them, and the
// text of every path the tree holds.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "radixchat/documents.h"
#include "radixchat/engine.h"

namespace rc::test {

// Sentences of common words, different for each seed, about 250 tokens.
inline std::string document_text(const std::string& topic, uint32_t seed) {
  static const char* const kWords[] = {"the",    "river",  "stone", "garden",  "winter", "market",
                                       "letter", "window", "green", "quiet",   "bright", "old",
                                       "small",  "walks",  "opens", "finds",   "keeps",  "under",
                                       "over",   "near",   "every", "morning", "house",  "road"};
  std::mt19937 rng(seed);
  std::string text = "Notes on " + topic + ".\n";
  for (int s = 0; s < 20; ++s) {
    text += topic;
    for (int w = 0; w < 8; ++w) text += std::string(" ") + kWords[rng() % std::size(kWords)];
    text += ".\n";
  }
  return text;
}

// `system`, then `docs` whole in library order, then `question` (none when
// empty: the prefix a document kept warm is pinned as).
inline std::vector<ChatMessage> conversation(const Engine& e, const std::string& system,
                                             const std::vector<DocumentText>& docs,
                                             const std::string& question) {
  DocumentSet set;
  set.documents = docs;
  const DocumentLayout layout = layout_documents(set, 4096, [&](std::string_view t) {
    return int(e.tokenize(std::string(t), false).value().size());
  });
  EXPECT_FALSE(layout.retrieved);
  std::vector<ChatMessage> messages{{"system", system}};
  if (!question.empty()) messages.push_back({"user", question});
  return messages_with_documents(std::move(messages), layout);
}

// The text of every root-to-leaf path the tree holds.
inline std::vector<std::string> tree_texts(const Engine& e) {
  const CacheSnapshot snap = e.cache_snapshot();
  std::map<NodeId, const CacheNodeInfo*> by_id;
  for (const CacheNodeInfo& n : snap.nodes) by_id[n.id] = &n;
  std::vector<std::string> out;
  for (const CacheNodeInfo& leaf : snap.nodes) {
    const bool is_leaf = std::none_of(snap.nodes.begin(), snap.nodes.end(),
                                      [&](const CacheNodeInfo& n) { return n.parent == leaf.id; });
    if (!is_leaf || leaf.id == kRootNode) continue;
    std::vector<int32_t> path;
    for (NodeId id = leaf.id; id != kRootNode && id != kNoNode;) {
      const CacheNodeInfo& n = *by_id.at(id);
      path.insert(path.begin(), n.tokens.begin(), n.tokens.end());
      id = n.parent;
    }
    out.push_back(e.detokenize(path));
  }
  return out;
}

inline bool any_holds(const std::vector<std::string>& texts, const std::string& needle) {
  return std::any_of(texts.begin(), texts.end(),
                     [&](const std::string& t) { return t.find(needle) != std::string::npos; });
}

}  // namespace rc::test
