// bench --workload rag: questions over a document library, each answered
// from the chunks the library's FTS5 retrieval ranks for it, through the
// same path as chat --doc and the server (document-options.h). The corpus
// (bench-workloads.h: rag_corpus) is written to a temporary library,
// counted with the benchmarked model's tokenizer, and removed afterwards.
#pragma once

#include <string>

#include "bench-workloads.h"
#include "radixchat/engine.h"

namespace rc::cli {

struct RagShape {
  int docs = 40;                        // --docs
  int retrieve = 4;                     // --retrieve: chunks per question
  std::string doc_order = "canonical";  // --doc-order canonical|retrieved
};

// One single-turn conversation per question; every one carries the whole
// corpus as its documents (over the budget, so retrieval picks the chunks).
Result<Workload> make_rag_workload(const std::string& model, int requests, uint64_t seed,
                                   const RagShape& shape);

// A conversation's documents into its request (radixchat/documents.h);
// nothing placed for a conversation without documents.
Result<PlacedDocuments> place_conversation_documents(const Engine& engine, GenerateRequest& req,
                                                     const Conversation& conv);

}  // namespace rc::cli
