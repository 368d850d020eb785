// The chat history store: conversations, messages with branches, system-prompt
// presets and settings in one SQLite file (docs/architecture.md section 16).
//
// Threading: a Store owns one sqlite3 connection and is NOT thread-safe. Use it
// from one thread at a time; the app keeps it on a StoreThread
// (store-thread.h) so the GUI never blocks on disk. Nothing here uses Qt.
//
// Errors are values: every fallible call returns rc::Status or rc::Result<T>,
// never throws. Codes callers branch on:
//   not_found         an id (conversation, message, preset) does not exist
//   invalid_argument  the call is inconsistent (parent in another conversation,
//                     duplicate preset name, updating a non-assistant message)
//   corrupt_data      open(): the file is not a RadixChat/SQLite database or
//                     fails PRAGMA quick_check; the message names the path
//   unsupported       open(): the schema is newer than this build knows
//   corrupt_data      a read: a message's stored token ids are not a
//                     whole number of non-negative int32 (the message and
//                     its conversation are named)
//   internal          any other SQLite failure (disk full, I/O error); the
//                     message carries SQLite's text
//
// Durability: every write method is one transaction (BEGIN IMMEDIATE ..
// COMMIT) in WAL mode with synchronous=FULL, so a process killed mid-write
// loses at most the write in flight, and a failed write changes nothing.
//
// Model: a conversation's messages form a forest through parent_id. Editing an
// earlier user message or regenerating a reply appends a NEW sibling (same
// parent) instead of changing history, so every branch is kept. The thread on
// screen is path_to(current_leaf). Siblings are ordered by creation
// (created_at_ms, then id), which is the order a branch picker shows.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "radixchat/status.h"

struct sqlite3;

namespace rc::store {

using Id = std::int64_t;  // SQLite rowid, always > 0

enum class Role { system, user, assistant };
const char* role_name(Role role);  // "system" | "user" | "assistant"

// Per-conversation generation settings, kept as a JSON text column so fields
// can be added without a migration. Missing or malformed fields read back as
// these defaults (a bad value must not make a conversation unreadable).
struct SamplingSettings {
  double temperature = 0.7;
  double top_p = 0.95;
  int top_k = 40;
  double min_p = 0.05;
  double repetition_penalty = 1.0;
  int max_tokens = 1024;
  int context_length = 0;  // 0: the model's own context length
  // What a chat longer than the context does (rc::ContextPolicy names):
  // "stop" | "truncate-middle" | "rolling-window".
  std::string context_overflow = "rolling-window";
  bool operator==(const SamplingSettings&) const = default;
};

// Figures of one assistant reply, shown in the status bar and exported.
struct MessageMetrics {
  int prompt_tokens = 0;      // prompt length of the request that produced it
  int cached_tokens = 0;      // of those, served from the radix cache
  int completion_tokens = 0;  // tokens generated
  double ttft_ms = 0;         // time to first token
  double tokens_per_s = 0;    // decode speed
  std::string finish_reason;  // "stop" | "length" | "cancelled" | "error"; "" unknown
  bool operator==(const MessageMetrics&) const = default;
};

struct Message {
  Id id = 0;
  Id conversation_id = 0;
  std::optional<Id> parent_id;  // nullopt: a root (first message of a branch)
  Role role = Role::user;
  std::string content;
  std::int64_t created_at_ms = 0;         // Unix epoch, UTC, milliseconds
  std::string model;                      // model that wrote it; "" for user/system
  std::optional<MessageMetrics> metrics;  // assistant replies only
  // Assistant replies: the ids the reply was generated as (the engine's
  // streamed tokens, end-of-generation excluded), so the next prompt can hold
  // exactly what the cache holds (rc::ChatMessage::tokens). Empty: not known.
  std::vector<std::int32_t> tokens;
};

struct Conversation {
  Id id = 0;
  std::string title;
  std::int64_t created_at_ms = 0;
  // Last message activity (append/update_message); rename, settings and branch
  // navigation do not move a conversation in the list.
  std::int64_t updated_at_ms = 0;
  std::string system_prompt;
  std::optional<Id> preset_id;        // preset the prompt came from; cleared if deleted
  std::optional<Id> current_leaf_id;  // tip of the branch on screen; nullopt: empty
  SamplingSettings sampling;
};

struct NewConversation {
  std::string title;
  std::string system_prompt;
  std::optional<Id> preset_id;
  SamplingSettings sampling;
};

struct NewMessage {
  Id conversation_id = 0;
  std::optional<Id> parent_id;  // must be in the same conversation
  Role role = Role::user;
  std::string content;
  std::string model;
  std::optional<MessageMetrics> metrics;
};

struct Preset {
  Id id = 0;
  std::string name;  // unique
  std::string text;
  std::int64_t created_at_ms = 0;
};

class Store {
 public:
  // Schema version this build writes (PRAGMA user_version). v1: initial;
  // v2: messages.finish_reason and the parent_id index; v3: messages.tokens;
  // v4: conversation_documents; v5: messages_fts, the full-text index of
  // message text (kept by triggers).
  static constexpr int kSchemaVersion = 5;

