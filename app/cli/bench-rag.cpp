#include "bench-rag.h"

#include <unistd.h>

#include <filesystem>

#include "document-options.h"

namespace rc::cli {

Result<Workload> make_rag_workload(const std::string& model, int requests, uint64_t seed,
                                   const RagShape& shape) {
  if (requests < 1) return Status(StatusCode::invalid_argument, "--requests must be at least 1");
  auto counter = open_token_counter(model);
  if (!counter) return Status(StatusCode::internal, "the model's tokenizer did not load");
  const std::filesystem::path file = std::filesystem::temp_directory_path() /
                                     ("radixchat-rag-" + std::to_string(getpid()) + ".db");
  // The library's SQLite files go with the function, whatever it returns.
  struct Remove {
    std::filesystem::path f;
    ~Remove() {
      std::error_code ec;
      for (const char* ext : {"", "-wal", "-shm"}) std::filesystem::remove(f.string() + ext, ec);
    }
  } remove{file};
  auto lib = library::Library::open(file);
  if (!lib.ok()) return lib.status();
  const std::vector<std::string> corpus = rag_corpus(shape.docs, seed, counter->count);
  std::vector<std::string> names;
  for (size_t i = 0; i < corpus.size(); ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "doc-%03zu.txt", i);
    auto added = (*lib)->add_text(name, corpus[i], "text", "", counter->count);
    if (!added.ok()) return added.status();
    names.push_back(name);
  }
  // The library counted every document with this model's tokenizer.
  auto infos = (*lib)->list();
  if (!infos.ok()) return infos.status();
  Workload w;
  w.name = "rag";
  const std::string system = "Answer the question from the documents.";
  for (const std::string& q : rag_questions(requests, shape.docs, seed)) {
    auto set = document_set(**lib, names, q, shape.retrieve);
    if (!set.ok()) return set.status();
    for (size_t i = 0; i < set->documents.size(); ++i)
      set->documents[i].tokens = infos.value()[i].token_count;
    set->ranked_order = shape.doc_order == "retrieved";
    Conversation c{system, {q}};
    c.documents = std::move(set.value());
    w.conversations.push_back(std::move(c));
  }
  return w;
}

Result<PlacedDocuments> place_conversation_documents(const Engine& engine, GenerateRequest& req,
                                                     const Conversation& conv) {
  if (conv.documents.empty()) return PlacedDocuments{};
  return place_documents(engine, req, conv.documents);
}

}  // namespace rc::cli
