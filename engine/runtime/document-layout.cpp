// layout_documents(): the one prompt layout for documents
// (radixchat/documents.h, docs/architecture.md section 21).
#include <algorithm>
#include <map>

#include "radixchat/documents.h"
#include "radixchat/engine.h"

namespace rc {
namespace {

// Headers never depend on what was retrieved or on the request: a
// document's header is the same bytes in every prompt that holds it.
std::string header(const DocumentText& d, bool excerpts) {
  return "### Document: " + d.name + (excerpts ? " (excerpts)\n" : "\n");
}

std::vector<const DocumentText*> canonical(const DocumentSet& set) {
  std::vector<const DocumentText*> docs;
  for (const DocumentText& d : set.documents) docs.push_back(&d);
  // Library order; the name breaks ties so the order never depends on the
  // order the documents were given in.
  std::sort(docs.begin(), docs.end(), [](const DocumentText* a, const DocumentText* b) {
    return a->order != b->order ? a->order < b->order : a->name < b->name;
  });
  docs.erase(
      std::unique(docs.begin(), docs.end(),
                  [](const DocumentText* a, const DocumentText* b) { return a->name == b->name; }),
      docs.end());
  return docs;
}

std::string whole(const std::vector<const DocumentText*>& docs) {
  std::string out;
  for (const DocumentText* d : docs) {
    if (!out.empty()) out += "\n";
    out += header(*d, false) + d->text;
    if (!d->text.ends_with('\n')) out += '\n';
  }
  return out;
}

}  // namespace

DocumentLayout layout_documents(const DocumentSet& set, int budget_tokens,
                                const std::function<int(std::string_view)>& count) {
  DocumentLayout out;
  const std::vector<const DocumentText*> docs = canonical(set);
  if (docs.empty()) return out;
  // What each document costs whole (header, text, separator), counted once.
  std::map<const DocumentText*, int> whole_cost;
  int whole_tokens = 0;
  for (const DocumentText* d : docs) {
    whole_cost[d] = count(header(*d, false)) + (d->tokens > 0 ? d->tokens : count(d->text)) + 1;
    whole_tokens += whole_cost[d];
  }
  if (whole_tokens <= budget_tokens) {
    out.text = whole(docs);
    out.tokens = count(out.text);
    return out;
  }

  // Retrieval, small to big: chunks best first; a chunk brings its whole
  // document when that fits what the budget has left, else goes in alone
  // (under its document's header, paid once). A document placed whole is the
  // same bytes in every prompt that retrieves from it, so questions that
  // retrieve from the same documents share their prefix whichever
  // paragraphs they hit. Then the whole documents go in library order, and
  // the excerpts after them in (document, position) order.
  out.retrieved = true;
  std::map<std::string, const DocumentText*> by_name;
  for (const DocumentText* d : docs) by_name[d->name] = d;
  using Key = std::pair<std::int64_t, std::string>;
  struct Placed {
    bool whole = false;
    std::map<int, const DocumentChunk*> chunks;  // by position; empty when whole
  };
  std::map<Key, Placed> chosen;
  struct Unit {
    const DocumentText* doc;
    const DocumentChunk* chunk;  // null: the whole document
  };
  std::vector<Unit> taken;  // rank order, for ranked_order
  int used = 0, considered = 0;
  for (const DocumentChunk& c : set.ranked_chunks) {
    if (set.max_chunks > 0 && considered >= set.max_chunks) break;
    auto doc = by_name.find(c.document);
    if (doc == by_name.end()) continue;
    const DocumentText& d = *doc->second;
    Placed& placed = chosen[{d.order, d.name}];
    if (placed.whole || placed.chunks.count(c.position)) continue;  // already in
    ++considered;
    if (placed.chunks.empty() && used + whole_cost[&d] <= budget_tokens) {
      used += whole_cost[&d];
      placed.whole = true;
      taken.push_back({&d, nullptr});
      ++out.whole_documents;
      continue;
    }
    int cost = count(c.text) + 1;
    if (placed.chunks.empty() || set.ranked_order) cost += count(header(d, true));
    if (used + cost > budget_tokens) continue;
    used += cost;
    placed.chunks[c.position] = &c;
    taken.push_back({&d, &c});
    ++out.chunks;
  }
  // Nothing retrieved (no chunk shares a word with the question): rather
  // than no documents at all, the whole documents that fit, in library order.
  if (taken.empty()) {
    for (const DocumentText* d : docs) {
      if (used + whole_cost[d] > budget_tokens) continue;
      used += whole_cost[d];
      chosen[{d->order, d->name}].whole = true;
      taken.push_back({d, nullptr});
      ++out.whole_documents;
    }
  }
  auto append = [&out](const Unit& u, bool with_header) {
    if (with_header) {
      out.text += (out.text.empty() ? "" : "\n") + header(*u.doc, u.chunk != nullptr);
    }
    const std::string& text = u.chunk ? u.chunk->text : u.doc->text;
    out.text += text;
    if (!text.ends_with('\n')) out.text += '\n';
  };
  if (set.ranked_order) {
    for (const Unit& u : taken) append(u, true);
  } else {
    // Whole documents first, then excerpts, each in library order: the
    // whole documents are the part questions share, so they lead.
    for (const auto& [key, placed] : chosen)
      if (placed.whole) append({by_name[key.second], nullptr}, true);
    for (const auto& [key, placed] : chosen) {
      bool first = true;
      for (const auto& [position, c] : placed.chunks) {
        append({by_name[key.second], c}, first);
        first = false;
      }
    }
  }
  out.tokens = out.text.empty() ? 0 : count(out.text);
  return out;
}

std::string system_with_documents(std::string_view system, const DocumentLayout& layout) {
  if (layout.text.empty()) return std::string(system);
  const std::string block = "Documents:\n\n" + layout.text;
  if (system.empty()) return block;
  return std::string(system) + "\n\n" + block;
}

std::vector<ChatMessage> messages_with_documents(std::vector<ChatMessage> messages,
                                                 const DocumentLayout& layout) {
  if (layout.text.empty()) return messages;
  if (!messages.empty() && messages.front().role == "system") {
    messages.front().content = system_with_documents(messages.front().content, layout);
  } else {
    messages.insert(messages.begin(), ChatMessage{"system", system_with_documents("", layout)});
  }
  return messages;
}

}  // namespace rc