  // Opens or creates the database at `path` (the parent folder must exist),
  // validating before writing anything: a non-SQLite file, a file failing
  // PRAGMA quick_check, or a SQLite file of another application ->
  // corrupt_data; user_version newer than kSchemaVersion -> unsupported. In
  // those cases the file is left byte-for-byte unchanged. Otherwise enables
  // WAL, foreign keys and a 5 s busy timeout, and runs the pending
  // migrations, each in its own transaction. A write-protected file ->
  // invalid_argument; a missing parent folder -> not_found. A new file is
  // created 0600, so its -wal and -shm are too (SQLite copies the mode).
  static Result<std::unique_ptr<Store>> open(const std::filesystem::path& path);

  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  const std::filesystem::path& path() const { return path_; }

  // ---- conversations ----
  Result<Id> create_conversation(const NewConversation& c);
  Result<Conversation> get_conversation(Id id);
  // Most recently updated first (ties: newest id first). limit < 0: all.
  Result<std::vector<Conversation>> list_conversations(int limit = -1);
  // Conversations whose title or any message (any branch) contains `query`
  // as a substring, case-insensitively; most recently updated first. Message
  // text is looked up in the FTS5 index (messages_fts); a query under three
  // characters, which a trigram index cannot answer, scans instead. An empty
  // query returns the same as list_conversations.
  Result<std::vector<Conversation>> search_conversations(std::string_view query, int limit = -1);
  // The first message (by creation, any branch) of the conversation whose
  // text contains `query` as search_conversations matches it; nullopt when
  // none does (the title may have matched) or the query is empty.
  Result<std::optional<Id>> first_matching_message(Id conversation_id, std::string_view query);
  Status rename_conversation(Id id, std::string_view title);
  Status set_system_prompt(Id id, std::string_view system_prompt, std::optional<Id> preset_id);
  Status set_sampling(Id id, const SamplingSettings& sampling);
  // Deletes the conversation and all its messages.
  Status delete_conversation(Id id);

  // ---- messages and branches ----
  // Appends a message and, in the same transaction, makes it the
  // conversation's current leaf and bumps updated_at. Branching = appending
  // with a parent that already has children (or nullopt when the conversation
  // already has a root). not_found: no such conversation or parent;
  // invalid_argument: parent belongs to another conversation.
  Result<Id> append_message(const NewMessage& m);
  // Final content, metrics and generated token ids of an assistant reply
  // once streaming ended (the reply is appended empty or partial when
  // generation starts). invalid_argument for user/system messages: they are
  // immutable, edits branch; and for a negative id in `tokens`.
  // metrics == nullopt clears them; empty tokens store "not known". Bumps
  // updated_at.
  Status update_message(Id id, std::string_view content,
                        const std::optional<MessageMetrics>& metrics,
                        std::span<const std::int32_t> tokens = {});
  Result<Message> get_message(Id id);
  // Root .. message inclusive: the thread that ends at `id`.
  Result<std::vector<Message>> path_to(Id id);
  // Children of `parent` (nullopt: the roots of the conversation), by creation.
  // Siblings of m are children(m.conversation_id, m.parent_id). not_found: no
  // such conversation; a parent of another conversation has no children here.
  Result<std::vector<Message>> children(Id conversation_id, std::optional<Id> parent);
  // The most recently created leaf in the subtree of `id` (id itself when it
  // has no children): where switching to a sibling lands, its latest continuation.
  Result<Id> newest_leaf(Id id);
  // Current leaf of a conversation (nullopt when it has no messages).
  Result<std::optional<Id>> current_leaf(Id conversation_id);
  // nullopt clears it. invalid_argument: leaf belongs to another conversation.
  Status set_current_leaf(Id conversation_id, std::optional<Id> leaf);
  // path_to(current leaf), or empty for a conversation without messages.
  Result<std::vector<Message>> current_thread(Id conversation_id);

