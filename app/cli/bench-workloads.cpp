#include "bench-workloads.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace rc::cli {

namespace {

constexpr std::array<const char*, 96> kWords = {
    "the",    "cache",   "stores",  "keys",    "and",     "values",   "for",     "every",
    "token",  "prefix",  "tree",    "node",    "page",    "memory",   "request", "reply",
    "model",  "server",  "shared",  "system",  "prompt",  "user",     "answer",  "question",
    "small",  "large",   "fast",    "slow",    "river",   "mountain", "garden",  "window",
    "letter", "number",  "friend",  "market",  "winter",  "summer",   "light",   "shadow",
    "bright", "quiet",   "simple",  "careful", "early",   "late",     "north",   "south",
    "write",  "read",    "build",   "measure", "explain", "compare",  "travel",  "follow",
    "under",  "over",    "between", "before",  "after",   "while",    "because", "although",
    "apple",  "bread",   "stone",   "paper",   "music",   "story",    "engine",  "signal",
    "green",  "blue",    "golden",  "silver",  "ancient", "modern",   "gentle",  "strong",
    "city",   "village", "ocean",   "forest",  "bridge",  "tower",    "field",   "island",
    "what",   "why",     "how",     "when",    "where",   "which",    "who",     "whose"};

// Deterministic and fast; the same on every platform.
struct Rng {
  uint64_t s;
  uint64_t next() {
    s += 0x9E3779B97F4A7C15ull;
    uint64_t z = s;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  int below(int n) { return static_cast<int>(next() % static_cast<uint64_t>(n)); }
};

std::string sentence(Rng& rng, int words) {
  std::string s;
  for (int i = 0; i < words; ++i) {
    if (i) s += ' ';
    s += kWords[rng.below(static_cast<int>(kWords.size()))];
  }
  s += '.';
  if (!s.empty()) s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
  return s;
}

std::string paragraph(Rng& rng, int sentences) {
  std::string p;
  for (int i = 0; i < sentences; ++i) {
    if (i) p += ' ';
    p += sentence(rng, 8 + rng.below(8));
  }
  return p;
}

Workload multi_turn(int requests, Rng& rng, int turns) {
  // Several conversations of four turns over a common short system prompt.
  const int kTurns = turns > 0 ? turns : 4;
  Workload w{"multi-turn", {}};
  const std::string system = "You are a helpful assistant. " + paragraph(rng, 2);
  for (int left = requests; left > 0; left -= kTurns) {
    Conversation c{system, {}};
    for (int t = 0; t < std::min(kTurns, left); ++t) c.users.push_back(paragraph(rng, 3));
    w.conversations.push_back(std::move(c));
  }
  return w;
}

Workload few_shot(int requests, Rng& rng) {
  Workload w{"few-shot", {}};
  std::string examples = "Answer like the examples.\n";
  for (int i = 0; i < 12; ++i) {
    examples += "Q: " + sentence(rng, 10) + "\nA: " + paragraph(rng, 2) + "\n";
  }
  for (int i = 0; i < requests; ++i) {
    w.conversations.push_back({"", {examples + "Q: " + sentence(rng, 12) + "\nA:"}});
  }
  return w;
}

Workload shared_system(int requests, Rng& rng) {
  Workload w{"shared-system", {}};
  const std::string system =
      "You are the support assistant of a travel company. " + paragraph(rng, 24);
  for (int i = 0; i < requests; ++i) {
    w.conversations.push_back({system, {sentence(rng, 10 + rng.below(10))}});
  }
  return w;
}

Workload random_prompts(int requests, Rng& rng) {
  Workload w{"random", {}};
  for (int i = 0; i < requests; ++i) w.conversations.push_back({"", {paragraph(rng, 16)}});
  return w;
}

// Information extraction, the shape of the structured-generation workloads
// prefix caching was shown on: one long instruction block with the schema
// (the shared prefix), then a short document per request.
Workload structured(int requests, Rng& rng) {
  static const char* kSchema =
      R"({"type":"object","properties":{)"
      R"("topic":{"enum":["travel","weather","food","science","sport","other"]},)"
      R"("date":{"type":"string","format":"date"},)"
      R"("people":{"type":"array","items":{"type":"string"},"maxItems":3},)"
      R"("sentiment":{"enum":["positive","neutral","negative"]},)"
      R"("score":{"type":"integer"},"urgent":{"type":"boolean"}},)"
      R"("required":["topic","date","sentiment","score","urgent"],"additionalProperties":false})";
  Workload w{"structured", {}, {OutputFormat::json_schema, kSchema}};
  std::string system =
      "You extract facts from short documents and answer with one JSON object that follows "
      "this JSON Schema exactly:\n" +
      std::string(kSchema) + "\nRules:\n";
  for (int i = 0; i < 16; ++i) system += "- " + paragraph(rng, 1) + "\n";
  for (int i = 0; i < requests; ++i) {
    w.conversations.push_back({system, {"Document: " + paragraph(rng, 2 + rng.below(2))}});
  }
  return w;
}

// "Regenerate": each conversation asks once, then asks the same again.
Workload regenerate(int requests, Rng& rng) {
  constexpr int kAsks = 4;
  Workload w{"regenerate", {}};
  const std::string system = "You are a helpful assistant. " + paragraph(rng, 2);
  for (int left = requests; left > 0; left -= kAsks) {
    Conversation c{system, {}, true};
    const std::string question = paragraph(rng, 2);
    for (int t = 0; t < std::min(kAsks, left); ++t) c.users.push_back(question);
    w.conversations.push_back(std::move(c));
  }
  return w;
}

// The user message is the document alone, so the reply's opening
// ("<|end|>\n<|assistant|>\n" in the radixchat template) differs from the
// document's ("<|end|>\n<|user|>\n") only in the role marker: what a model
// that copies from the context needs to start the copy at the document.
Workload rewrite(int requests, Rng& rng) {
  Workload w{"rewrite", {}};
  const std::string system =
      "You are an editor. The user sends a document: repeat it word for word with its capital "
      "letters fixed, changing nothing else. Do not add anything.";
  for (int i = 0; i < requests; ++i) w.conversations.push_back({system, {paragraph(rng, 6)}});
  return w;
}

// An agent loop: the same tool call's result comes back with one field
// changed, turn after turn, and the model answers with its next call.
Workload agentic(int requests, Rng& rng) {
  constexpr int kTurns = 4;  // with 64-token replies, within a 1k-token context
  Workload w{"agentic", {}};
  std::string system =
      "You are an agent with one tool, search(query). After each tool result, answer with the "
      "next call as JSON: {\"tool\": \"search\", \"query\": \"...\"}.\nTool notes:\n";
  for (int i = 0; i < 4; ++i) system += "- " + paragraph(rng, 1) + "\n";
  for (int left = requests; left > 0; left -= kTurns) {
    Conversation c{system, {}};
    const std::string query = sentence(rng, 5);
    for (int t = 0; t < std::min(kTurns, left); ++t) {
      c.users.push_back("Tool result: {\"tool\": \"search\", \"query\": \"" + query +
                        "\", \"page\": " + std::to_string(t + 1) +
                        ", \"status\": \"ok\", \"hits\": 0}");
    }
    w.conversations.push_back(std::move(c));
  }
  return w;
}

// Four long documents; the questions go round them in turn.
Workload long_context_qa(int requests, Rng& rng, int doc_sentences) {
  constexpr int kDocuments = 4;
  Workload w{"long-context-qa", {}};
  std::vector<std::string> docs;
  for (int d = 0; d < kDocuments; ++d) {
    docs.push_back("Answer questions about this document.\n\nDocument " + std::to_string(d + 1) +
                   ":\n" + paragraph(rng, doc_sentences > 0 ? doc_sentences : 30));
  }
  for (int i = 0; i < requests; ++i) {
    w.conversations.push_back({docs[size_t(i % kDocuments)], {"Question: " + sentence(rng, 9)}});
  }
  return w;
}

// Each conversation over its own long notes, then short questions: the
// history outweighs each new turn. reopen is notes with two turns, and
// `bench` restarts the engine between them.
Workload notes(const char* name, int requests, Rng& rng, int doc_sentences, int turns) {
  Workload w{name, {}};
  for (int left = requests; left > 0; left -= turns) {
    Conversation c{"You are a helpful assistant. The user's notes:\n" +
                       paragraph(rng, doc_sentences > 0 ? doc_sentences : 20),
                   {"Summarise my notes. " + sentence(rng, 8)}};
    for (int t = 1; t < std::min(turns, left); ++t)
      c.users.push_back("Now tell me more about this: " + sentence(rng, 10));
    w.conversations.push_back(std::move(c));
  }
  return w;
}

constexpr int kRagParagraphs = 8;
constexpr int kRagDocumentTokens = 600;

std::string rag_term(int doc, int paragraph) {
  return "topic" + std::to_string(doc) + static_cast<char>('a' + paragraph);
}

}  // namespace

std::vector<std::string> rag_corpus(int docs, uint64_t seed,
                                    const std::function<int(std::string_view)>& count) {
  Rng rng{seed * 0x9E3779B97F4A7C15ull + 7};
  std::vector<std::string> out;
  for (int d = 0; d < docs; ++d) {
    std::string text = "Document " + std::to_string(d) + "\n\n";
    for (int p = 0; p < kRagParagraphs; ++p) {
      // Sentences until the document holds this paragraph's share of its
      // tokens, counted by the benchmarked model's tokenizer.
      text += "About " + rag_term(d, p) + ":";
      do {
        text += ' ' + sentence(rng, 8 + rng.below(8));
      } while (count(text) < (p + 1) * kRagDocumentTokens / kRagParagraphs);
      text += "\n\n";
    }
    out.push_back(std::move(text));
  }
  return out;
}

std::vector<std::string> rag_questions(int requests, int docs, uint64_t seed) {
  Rng rng{seed * 0xD1B54A32D192ED03ull + 11};
  // Zipf (s = 2): document d asked about in proportion to 1 / (d + 1)^2, the
  // skew RAGCache measured (3% of the documents draw 60% of the retrievals):
  // of 40 documents, the first draws 62%.
  std::vector<double> cdf;
  double sum = 0;
  for (int d = 0; d < docs; ++d) cdf.push_back(sum += 1.0 / ((d + 1.0) * (d + 1.0)));
  static constexpr std::array<const char*, 3> kOpenings = {
      "Using the cache and memory notes, explain", "What does the tree and page text say about",
      "Compare the model and server answers on"};
  auto popular = [&] {
    const double u = (rng.next() >> 11) * 0x1.0p-53 * sum;
    const auto d = std::lower_bound(cdf.begin(), cdf.end(), u) - cdf.begin();
    return std::min(static_cast<int>(d), docs - 1);
  };
  std::vector<std::string> out;
  for (int i = 0; i < requests; ++i) {
    // Two documents, each by popularity; the question dwells on the first
    // it names (twice, which BM25 weighs), so retrieval ranks their chunks
    // in the order the question chose, differently from question to question.
    const std::string first = rag_term(popular(), rng.below(kRagParagraphs));
    const std::string second = rag_term(popular(), rng.below(kRagParagraphs));
    out.push_back(std::string(kOpenings[rng.below(static_cast<int>(kOpenings.size()))]) + " " +
                  first + ", and how " + first + " bears on " + second + "?");
  }
  return out;
}

int Workload::requests() const {
  int n = 0;
  for (const Conversation& c : conversations) n += static_cast<int>(c.users.size());
  return n;
}

const char* workload_names() {
  return "multi-turn, few-shot, shared-system, random, structured, regenerate, rewrite, agentic, "
         "long-context-qa, notes, reopen, rag";
}

std::vector<std::string> workload_list() {
  return {"multi-turn", "few-shot", "shared-system",   "random", "structured", "regenerate",
          "rewrite",    "agentic",  "long-context-qa", "notes",  "reopen",     "rag"};
}

Result<Workload> make_workload(const std::string& name, int requests, uint64_t seed,
                               const WorkloadShape& shape) {
  const int doc_sentences = shape.doc_sentences;
  if (requests < 1) return Status(StatusCode::invalid_argument, "--requests must be at least 1");
  Rng rng{seed * 0x2545F4914F6CDD1Dull + 1};
  if (name == "multi-turn") return multi_turn(requests, rng, shape.turns);
  if (name == "few-shot") return few_shot(requests, rng);
  if (name == "shared-system") return shared_system(requests, rng);
  if (name == "random") return random_prompts(requests, rng);
  if (name == "structured") return structured(requests, rng);
  if (name == "regenerate") return regenerate(requests, rng);
  if (name == "rewrite") return rewrite(requests, rng);
  if (name == "agentic") return agentic(requests, rng);
  if (name == "long-context-qa") return long_context_qa(requests, rng, doc_sentences);
  if (name == "notes")
    return notes("notes", requests, rng, doc_sentences, shape.turns > 0 ? shape.turns : 2);
  if (name == "reopen") return notes("reopen", requests, rng, doc_sentences, 2);
  return Status(StatusCode::invalid_argument,
                "unknown workload '" + name + "' (expected " + workload_names() + ")");
}

}  // namespace rc::cli
