// The five benchmark workloads of `radixchat-cli bench`, generated from a
// seed so every cache setting replays exactly the same requests:
//   multi-turn     conversations growing turn by turn (each turn re-sends
//                  the history plus the model's real replies)
//   few-shot       a long shared block of worked examples + varying questions
//   shared-system  one long system prompt, many users with short messages
//   random         unrelated prompts, no reuse (shows the cache's overhead)
//   structured     a long shared instruction block and JSON schema, each
//                  request with its own short input document; replies are
//                  constrained to the schema (response_format)
//   regenerate     a question, then "Regenerate" of the same messages a few
//                  times (drafted decoding's best case at temperature 0)
//   rewrite        a document the reply is asked to repeat with small edits
//                  (the reply copies the prompt: prompt lookup's case); the
//                  instruction is the system message and the user message
//                  is the document alone, so the reply opens as the
//                  document does but for the role marker ("<|end|>\n
//                  <|assistant|>\n" against "<|end|>\n<|user|>\n"): the
//                  cue a model that copies its context needs, such as
//                  make-random-gguf --copy's
//   agentic        an agent loop: a long tool-use instruction block, then
//                  turns whose tool results differ in one field, the
//                  history growing with every reply
//   long-context-qa  a few long documents, many questions about each, the
//                  documents taking turns (the cache tiers' headline case:
//                  with a small pool, a document's KV is evicted before its
//                  next question and comes back from a tier)
//   notes          each conversation over the user's own long notes, then
//                  short questions (history outweighs each new turn)
//   reopen         notes with two turns; `bench` runs the
//                  first turn of each, restarts the engine, then sends the
//                  second turn (what the disk tier keeps across a restart)
//   rag            questions over a document library, answered from the
//                  chunks retrieval picks (bench-rag.h builds it from
//                  rag_corpus and rag_questions)
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "radixchat/documents.h"
#include "radixchat/engine.h"
#include "radixchat/status.h"

namespace rc::cli {

struct Conversation {
  std::string system;              // may be empty
  std::vector<std::string> users;  // one user message per turn
  // Every turn re-sends the first turn's messages instead of extending the
  // history (users then holds the same message once per turn).
  bool regenerate = false;
  // Messages before the first turn (a reopened conversation); when set,
  // they are sent instead of `system`.
  std::vector<ChatMessage> history = {};
  // Documents every turn is answered from (radixchat/documents.h).
  DocumentSet documents = {};
};

struct Workload {
  std::string name;
  std::vector<Conversation> conversations;
  ResponseFormat response_format;  // applied to every request
  int requests() const;
};

// Optional sizes; 0 keeps the workload's own.
struct WorkloadShape {
  int doc_sentences = 0;  // long-context-qa, notes and reopen documents (30, 20, 20 sentences)
  int turns = 0;          // multi-turn and notes: turns per conversation (4 and 2)
};

// `requests` is the total number of turns over all conversations.
Result<Workload> make_workload(const std::string& name, int requests, uint64_t seed,
                               const WorkloadShape& shape = {});

// The rag workload's corpus: `docs` documents of about 600 tokens as
// `count` counts them (the benchmarked model's tokenizer), each with key
// terms of its own ("topic<doc><letter>"), one per paragraph.
std::vector<std::string> rag_corpus(int docs, uint64_t seed,
                                    const std::function<int(std::string_view)>& count);
// `requests` questions, each naming a key term of each of two documents
// drawn with Zipf popularity, s = 2 (document 0 the most asked about), the
// first named twice (it ranks first), after one of
// a few fixed openings (so retrieval also brings chunks the questions share).
std::vector<std::string> rag_questions(int requests, int docs, uint64_t seed);

// "multi-turn, few-shot, shared-system, random, structured, regenerate, rewrite, agentic, ..."
const char* workload_names();
// The same names, one per entry (for a CLI check).
std::vector<std::string> workload_list();

}  // namespace rc::cli
