#include "document-controller.h"

#include <QFileInfo>
#include <QMetaObject>
#include <algorithm>

#include "chat-controller.h"
#include "chat/engine-host.h"
#include "library/document-prompt.h"

namespace rc::gui {
namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

// Retrieval looks at the question and the one before it (as the CLI and the
// server do): the last two user messages.
std::string questionOf(const std::vector<rc::ChatMessage>& messages) {
  std::string q;
  int users = 0;
  for (auto it = messages.rbegin(); it != messages.rend() && users < 2; ++it) {
    if (it->role != "user") continue;
    q += (q.empty() ? "" : "\n") + it->content;
    ++users;
  }
  return q;
}

}  // namespace

DocumentController::DocumentController(rc::store::StoreThread* store, rc::ui::EngineHost* engine,
                                       ChatController* chat, std::filesystem::path libraryPath,
                                       QObject* parent)
    : QObject(parent), store_(store), engine_(engine), chat_(chat), path_(std::move(libraryPath)) {
  qRegisterMetaType<rc::gui::DocumentController::Row>();
  connect(chat_, &ChatController::conversationChanged, this,
          [this](qint64 id, const QString&) { onConversationChanged(id); });
  connect(chat_, &ChatController::conversationCreated, this,
          &DocumentController::onConversationCreated);
  // Kept-warm documents are pinned once a model is ready and the default
  // system prompt is known; a new engine holds none of the old one's pins.
  connect(chat_, &ChatController::presetsChanged, this, &DocumentController::warmKeptWhenReady);
  connect(engine_, &rc::ui::EngineHost::modelReady, this, &DocumentController::warmKeptWhenReady);
  connect(engine_, &rc::ui::EngineHost::engineChanged, this, [this] { pinnedUnder_.clear(); });
  chat_->setDocumentSource(
      [this](const std::vector<rc::ChatMessage>& messages) { return documentSet(messages); });
  // A deleted conversation's prompts, as they were sent (documents since
  // removed from the library are left out: their purge removed them).
  chat_->setNamedDocumentSource([shared = shared_](const std::vector<std::string>& names,
                                                   const std::vector<rc::ChatMessage>& messages) {
    std::lock_guard<std::mutex> lock(shared->mu);
    if (!shared->lib) return rc::DocumentSet{};
    Result<std::vector<rc::library::DocumentInfo>> listed = shared->lib->list();
    if (!listed.ok()) return rc::DocumentSet{};
    std::vector<std::string> present;
    for (const std::string& n : names) {
      if (std::any_of(listed->begin(), listed->end(),
                      [&](const rc::library::DocumentInfo& d) { return d.name == n; }))
        present.push_back(n);
    }
    Result<rc::DocumentSet> set =
        rc::library::document_set(*shared->lib, present, questionOf(messages));
    return set.ok() ? std::move(set.value()) : rc::DocumentSet{};
  });
}

DocumentController::~DocumentController() = default;

bool DocumentController::open() {
  Result<std::unique_ptr<rc::library::Library>> lib = rc::library::Library::open(path_);
  if (!lib.ok()) {
    emit errorOccurred(
        tr("The document library cannot be opened: %1").arg(qs(lib.status().message())));
    return false;
  }
  std::lock_guard<std::mutex> lock(shared_->mu);
  shared_->lib = std::move(lib.value());
  return true;
}

bool DocumentController::isOpen() const {
  std::lock_guard<std::mutex> lock(shared_->mu);
  return shared_->lib != nullptr;
}

