// The document library (app/library/library.h): storage, library order,
// one document per content, FTS5 retrieval, removal, and that every bad
// input leaves the library as it was. Token counts use a whitespace word
// counter, so each expected count is plain arithmetic.
#include <sys/stat.h>

#include <sstream>

#include <gtest/gtest.h>

#include "word-count.h"

#include "../store/store-test-util.h"
#include "library/chunker.h"
#include "library/library.h"
#include "pdf-maker.h"

namespace rc::library {
namespace {
using store::testing::RawDb;
using store::testing::read_bytes;
using store::testing::TempDir;
using store::testing::write_bytes;

using test::words;
const TokenCounter kWords = words;

std::unique_ptr<Library> open_ok(const std::filesystem::path& p) {
  auto lib = Library::open(p);
  EXPECT_TRUE(lib.ok()) << lib.status().message();
  return lib.ok() ? std::move(lib.value()) : nullptr;
}

std::vector<std::string> names(const Library& lib) {
  std::vector<std::string> out;
  auto docs = lib.list();
  for (const auto& d : docs.value()) out.push_back(d.name);
  return out;
}

// "w<i>" words, `n` of them, in paragraphs of `per_paragraph`.
std::string filler(const std::string& stem, int n, int per_paragraph) {
  std::string out;
  for (int i = 0; i < n; ++i) {
    out += stem + std::to_string(i);
    out += (i + 1) % per_paragraph == 0 ? "\n\n" : " ";
  }
  return out;
}

TEST(Library, AddListGetRemoveInLibraryOrder) {
  TempDir dir;
  write_bytes(dir / "b.md", "# Beta\n\nBeta text here.\n");
  write_bytes(dir / "a.txt", "alpha one two\n");
  auto lib = open_ok(dir / "library.db");
  ASSERT_TRUE(lib);
  auto b = lib->add_file(dir / "b.md", kWords);
  ASSERT_OK(b);
  EXPECT_FALSE(b->already_present);
  EXPECT_EQ(b->info.format, "markdown");
  EXPECT_EQ(b->info.token_count, 5);
  EXPECT_EQ(b->info.source_path, (dir / "b.md").string());
  EXPECT_EQ(b->info.content_hash.size(), 32u);
  ASSERT_OK(lib->add_file(dir / "a.txt", kWords));
  // Library order is the order of adding, not the names' order.
  EXPECT_EQ(names(*lib), (std::vector<std::string>{"b.md", "a.txt"}));
  auto a = lib->get("a.txt");
  ASSERT_OK(a);
  EXPECT_EQ(a->text, "alpha one two\n");
  EXPECT_GT(a->info.position, b->info.position);
  EXPECT_EQ(a->info.chunk_count, 1);
  ASSERT_OK(lib->remove("b.md"));
  EXPECT_EQ(names(*lib), (std::vector<std::string>{"a.txt"}));
  EXPECT_EQ(lib->get("b.md").status().code(), StatusCode::not_found);
  EXPECT_NE(lib->remove("b.md").message().find("no document named 'b.md'"), std::string::npos);
}

TEST(Library, FileIsOwnerOnlyAndVersioned) {
  TempDir dir;
  ASSERT_TRUE(open_ok(dir / "library.db"));
  struct stat st {};
  ASSERT_EQ(::stat((dir / "library.db").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  RawDb raw(dir / "library.db");
  EXPECT_EQ(raw.text("PRAGMA user_version"), std::to_string(Library::kSchemaVersion));
}

TEST(Library, SameContentIsOneDocument) {
  TempDir dir;
  write_bytes(dir / "one.txt", "the same words\n");
  write_bytes(dir / "two.txt", "the same words\r\n");  // same text once line ends agree
  auto lib = open_ok(dir / "library.db");
  ASSERT_OK(lib->add_file(dir / "one.txt", kWords));
  auto again = lib->add_file(dir / "two.txt", kWords);
  ASSERT_OK(again);
  EXPECT_TRUE(again->already_present);
  EXPECT_EQ(again->info.name, "one.txt");
  EXPECT_EQ(names(*lib), (std::vector<std::string>{"one.txt"}));
}

TEST(Library, NameOfOtherTextIsRefused) {
  TempDir dir;
  std::filesystem::create_directory(dir / "sub");
  write_bytes(dir / "notes.txt", "first version\n");
  write_bytes(dir / "sub" / "notes.txt", "second version\n");
  auto lib = open_ok(dir / "library.db");
  ASSERT_OK(lib->add_file(dir / "notes.txt", kWords));
  auto r = lib->add_file(dir / "sub" / "notes.txt", kWords);
  EXPECT_EQ(r.status().code(), StatusCode::invalid_argument);
  EXPECT_NE(r.status().message().find("remove it first"), std::string::npos);
  EXPECT_EQ(lib->get("notes.txt")->text, "first version\n");
}

TEST(Library, BadInputLeavesTheLibraryUnchanged) {
  TempDir dir;
  write_bytes(dir / "good.txt", "good text\n");
  write_bytes(dir / "empty.txt", "");
  write_bytes(dir / "bin.dat", std::string("ab\0cd", 5));
  write_bytes(dir / "latin1.txt", "caf\xE9\n");
  write_bytes(dir / "scan.pdf", testing::make_pdf({{}}));
  write_bytes(dir / "locked.pdf", testing::make_pdf({{{"x"}}}, true));
  auto lib = open_ok(dir / "library.db");
  ASSERT_OK(lib->add_file(dir / "good.txt", kWords));
  const auto before = lib->list().value();
  for (const char* bad :
       {"empty.txt", "bin.dat", "latin1.txt", "scan.pdf", "locked.pdf", "missing.txt"}) {
    auto r = lib->add_file(dir / bad, kWords);
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find(bad), std::string::npos) << r.status().message();
  }
  EXPECT_EQ(lib->remove("not-there").code(), StatusCode::not_found);
  const auto after = lib->list().value();
  ASSERT_EQ(after.size(), before.size());
  EXPECT_EQ(after[0].content_hash, before[0].content_hash);
  EXPECT_EQ(lib->get("good.txt")->text, "good text\n");
}

TEST(Library, OneRefusedFileAddsNoneOfTheBatch) {
  TempDir dir;
  write_bytes(dir / "first.txt", "first words\n");
  write_bytes(dir / "bad.txt", "");
  write_bytes(dir / "last.txt", "last words\n");
  auto lib = open_ok(dir / "library.db");
  auto r = lib->add_files({dir / "first.txt", dir / "bad.txt", dir / "last.txt"}, kWords);
  EXPECT_NE(r.status().message().find("bad.txt: is empty"), std::string::npos)
      << r.status().message();
  EXPECT_TRUE(names(*lib).empty());
  auto ok = lib->add_files({dir / "first.txt", dir / "last.txt"}, kWords);
  ASSERT_OK(ok);
  EXPECT_EQ(names(*lib), (std::vector<std::string>{"first.txt", "last.txt"}));
}

TEST(Library, SearchRanksByBm25AndFiltersByDocument) {
  TempDir dir;
  auto lib = open_ok(dir / "library.db");
  // "zebra" is rare across the library and frequent in one chunk of b:
  // BM25 ranks that chunk first; "common" is everywhere.
  ASSERT_OK(lib->add_text("a", filler("common", 20, 20) + "zebra once\n", "text", "", kWords));
  ASSERT_OK(lib->add_text("b", "zebra zebra zebra common\n", "text", "", kWords));
  ASSERT_OK(lib->add_text("c", "nothing shared here\n", "text", "", kWords));
  auto hits = lib->search("Where's the (zebra)? OR NEAR", 5);
  ASSERT_OK(hits);
  ASSERT_EQ(hits->size(), 2u);
  EXPECT_EQ((*hits)[0].document, "b");
  EXPECT_EQ((*hits)[1].document, "a");
  EXPECT_GT((*hits)[0].score, (*hits)[1].score);
  // Stemming: the plural finds the singular.
  EXPECT_EQ(lib->search("zebras", 5)->size(), 2u);
  auto only_a = lib->search("zebra", 5, {"a"});
  ASSERT_OK(only_a);
  ASSERT_EQ(only_a->size(), 1u);
  EXPECT_EQ((*only_a)[0].document, "a");
  EXPECT_EQ(lib->search("zebra", 5, {"nope"}).status().code(), StatusCode::not_found);
  EXPECT_TRUE(lib->search("?!", 5)->empty());
  EXPECT_EQ(lib->search("zebra", 1)->size(), 1u);
  // Removal takes a document's chunks out of the index too.
  ASSERT_OK(lib->remove("b"));
  hits = lib->search("zebra", 5);
  ASSERT_EQ(hits->size(), 1u);
  EXPECT_EQ((*hits)[0].document, "a");
}

TEST(Library, ChunksCoverTheDocumentInOrder) {
  TempDir dir;
  auto lib = open_ok(dir / "library.db");
  const std::string text = filler("w", 1000, 50);
  ASSERT_OK(lib->add_text("long", text, "text", "", kWords));
  auto chunks = lib->chunks("long");
  ASSERT_OK(chunks);
  int total = 0;
  for (size_t i = 0; i < chunks->size(); ++i) {
    const Chunk& c = (*chunks)[i];
    EXPECT_EQ(c.position, static_cast<int>(i));
    EXPECT_EQ(c.token_count, words(c.text));
    EXPECT_LE(c.token_count, kChunkMaxTokens);
    total += c.token_count;
  }
  EXPECT_EQ(total, 1000);
  EXPECT_EQ(lib->get("long")->info.chunk_count, static_cast<int>(chunks->size()));
}

TEST(Library, BeforeRemoveFailureKeepsTheDocument) {
  TempDir dir;
  auto lib = open_ok(dir / "library.db");
  ASSERT_OK(lib->add_text("d", "some words\n", "text", "", kWords));
  std::string seen;
  Status s = lib->remove("d", [&](const DocumentInfo& info) {
    seen = info.name;
    return Status(StatusCode::internal, "purge failed");
  });
  EXPECT_EQ(s.message(), "purge failed");
  EXPECT_EQ(seen, "d");
  EXPECT_TRUE(lib->get("d").ok());
  EXPECT_EQ(lib->search("words", 3)->size(), 1u);
}

TEST(Library, ReopensWithItsDocuments) {
  TempDir dir;
  {
    auto lib = open_ok(dir / "library.db");
    ASSERT_OK(lib->add_text("kept", "kept words\n", "text", "/x/kept", kWords));
  }
  auto lib = open_ok(dir / "library.db");
  EXPECT_EQ(names(*lib), (std::vector<std::string>{"kept"}));
  EXPECT_EQ(lib->search("kept", 1)->size(), 1u);
}

TEST(Library, KeptWarmIsStoredAndSurvivesAReopen) {
  TempDir dir;
  {
    auto lib = open_ok(dir / "library.db");
    ASSERT_OK(lib->add_text("a", "alpha words\n", "text", "", kWords));
    ASSERT_OK(lib->add_text("b", "beta words\n", "text", "", kWords));
    EXPECT_FALSE(lib->get("a")->info.pinned) << "a new document is not kept warm";
    ASSERT_OK(lib->set_pinned("b", true));
    EXPECT_EQ(lib->set_pinned("nope", true).code(), StatusCode::not_found);
  }
  auto lib = open_ok(dir / "library.db");
  auto docs = lib->list();
  ASSERT_OK(docs);
  ASSERT_EQ(docs->size(), 2u);
  EXPECT_FALSE((*docs)[0].pinned);
  EXPECT_TRUE((*docs)[1].pinned);
  ASSERT_OK(lib->set_pinned("b", false));
  EXPECT_FALSE(lib->get("b")->info.pinned);
}

// A library an earlier build wrote (schema v1, no pinned column) opens,
// migrates to the current version and keeps its documents, chunks and
// search index, none of them kept warm.
TEST(Library, AVersionOneLibraryOpensAndKeepsItsDocuments) {
  TempDir dir;
  {
    RawDb raw(dir / "library.db");
    raw.exec(std::string(Library::migration_sql(1)));
    raw.exec(
        "INSERT INTO documents (name, source_path, format, content_hash, text, token_count, "
        "added_at, position) VALUES ('old.md', '/x/old.md', 'markdown', 'h1', 'lighthouse "
        "keeper notes', 3, 1, 1);"
        "INSERT INTO chunks (document_id, position, token_count, text) VALUES (1, 0, 3, "
        "'lighthouse keeper notes');"
        "PRAGMA user_version = 1;");
  }
  auto lib = open_ok(dir / "library.db");
  ASSERT_TRUE(lib);
  RawDb raw(dir / "library.db");
  EXPECT_EQ(raw.text("PRAGMA user_version"), std::to_string(Library::kSchemaVersion));
  auto doc = lib->get("old.md");
  ASSERT_OK(doc);
  EXPECT_EQ(doc->text, "lighthouse keeper notes");
  EXPECT_EQ(doc->info.chunk_count, 1);
  EXPECT_FALSE(doc->info.pinned);
  auto hits = lib->search("keeper", 3);
  ASSERT_OK(hits);
  ASSERT_EQ(hits->size(), 1u);
  EXPECT_EQ((*hits)[0].document, "old.md");
  ASSERT_OK(lib->set_pinned("old.md", true));
  EXPECT_TRUE(lib->get("old.md")->info.pinned);
}

TEST(Library, ForeignAndNewerFilesAreRefusedUntouched) {
  TempDir dir;
  write_bytes(dir / "notes.txt", std::string(5000, 'x'));
  auto r = Library::open(dir / "notes.txt");
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("notes.txt"), std::string::npos) << r.status().message();
  EXPECT_EQ(read_bytes(dir / "notes.txt"), std::string(5000, 'x'));
  {
    RawDb raw(dir / "newer.db");
    raw.exec("CREATE TABLE t (x); PRAGMA user_version = 99");
  }
  const std::string before = read_bytes(dir / "newer.db");
  r = Library::open(dir / "newer.db");
  EXPECT_EQ(r.status().code(), StatusCode::unsupported) << r.status().message();
  EXPECT_EQ(read_bytes(dir / "newer.db"), before);
  EXPECT_EQ(Library::open(dir / "no" / "such" / "library.db").status().code(),
            StatusCode::not_found);
}

}  // namespace
}  // namespace rc::library
