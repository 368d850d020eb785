// The document library: files the user asks questions about, kept in one
// SQLite file (0600) beside the chat history, with their text cut into
// chunks that SQLite's FTS5 indexes for BM25 retrieval. Plain C++, no Qt,
// no engine: token counts come from a counter the caller passes in (the
// model's tokenizer in the CLI and the server).
//
// Thread: a Library is one SQLite connection; use it from one thread at a
// time. Errors are values; every write is one transaction, so a failed add
// or remove leaves the library as it was.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "radixchat/status.h"

struct sqlite3;

namespace rc::library {

// Tokens of a piece of text, for the stored counts and the chunk sizes.
using TokenCounter = std::function<int(std::string_view)>;

struct DocumentInfo {
  std::int64_t id = 0;
  std::string name;          // unique in the library: the file name
  std::string source_path;   // where it was added from (absolute)
  std::string format;        // text | markdown | html | pdf
  std::string content_hash;  // XXH3-128 of the extracted text, hex
  int token_count = 0;
  int chunk_count = 0;
  std::int64_t added_at_ms = 0;  // Unix ms
  std::int64_t position = 0;     // library order: the canonical prompt order
  // Kept warm: its prefix (the system prompt and it alone, laid out as
  // radixchat/documents.h lays it) is computed at start and pinned in the
  // cache (docs/architecture.md section 21). Schema v2.
  bool pinned = false;
};

struct Document {
  DocumentInfo info;
  std::string text;
};

struct Chunk {
  std::string document;  // its document's name
  std::int64_t document_position = 0;
  int position = 0;  // 0-based, in its document
  int token_count = 0;
  std::string text;
  double score = 0;  // BM25 (higher is better); 0 outside search()
};

// What add() did: a new document, or the one that already holds this text.
struct Added {
  DocumentInfo info;
  bool already_present = false;
};

class Library {
 public:
  static constexpr int kSchemaVersion = 2;
  // The SQL that makes version `version` (1-based) of the schema, so tests
  // can build an older library exactly as an older build did.
  static std::string_view migration_sql(int version);

  // Opens or creates the library at `path` (created 0600; the folder must
  // exist). A file of another application, a newer schema or a damaged file
  // is refused with a message naming it, and left as it was.
  static Result<std::unique_ptr<Library>> open(const std::filesystem::path& path);
  ~Library();
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  // Extracts `file` (extract.h), cuts it into chunks and stores both, at the
  // end of the library order. The same text added again returns the stored
  // document with already_present set. A name already used by other text is
  // invalid_argument (remove the old one first). Bad input: the extractor's
  // one-line Status, and the library unchanged.
  Result<Added> add_file(const std::filesystem::path& file, const TokenCounter& count);
  // Several files in one transaction: every file is extracted first, and
  // one refused file adds none of them.
  Result<std::vector<Added>> add_files(const std::vector<std::filesystem::path>& files,
                                       const TokenCounter& count);
  // The same for text already in hand (the benchmark's corpus): `format` is
  // stored as given, `source_path` may be empty.
  Result<Added> add_text(std::string name, std::string text, std::string format,
                         std::string source_path, const TokenCounter& count);

  // Marks the document kept warm or not (DocumentInfo::pinned); not_found
  // naming it when absent. The caller pins or unpins its KV.
  Status set_pinned(std::string_view name, bool pinned);

  // Every document, in library order.
  Result<std::vector<DocumentInfo>> list() const;
  // not_found naming it when no document has this name.
  Result<Document> get(std::string_view name) const;
  // Removes a document and its chunks; not_found naming it when absent.
  // `before_remove`, when given, runs inside the transaction with the
  // document about to go (the place where its KV blocks are purged from
  // the cache tiers); its failure keeps the document.
  Status remove(std::string_view name,
                const std::function<Status(const DocumentInfo&)>& before_remove = {});

  // Top `k` chunks by BM25 over the words of `query` (any word may match),
  // best first; only from `documents` when that is not empty (names that
  // are not in the library are not_found). An empty or wordless query
  // matches nothing.
  Result<std::vector<Chunk>> search(std::string_view query, int k,
                                    const std::vector<std::string>& documents = {}) const;
  // Every chunk of one document in order (not_found naming it when absent).
  Result<std::vector<Chunk>> chunks(std::string_view name) const;

  const std::filesystem::path& path() const { return path_; }

 private:
  Library(sqlite3* db, std::filesystem::path path);
  Result<std::int64_t> id_of(std::string_view name) const;
  // add_text's work inside a transaction the caller holds.
  Result<Added> insert(const std::string& name, const std::string& text, const std::string& format,
                       const std::string& source_path, const TokenCounter& count);

  sqlite3* db_;
  std::filesystem::path path_;
};

// Where the library lives by default: "library.db" beside the chat history
// (store::default_database_path), its folder made if missing.
Result<std::filesystem::path> default_library_path();

}  // namespace rc::library
