// DocumentController: the app's side of "ask your documents"
// (docs/architecture.md section 21). It owns the document library (the
// file the CLI uses: library.db beside the history), the documents attached
// to the conversation on screen (their chips), and gives each request of
// that conversation its documents through the shared layout
// (library/document-prompt.h, radixchat/documents.h).
//
// Threads: lives on the GUI thread and is called only there. The library
// is one SQLite connection behind a mutex: adding a file (extraction, token
// counts with the model's tokenizer) and warming its prefix run on the
// engine worker thread (EngineHost::runWithEngine), reads for a request on
// the GUI thread. Results come back queued; nothing here blocks on the
// engine. Which conversation uses which document is kept in the history
// store (Store::attach_document), on the store thread.
//
// Warming: attaching prefills the conversation's system prompt with its
// documents (Engine::last_logits, which caches the prompt as a request
// would), unpinned: LRU may evict it, and deleting a conversation can purge
// it (Engine::forget skips pinned nodes).
//
// Kept warm (document-keep-warm.cpp): a document marked so in the library
// has its own prefix, the default system prompt and it alone, pinned in
// the engine (Engine::warmup, one pin however often it is warmed) at
// start and whenever the default preset changes; unmarking releases
// exactly that pin (Engine::unpin_warmup). Removing it from the library
// still purges it: Engine::forget_document releases the pins holding it.
//
// States (the Documents pane): "computing…" while a chip or a kept-warm
// prefix is being computed, else what Engine::locate_prefix finds of the
// prefixes the document was sent, warmed or pinned in: "in memory" (every
// whole page of it in the pool), "on disk" (evicted, but every whole block
// of it in the disk tier), "partly in memory", "not in memory". The
// lookup runs on the engine worker thread, never on the GUI thread.
#pragma once

#include <QObject>
#include <QString>
#include <QStringList>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <tuple>
#include <vector>

#include "chat/document-chips.h"
#include "chat/engine-worker.h"
#include "library/library.h"
#include "store/store-thread.h"

namespace rc::ui {
class EngineHost;
}

namespace rc::gui {

class ChatController;

class DocumentController : public QObject {
  Q_OBJECT
 public:
  enum class State { Idle, Computing, Ready };
  struct Attached {
    QString name;  // the library's name once added; the file name before
    State state = State::Idle;
    QString pendingPath;  // the file being added; empty once it is in the library
  };
  // One library document as the Documents pane lists it.
  struct Row {
    rc::library::DocumentInfo info;
    QStringList conversations;  // titles of the conversations that use it
  };

  DocumentController(rc::store::StoreThread* store, rc::ui::EngineHost* engine,
                     ChatController* chat, std::filesystem::path libraryPath,
                     QObject* parent = nullptr);
  // Call after the engine host is gone (its queued tasks call back here);
  // `chat` may be gone already.
  ~DocumentController() override;

  // Opens (or creates, 0600) the library; false after errorOccurred.
  bool open();
  bool isOpen() const;
  const std::filesystem::path& libraryPath() const { return path_; }

  // ---- the conversation on screen ----
  const std::vector<Attached>& attached() const { return attached_; }
  std::vector<rc::ui::DocumentChip> chips() const;
  // Adds the files to the library (the same text is the same document)
  // and, with `attach`, to the conversation on screen, then warms its
  // prefix. A file the library refuses (binary, empty, over 50 MB, a
  // damaged or scanned PDF, not UTF-8) is one errorOccurred line; the
  // library, the history and the other files are unaffected.
  void addFiles(const QStringList& paths, bool attach);
  void detach(const QString& name);
  // The documents of a request with these messages (GUI thread): the
  // attached ones' texts and the chunks BM25 ranks for its last two
  // questions (document_set).
  rc::DocumentSet documentSet(const std::vector<rc::ChatMessage>& messages);

  // ---- the library (the Documents pane) ----
  // Every document, or those with a chunk matching `query` (best first);
  // libraryListed follows, then documentStates.
  void listLibrary(const QString& query);
  // Marks the document kept warm (or not) in the library and pins (or
  // unpins) its prefix; keptWarmChanged follows. Without a model only the
  // mark changes: the prefix is pinned when a model is ready.
  void setKeptWarm(const QString& name, bool keep);
  // Pins the prefix of every document kept warm under the default system
  // prompt of the moment (pins made under another one are released
  // first). Runs by itself once a model is ready and the presets are read,
  // and when the presets change.
  void warmKept();
  // Purges the document's KV from the pool and the tiers
  // (Engine::forget_document), then removes it from the library and every
  // conversation; removed follows. A failed purge keeps it.
  void removeFromLibrary(const QString& name);

 signals:
  void attachedChanged();
  void libraryChanged();
  void libraryListed(const std::vector<rc::gui::DocumentController::Row>& rows);
  // name -> "computing…" | "in memory" | "on disk" | "partly in memory" |
  // "not in memory".
  void documentStates(const std::map<QString, QString>& states);
  // setKeptWarm or warmKept done for `name`: `keep` is what the library
  // says now; error when the mark or the pin failed.
  void keptWarmChanged(const QString& name, bool keep, const QString& error);
  // treeTokens / tierBlocks: what the engine's purge dropped
  // (Engine::forget_document); error when it could not (the document stays).
  void removed(const QString& name, qint64 treeTokens, qint64 tierBlocks, const QString& error);
  void errorOccurred(const QString& message);
  void info(const QString& message);

 private:
  struct Shared {  // used on the GUI and the worker thread
    std::mutex mu;
    std::unique_ptr<rc::library::Library> lib;
  };
  // A system prompt and the documents it was sent or warmed with: a prefix
  // the cache may hold (the pane's in-memory state).
  struct Prefix {
    QString system;
    std::vector<std::string> names;
    bool operator<(const Prefix& o) const {
      return std::tie(system, names) < std::tie(o.system, o.names);
    }
  };

  void onConversationChanged(qint64 id);
  void onConversationCreated(qint64 id);
  void fileAdded(const QString& path, const QString& name, bool attach);
  void fileRefused(const QString& path, const QString& why);
  void removedFromLibrary(const QString& name, const rc::Status& status,
                          const rc::ForgetResult& purged);
  void warm();
  void setState(const std::vector<std::string>& names, State state);
  // warmKept once the engine and the presets are both ready.
  void warmKeptWhenReady();
  // The worker's answer to a pin or unpin of kept-warm prefixes.
  void keptWarm(const std::vector<std::string>& pinned, const std::vector<std::string>& released,
                const QString& system, const QString& error);
  // listLibrary's states: computed on the engine worker thread, then
  // documentStates.
  void queryStates(const std::vector<rc::library::DocumentInfo>& docs);
  std::vector<std::string> attachedNames() const;
  QString systemPrompt() const;

  rc::store::StoreThread* store_;
  rc::ui::EngineHost* engine_;
  ChatController* chat_;
  std::filesystem::path path_;
  std::shared_ptr<Shared> shared_ = std::make_shared<Shared>();
  qint64 conversation_ = 0;
  std::vector<Attached> attached_;
  std::set<Prefix> prefixes_;
  // Kept-warm documents whose prefix this engine has pinned, by name: the
  // system prompt it was pinned under (the pin's key, for its release).
  std::map<std::string, QString> pinnedUnder_;
  std::set<std::string> warming_;  // kept-warm prefixes being computed
  quint64 listSerial_ = 0;
};

}  // namespace rc::gui

Q_DECLARE_METATYPE(rc::gui::DocumentController::Row)
