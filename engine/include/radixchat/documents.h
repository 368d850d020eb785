// Documents in a prompt (docs/architecture.md section 21): one layout,
// shared by the app, the CLI and the server, so that the same documents are
// the same prefix in every conversation and the radix cache computes their
// KV once.
//
// The layout: the system prompt, then the documents in library order (each
// under a stable header), then the conversation. Whole documents when they
// fit the budget; otherwise retrieval, small to big: the best-ranked chunks,
// each bringing its whole document while that fits what the budget has
// left, else going in alone. Whole documents go first, then the excerpts,
// each in library order, never in the order they were ranked or given.
// When retrieval places nothing (no chunk matched), the whole documents
// that fit go in, in library order. The documents are appended to the
// system message, so every template keeps earlier turns byte-identical
// (tokenizer/chat-template.h).
//
// The engine holds no library: callers (app/library, through the CLI or
// the server) pass the texts and the ranked chunks as values, and
// place_documents() puts them into a request before Engine::submit. Any
// thread; nothing here changes an engine.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "radixchat/status.h"

namespace rc {

class Engine;
struct ChatMessage;
struct GenerateRequest;

struct DocumentText {
  std::string name;
  std::int64_t order = 0;  // library position: the canonical order
  std::string text;        // the whole document
  int tokens = 0;          // count(text) when the caller knows it; 0: counted here
};

struct DocumentChunk {
  std::string document;  // a DocumentText's name
  int position = 0;      // in its document
  std::string text;
};

struct DocumentSet {
  std::vector<DocumentText> documents;  // any order
  // Retrieval's candidates, best first (BM25 over the question and the last
  // turns); used only when the whole documents exceed the budget.
  std::vector<DocumentChunk> ranked_chunks;
  int budget_tokens = 0;  // 0: half the context
  // Retrieval uses at most this many ranked chunks (each placed alone or
  // bringing its document); 0: as many as fit.
  int max_chunks = 0;
  // Benchmarks only (bench --doc-order retrieved): chunks in rank order,
  // each under its document's header, to measure what canonical order buys.
  bool ranked_order = false;

  bool empty() const { return documents.empty(); }
};

struct DocumentLayout {
  std::string text;         // the block appended to the system prompt
  bool retrieved = false;   // retrieval chose what went in (the set exceeds the budget)
  int chunks = 0;           // chunks placed alone (retrieved only)
  int whole_documents = 0;  // documents a retrieved chunk brought in whole (retrieved only)
  int tokens = 0;           // count(text)
};

// Lays out `set` within `budget_tokens` (already resolved from 0), counting
// with `count` (the model's tokenizer, text encoded as text). The whole
// documents fit when their counts and headers, summed, are within the
// budget; a retrieved chunk's document fits when its count and header are
// within what is left.
DocumentLayout layout_documents(const DocumentSet& set, int budget_tokens,
                                const std::function<int(std::string_view)>& count);

// `system` with the layout appended under the documents' heading; the
// layout alone when `system` is empty.
std::string system_with_documents(std::string_view system, const DocumentLayout& layout);

// `messages` with the layout placed: appended to a leading system message,
// or as a new first system message.
std::vector<ChatMessage> messages_with_documents(std::vector<ChatMessage> messages,
                                                 const DocumentLayout& layout);

// Where a request's documents went, for the figures a caller shows
// (RequestMetrics knows nothing of documents).
struct PlacedDocuments {
  DocumentLayout layout;
  int start = 0;   // the first prompt token the documents changed
  int tokens = 0;  // prompt tokens the documents added
  // Of those, the ones a finished request's cache served.
  int cached(int cached_tokens) const;
};

// Lays `set` out within its budget (0: half of `engine`'s context), counted
// with `engine`'s tokenizer, and puts it into `req`: appended to its system
// message (one is added first when there is none), or before its plain
// prompt. invalid_argument for a request of token ids (documents need text
// to go into); the tokenizer's error for text it refuses.
Result<PlacedDocuments> place_documents(const Engine& engine, GenerateRequest& req,
                                        const DocumentSet& set);

}  // namespace rc