  // ---- documents a conversation answers from (store-documents.cpp) ----
  // By name in the document library. Attaching one already attached does
  // nothing; not_found: no such conversation. Deleting the conversation
  // forgets its documents (the library keeps them).
  Status attach_document(Id conversation_id, std::string_view name);
  // not_found when that document is not attached to it.
  Status detach_document(Id conversation_id, std::string_view name);
  // In the order they were attached.
  Result<std::vector<std::string>> conversation_documents(Id conversation_id);
  // The conversations a document is attached to, most recently updated first.
  Result<std::vector<Conversation>> conversations_with_document(std::string_view name);
  // Detaches a document from every conversation (it left the library).
  Status forget_document(std::string_view name);

  // ---- system-prompt presets ----
  // invalid_argument when the name is empty or already taken.
  Result<Id> create_preset(std::string_view name, std::string_view text);
  Status update_preset(Id id, std::string_view name, std::string_view text);
  // Conversations that used it keep their system_prompt text; preset_id -> null.
  Status delete_preset(Id id);
  Result<Preset> get_preset(Id id);
  Result<std::vector<Preset>> list_presets();  // by name

  // ---- settings (app-wide key/value text) ----
  Result<std::optional<std::string>> get_setting(std::string_view key);
  Status set_setting(std::string_view key, std::string_view value);
  Status erase_setting(std::string_view key);

  // ---- export of the current thread ----
  // Markdown: "# title", the system prompt, then one "## User"/"## Assistant"
  // section per message, assistant metrics as an italic line.
  Result<std::string> export_markdown(Id conversation_id);
  // JSON object: {"format":"radixchat-conversation","version":1,"title",
  // "created_at","updated_at" (ISO 8601 UTC),"system_prompt","sampling":{..},
  // "messages":[{"id","parent_id","role","content","created_at","model",
  // "metrics":{..}|absent}]}, pretty-printed with 2 spaces.
  Result<std::string> export_json(Id conversation_id);

 private:
  Store(sqlite3* db, std::filesystem::path path);
  // Wall-clock ms, forced strictly increasing within this Store so that
  // "newest" orderings (siblings, conversation list) never tie.
  std::int64_t now_ms();

  sqlite3* db_;
  std::filesystem::path path_;
  std::int64_t last_ms_ = 0;
};

// $XDG_DATA_HOME/radixchat/radixchat.db, or ~/.local/share/radixchat/radixchat.db
// when XDG_DATA_HOME is unset, empty or relative (the XDG spec says ignore it).
// Creates the folder 0700 (rc::make_private_dir). internal when neither HOME
// nor XDG_DATA_HOME is usable or the folder cannot be created. Any thread.
Result<std::filesystem::path> default_database_path();

// Narrows the database's folder to 0700 and every file or folder directly in
// it (the database with its -wal and -shm, settings, models) to owner-only,
// for histories created before RadixChat did so or copied in with wider
// modes. Returns the one notice line to log ("" when nothing was wider).
// Call before Store::open (SQLite gives new -wal/-shm files the database's
// mode). internal when a mode cannot be changed. Any thread.
Result<std::string> restrict_data_folder(const std::filesystem::path& database);

}  // namespace rc::store
