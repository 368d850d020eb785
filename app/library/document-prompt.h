// The library's side of a request with documents (docs/architecture.md
// section 21), shared by the CLI, the server and the desktop app: the
// chosen documents' texts and the chunks retrieval ranks for a question,
// as the engine's DocumentSet (radixchat/documents.h), and a token counter
// from an engine's tokenizer. Kept apart from rc_library, which knows no
// engine: this target joins the two.
#pragma once

#include <string>
#include <vector>

#include "library/library.h"
#include "radixchat/documents.h"
#include "radixchat/engine.h"

namespace rc::library {

// Chunks offered to the layout per question, best first; it keeps those
// that fit the document budget.
inline constexpr int kRetrievalCandidates = 32;

// Counts with `engine`'s tokenizer (text as text); `engine` outlives it.
// Any thread (Engine::tokenize is).
TokenCounter engine_counter(const Engine& engine);

// The documents of one request: every named document's text, and the
// chunks of those documents that best match `question` (BM25), best first.
// not_found naming a document that is not in the library.
Result<DocumentSet> document_set(const Library& lib, const std::vector<std::string>& names,
                                 const std::string& question, int max_chunks = 0);

// The prefix every request with these documents and this system prompt
// starts with: the system message with `names` laid out after `system`
// ("" for none), as `messages` for Engine::warmup or render_chat, and where
// the documents went in it. The layout is retrieved (nothing to warm
// ahead: chunks depend on each question) when the documents exceed the
// budget.
struct DocumentPrefix {
  std::vector<std::string> names;  // as given
  std::vector<ChatMessage> messages;
  PlacedDocuments placed;
};
Result<DocumentPrefix> document_prefix(const Engine& engine, const Library& lib,
                                       const std::string& system,
                                       const std::vector<std::string>& names);

// The prefixes of the documents kept warm (DocumentInfo::pinned), each
// alone after `system`, that place whole; `skipped` gets the names of
// those too large to (retrieval would cut them).
Result<std::vector<DocumentPrefix>> kept_warm_prefixes(const Engine& engine, const Library& lib,
                                                       const std::string& system,
                                                       std::vector<std::string>* skipped);

}  // namespace rc::library
