// Library::search (FTS5, BM25) and Library::chunks.
#include <cctype>

#include <nlohmann/json.hpp>

#include "library/library.h"
#include "store/sqlite-util.h"

namespace rc::library {
using store::detail::Stmt;

namespace {

// FTS5's query language gives meaning to punctuation and to words such as
// OR and NEAR; a question is free text. Each run of letters and digits
// (any non-ASCII byte counts as a letter) becomes one quoted term, and any
// term may match: BM25 ranks chunks that match more, and rarer, terms first.
std::string fts_query(std::string_view text) {
  std::string out;
  std::string word;
  int terms = 0;
  auto flush = [&] {
    if (word.empty() || terms >= 64) return word.clear();
    if (!out.empty()) out += " OR ";
    out += '"' + word + '"';
    ++terms;
    word.clear();
  };
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || u >= 0x80) {
      word += c;
    } else {
      flush();
    }
  }
  flush();
  return out;
}

Result<std::vector<Chunk>> read_chunks(Stmt& st, bool scored) {
  std::vector<Chunk> out;
  for (;;) {
    auto row = st.step();
    if (!row.ok()) return row.status();
    if (!row.value()) break;
    Chunk c;
    c.document = st.text(0);
    c.document_position = st.int64(1);
    c.position = st.int32(2);
    c.token_count = st.int32(3);
    c.text = st.text(4);
    // bm25() is lower for a better match; the API reports higher = better.
    if (scored) c.score = -st.real(5);
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

Result<std::vector<Chunk>> Library::search(std::string_view query, int k,
                                           const std::vector<std::string>& documents) const {
  for (const std::string& name : documents) {
    auto id = id_of(name);
    if (!id.ok()) return id.status();
  }
  const std::string match = fts_query(query);
  if (match.empty() || k <= 0) return std::vector<Chunk>{};
  std::string sql =
      "SELECT d.name, d.position, c.position, c.token_count, c.text, bm25(chunks_fts) "
      "FROM chunks_fts JOIN chunks c ON c.id = chunks_fts.rowid "
      "JOIN documents d ON d.id = c.document_id WHERE chunks_fts MATCH ?1 ";
  if (!documents.empty()) sql += "AND d.name IN (SELECT value FROM json_each(?3)) ";
  // Ties broken by library order, so a search is repeatable.
  sql += "ORDER BY bm25(chunks_fts), d.position, c.position LIMIT ?2";
  auto st = Stmt::prepare(db_, sql);
  if (!st.ok()) return st.status();
  st->bind(1, match);
  st->bind(2, k);
  if (!documents.empty()) st->bind(3, nlohmann::json(documents).dump());
  return read_chunks(st.value(), true);
}

Result<std::vector<Chunk>> Library::chunks(std::string_view name) const {
  auto id = id_of(name);
  if (!id.ok()) return id.status();
  auto st = Stmt::prepare(db_,
                          "SELECT d.name, d.position, c.position, c.token_count, c.text "
                          "FROM chunks c JOIN documents d ON d.id = c.document_id "
                          "WHERE c.document_id = ?1 ORDER BY c.position");
  if (!st.ok()) return st.status();
  st->bind(1, id.value());
  return read_chunks(st.value(), false);
}

}  // namespace rc::library