std::vector<rc::ui::DocumentChip> DocumentController::chips() const {
  std::vector<rc::ui::DocumentChip> out;
  for (const Attached& a : attached_) {
    rc::ui::DocumentChip c;
    c.name = a.name;
    c.state = a.state == State::Computing ? tr("computing…")
              : a.state == State::Ready   ? tr("ready")
                                          : QString();
    c.tooltip = a.state == State::Computing
                    ? tr("Adding it to the library and computing its KV cache")
                    : tr("Every question in this conversation is answered from it");
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<std::string> DocumentController::attachedNames() const {
  std::vector<std::string> names;
  for (const Attached& a : attached_) {
    if (a.pendingPath.isEmpty()) names.push_back(a.name.toStdString());
  }
  return names;
}

QString DocumentController::systemPrompt() const { return chat_->systemPrompt(); }

void DocumentController::addFiles(const QStringList& paths, bool attach) {
  if (paths.isEmpty()) return;
  if (!isOpen()) {
    emit errorOccurred(tr("The document library is not open."));
    return;
  }
  if (attach) {
    for (const QString& p : paths)
      attached_.push_back({QFileInfo(p).fileName(), State::Computing, p});
    emit attachedChanged();
  }
  auto shared = shared_;
  engine_->runWithEngine([this, shared, paths, attach](rc::Engine* engine) {
    for (const QString& p : paths) {
      Result<rc::library::Added> added =
          rc::Status(rc::StatusCode::invalid_argument,
                     tr("Cannot add %1: no model is loaded (the library counts its tokens with "
                        "the model's tokenizer).")
                         .arg(QFileInfo(p).fileName())
                         .toStdString());
      if (engine) {
        std::lock_guard<std::mutex> lock(shared->mu);
        added = shared->lib->add_file(p.toStdString(), rc::library::engine_counter(*engine));
      }
      // Queued to the GUI thread; `this` outlives the worker's tasks
      // (MainWindow destroys the engine host first).
      if (added.ok()) {
        QMetaObject::invokeMethod(
            this, [this, p, name = qs(added->info.name), attach] { fileAdded(p, name, attach); },
            Qt::QueuedConnection);
      } else {
        QMetaObject::invokeMethod(
            this, [this, p, why = qs(added.status().message())] { fileRefused(p, why); },
            Qt::QueuedConnection);
      }
    }
    if (attach)
      QMetaObject::invokeMethod(
          this, [this] { warm(); }, Qt::QueuedConnection);
  });
}

void DocumentController::fileAdded(const QString& path, const QString& name, bool attach) {
  emit libraryChanged();
  if (!attach) return;
  auto it = std::find_if(attached_.begin(), attached_.end(),
                         [&](const Attached& a) { return a.pendingPath == path; });
  if (it == attached_.end()) return;  // detached meanwhile
  const bool twice = std::any_of(attached_.begin(), attached_.end(), [&](const Attached& a) {
    return a.pendingPath.isEmpty() && a.name == name;
  });
  if (twice) {
    attached_.erase(it);  // the same text: already attached
  } else {
    it->name = name;
    it->pendingPath.clear();
    if (conversation_ != 0) {
      const qint64 conv = conversation_;
      store_->post([conv, n = name.toStdString()](rc::store::Store& s) {
        (void)s.attach_document(conv, n);
      });
    }
  }
  emit attachedChanged();
}

void DocumentController::fileRefused(const QString& path, const QString& why) {
  const auto gone = std::remove_if(attached_.begin(), attached_.end(),
                                   [&](const Attached& a) { return a.pendingPath == path; });
  if (gone != attached_.end()) {
    attached_.erase(gone, attached_.end());
    emit attachedChanged();
  }
  emit errorOccurred(why);
}

void DocumentController::warm() {
  const std::vector<std::string> names = attachedNames();
  if (names.empty()) return;
  const QString system = systemPrompt();
  prefixes_.insert({system, names});
  auto shared = shared_;
  engine_->runWithEngine([this, shared, system, names](rc::Engine* engine) {
    QString error;
    if (engine) {
      Result<rc::library::DocumentPrefix> placed = [&] {
        std::lock_guard<std::mutex> lock(shared->mu);
        return rc::library::document_prefix(*engine, *shared->lib, system.toStdString(), names);
      }();
      // Retrieved chunks depend on each question: nothing to warm ahead.
      if (placed.ok() && !placed->placed.layout.retrieved) {
        Result<std::vector<int32_t>> tokens = engine->render_chat(placed->messages);
        Result<std::vector<float>> done = tokens.ok() ? engine->last_logits(tokens.value())
                                                      : Result<std::vector<float>>(tokens.status());
        if (!done.ok()) error = qs(done.status().message());
      } else if (!placed.ok()) {
        error = qs(placed.status().message());
      }
    }
    QMetaObject::invokeMethod(
        this,
        [this, names, error] {
          if (!error.isEmpty()) emit info(tr("Documents not cached ahead: %1").arg(error));
          setState(names, State::Ready);
        },
        Qt::QueuedConnection);
  });
}

void DocumentController::setState(const std::vector<std::string>& names, State state) {
  for (Attached& a : attached_) {
    if (a.pendingPath.isEmpty() &&
        std::find(names.begin(), names.end(), a.name.toStdString()) != names.end())
      a.state = state;
  }
  emit attachedChanged();
}

void DocumentController::detach(const QString& name) {
  const auto gone = std::remove_if(attached_.begin(), attached_.end(),
                                   [&](const Attached& a) { return a.name == name; });
  if (gone == attached_.end()) return;
  attached_.erase(gone, attached_.end());
  if (conversation_ != 0) {
    store_->post([conv = conversation_, n = name.toStdString()](rc::store::Store& s) {
      (void)s.detach_document(conv, n);
    });
  }
  emit attachedChanged();
}

void DocumentController::onConversationChanged(qint64 id) {
  if (id == conversation_ && id != 0) return;
  conversation_ = id;
  attached_.clear();
  emit attachedChanged();
  if (id == 0) return;
  store_->post([this, id](rc::store::Store& s) {
    Result<std::vector<std::string>> names = s.conversation_documents(id);
    if (!names.ok()) return;
    QMetaObject::invokeMethod(
        this,
        [this, id, names = std::move(names.value())] {
          if (id != conversation_) return;
          for (const std::string& n : names) attached_.push_back({qs(n), State::Idle, {}});
          emit attachedChanged();
        },
        Qt::QueuedConnection);
  });
}

void DocumentController::onConversationCreated(qint64 id) {
  // The chips of the new chat belong to it from its first message on.
  conversation_ = id;
  std::vector<std::string> names = attachedNames();
  if (names.empty()) return;
  store_->post([id, names](rc::store::Store& s) {
    for (const std::string& n : names) (void)s.attach_document(id, n);
  });
}

rc::DocumentSet DocumentController::documentSet(const std::vector<rc::ChatMessage>& messages) {
  const std::vector<std::string> names = attachedNames();
  if (names.empty() || !isOpen()) return {};
  const QString system = !messages.empty() && messages.front().role == "system"
                             ? qs(messages.front().content)
                             : QString();
  prefixes_.insert({system, names});
  Result<rc::DocumentSet> set = [&] {
    std::lock_guard<std::mutex> lock(shared_->mu);
    return rc::library::document_set(*shared_->lib, names, questionOf(messages));
  }();
  if (!set.ok()) {
    emit errorOccurred(tr("The documents cannot be read: %1").arg(qs(set.status().message())));
    return {};
  }
  return std::move(set.value());
}

void DocumentController::listLibrary(const QString& query) {
  if (!isOpen()) return;
  std::vector<rc::library::DocumentInfo> docs;
  {
    std::lock_guard<std::mutex> lock(shared_->mu);
    Result<std::vector<rc::library::DocumentInfo>> list = shared_->lib->list();
    if (!list.ok()) {
      emit errorOccurred(qs(list.status().message()));
      return;
    }
    docs = std::move(list.value());
    if (!query.trimmed().isEmpty()) {
      // Documents with a matching chunk, best first.
      Result<std::vector<rc::library::Chunk>> hits = shared_->lib->search(query.toStdString(), 64);
      std::vector<rc::library::Chunk> chunks;
      if (hits.ok()) chunks = std::move(hits.value());
      std::vector<rc::library::DocumentInfo> found;
      for (const rc::library::Chunk& c : chunks) {
        auto d = std::find_if(docs.begin(), docs.end(), [&](const rc::library::DocumentInfo& i) {
          return i.name == c.document;
        });
        const bool listed = std::any_of(found.begin(), found.end(),
                                        [&](const auto& i) { return i.name == c.document; });
        if (d != docs.end() && !listed) found.push_back(*d);
      }
      docs = std::move(found);
    }
  }
  const quint64 serial = ++listSerial_;
  store_->post([this, docs, serial](rc::store::Store& s) {
    std::vector<Row> rows;
    for (const rc::library::DocumentInfo& d : docs) {
      Row r{d, {}};
      Result<std::vector<rc::store::Conversation>> users = s.conversations_with_document(d.name);
      if (users.ok()) {
        for (const rc::store::Conversation& c : users.value()) r.conversations << qs(c.title);
      }
      rows.push_back(std::move(r));
    }
    QMetaObject::invokeMethod(
        this,
        [this, rows, serial] {
          if (serial == listSerial_) emit libraryListed(rows);
        },
        Qt::QueuedConnection);
  });
  queryStates(docs);
}

void DocumentController::removeFromLibrary(const QString& name) {
  if (!isOpen()) return;
  auto shared = shared_;
  engine_->runWithEngine([this, shared, name](rc::Engine* engine) {
    // Deletion that deletes (docs/architecture.md section 21): the engine
    // finds the document by its text in the pool and the tiers, whatever
    // prompts held it, before it leaves the library; a purge that fails
    // keeps it, so the user can try again.
    const std::string n = name.toStdString();
    rc::ForgetResult purged;
    rc::Status st;
    {
      std::lock_guard<std::mutex> lock(shared->mu);
      st = shared->lib->remove(n, [&](const rc::library::DocumentInfo&) -> rc::Status {
        if (!engine) return rc::Status();
        Result<rc::library::Document> doc = shared->lib->get(n);
        if (!doc.ok()) return doc.status();
        Result<rc::ForgetResult> r = engine->forget_document(doc.value().text);
        if (!r.ok()) return r.status();
        purged = r.value();
        return rc::Status();
      });
    }
    QMetaObject::invokeMethod(
        this, [this, name, st, purged] { removedFromLibrary(name, st, purged); },
        Qt::QueuedConnection);
  });
}

void DocumentController::removedFromLibrary(const QString& name, const rc::Status& status,
                                            const rc::ForgetResult& purged) {
  if (!status.ok()) {
    emit errorOccurred(tr("Cannot remove %1: %2").arg(name, qs(status.message())));
    emit removed(name, 0, 0, qs(status.message()));
    return;
  }
  store_->post([n = name.toStdString()](rc::store::Store& s) { (void)s.forget_document(n); });
  pinnedUnder_.erase(name.toStdString());  // forget_document released its pin
  for (auto it = prefixes_.begin(); it != prefixes_.end();) {
    const bool in =
        std::find(it->names.begin(), it->names.end(), name.toStdString()) != it->names.end();
    it = in ? prefixes_.erase(it) : std::next(it);
  }
  const auto chip = std::remove_if(attached_.begin(), attached_.end(),
                                   [&](const Attached& a) { return a.name == name; });
  if (chip != attached_.end()) {
    attached_.erase(chip, attached_.end());
    emit attachedChanged();
  }
  emit libraryChanged();
  emit removed(name, purged.tree_tokens, purged.tier_blocks, QString());
}

}  // namespace rc::gui
