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

}  // namespace rc::library
