// DocumentController: documents kept warm (pinned) and what the cache holds
// of each document, for the Documents pane (docs/architecture.md section
// 21). The engine work runs on the engine worker thread
// (EngineHost::runWithEngine); the answers come back queued.
#include <QMetaObject>
#include <algorithm>

#include "chat-controller.h"
#include "chat/engine-host.h"
#include "document-controller.h"
#include "library/document-prompt.h"

namespace rc::gui {
namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

// What the cache holds of a document placed as `placed` in `prompt`.
enum class Held { none, partly, on_disk, in_memory };

Held heldOf(const rc::Engine& engine, const rc::library::DocumentPrefix& prefix) {
  const rc::PlacedDocuments& placed = prefix.placed;
  if (placed.tokens == 0) return Held::none;
  Result<std::vector<int32_t>> tokens = engine.render_chat(prefix.messages);
  if (!tokens.ok()) return Held::none;
  Result<rc::PrefixResidence> where = engine.locate_prefix(tokens.value());
  if (!where.ok()) return Held::none;
  // Every whole page (pool) or block (disk tier) up to the documents' end:
  // a partial one is never cached.
  const int64_t start = placed.start;
  const int64_t end = placed.start + placed.tokens;
  const int64_t page = std::max(where->page_tokens, 1);
  const int64_t pool = where->pool_tokens;
  if (pool > start && pool >= end / page * page) return Held::in_memory;
  const int64_t disk = where->tier_tokens("disk");
  const int64_t block = std::max(where->block_tokens, 1);
  if (disk > start && disk >= end / block * block) return Held::on_disk;
  return pool > start ? Held::partly : Held::none;
}

}  // namespace

void DocumentController::warmKeptWhenReady() {
  if (engine_->hasModel() && chat_->presetsLoaded() && isOpen()) warmKept();
}

void DocumentController::warmKept() {
  if (!isOpen()) return;
  const QString system = chat_->defaultSystemPrompt();
  // Pins made under another default system prompt are released first.
  std::vector<std::pair<std::string, QString>> stale;
  for (const auto& [name, under] : pinnedUnder_)
    if (under != system) stale.emplace_back(name, under);
  std::vector<std::string> kept;
  {
    std::lock_guard<std::mutex> lock(shared_->mu);
    Result<std::vector<rc::library::DocumentInfo>> docs = shared_->lib->list();
    if (docs.ok())
      for (const rc::library::DocumentInfo& d : docs.value())
        if (d.pinned) kept.push_back(d.name);
  }
  if (kept.empty() && stale.empty()) return;
  warming_.insert(kept.begin(), kept.end());
  auto shared = shared_;
  engine_->runWithEngine([this, shared, system, stale, kept](rc::Engine* engine) {
    std::vector<std::string> pinned, released, skipped;
    QString error;
    if (engine) {
      // The library is locked only to lay the prefixes out: the GUI thread
      // reads it for every request, and the engine calls may take seconds.
      for (const auto& [name, under] : stale) {
        Result<rc::library::DocumentPrefix> old = [&] {
          std::lock_guard<std::mutex> lock(shared->mu);
          return rc::library::document_prefix(*engine, *shared->lib, under.toStdString(), {name});
        }();
        if (old.ok() && engine->unpin_warmup({old->messages}).ok()) released.push_back(name);
      }
      Result<std::vector<rc::library::DocumentPrefix>> prefixes = [&] {
        std::lock_guard<std::mutex> lock(shared->mu);
        return rc::library::kept_warm_prefixes(*engine, *shared->lib, system.toStdString(),
                                               &skipped);
      }();
      std::vector<std::vector<rc::ChatMessage>> prompts;
      if (prefixes.ok()) {
        for (const rc::library::DocumentPrefix& p : prefixes.value()) {
          prompts.push_back(p.messages);
          pinned.push_back(p.names.front());
        }
      }
      rc::Status st = prefixes.ok() ? engine->warmup(prompts) : prefixes.status();
      if (!st.ok()) {
        error = qs(st.message());
        pinned.clear();
      }
    }
    for (const std::string& name : skipped)
      error +=
          (error.isEmpty() ? "" : "; ") + tr("%1 is too large to keep warm whole").arg(qs(name));
    QMetaObject::invokeMethod(
        this,
        [=, this] {
          for (const std::string& n : kept) warming_.erase(n);
          keptWarm(pinned, released, system, error);
        },
        Qt::QueuedConnection);
  });
}

void DocumentController::setKeptWarm(const QString& name, bool keep) {
  if (!isOpen()) return;
  const std::string n = name.toStdString();
  {
    // The mark first, here: a listing after this call shows it (a quick
    // write; the library is read on this thread for every request anyway).
    std::lock_guard<std::mutex> lock(shared_->mu);
    if (rc::Status st = shared_->lib->set_pinned(n, keep); !st.ok()) {
      emit keptWarmChanged(name, !keep, qs(st.message()));
      emit libraryChanged();
      return;
    }
  }
  // Released under the system prompt it was pinned with; pinned under the
  // default one.
  auto under = pinnedUnder_.find(n);
  const bool wasPinned = under != pinnedUnder_.end();
  const QString system = !keep && wasPinned ? under->second : chat_->defaultSystemPrompt();
  if (keep) warming_.insert(n);
  emit libraryChanged();  // the mark, and "computing…" while it warms
  if (!keep && !wasPinned) {
    emit keptWarmChanged(name, keep, QString());
    return;
  }
  auto shared = shared_;
  engine_->runWithEngine([this, shared, n, keep, system](rc::Engine* engine) {
    std::vector<std::string> pinned, released;
    rc::Status st;
    if (engine) {
      Result<rc::library::DocumentPrefix> prefix = [&] {
        std::lock_guard<std::mutex> lock(shared->mu);
        return rc::library::document_prefix(*engine, *shared->lib, system.toStdString(), {n});
      }();
      // The engine calls, with the library unlocked.
      if (!prefix.ok()) {
        st = prefix.status();
      } else if (keep && prefix->placed.layout.retrieved) {
        st = rc::Status(rc::StatusCode::too_long,
                        tr("%1 is too large to keep warm whole").arg(qs(n)).toStdString());
      } else if (keep) {
        st = engine->warmup({prefix->messages});
        if (st.ok()) pinned.push_back(n);
      } else {
        st = engine->unpin_warmup({prefix->messages}).status();
        released.push_back(n);
      }
    }
    const QString error = st.ok() ? QString() : qs(st.message());
    QMetaObject::invokeMethod(
        this,
        [=, this] {
          warming_.erase(n);
          keptWarm(pinned, released, system, error);
          emit keptWarmChanged(qs(n), keep, error);
        },
        Qt::QueuedConnection);
  });
}

void DocumentController::keptWarm(const std::vector<std::string>& pinned,
                                  const std::vector<std::string>& released, const QString& system,
                                  const QString& error) {
  for (const std::string& n : released) pinnedUnder_.erase(n);
  for (const std::string& n : pinned) pinnedUnder_[n] = system;
  if (!error.isEmpty()) emit info(tr("Documents not kept warm: %1").arg(error));
  emit libraryChanged();
}

void DocumentController::queryStates(const std::vector<rc::library::DocumentInfo>& docs) {
  // Computing (a chip or a kept-warm prefix says so), else what the cache
  // holds of the prefixes each document was sent, warmed or pinned in.
  std::map<QString, std::vector<Prefix>> candidates;
  std::map<QString, QString> states;
  for (const rc::library::DocumentInfo& d : docs) {
    const QString name = qs(d.name);
    if (warming_.count(d.name)) states[name] = tr("computing…");
    for (const Attached& a : attached_) {
      if (a.name == name && a.state == State::Computing) states[name] = tr("computing…");
    }
    // Alone after no system prompt and after the default one (what a new
    // chat sends, and what survives a restart on disk), as kept warm, and
    // as sent or warmed in this session.
    std::vector<Prefix>& c = candidates[name];
    c.push_back({QString(), {d.name}});
    if (!chat_->defaultSystemPrompt().isEmpty())
      c.push_back({chat_->defaultSystemPrompt(), {d.name}});
    if (auto p = pinnedUnder_.find(d.name); p != pinnedUnder_.end())
      c.push_back({p->second, {d.name}});
    for (const Prefix& p : prefixes_) {
      if (std::find(p.names.begin(), p.names.end(), d.name) != p.names.end()) c.push_back(p);
    }
  }
  auto shared = shared_;
  engine_->runWithEngine([this, shared, candidates, states](rc::Engine* engine) mutable {
    for (const auto& [name, prefixes] : candidates) {
      if (states.count(name)) continue;
      Held best = Held::none;
      for (const Prefix& p : prefixes) {
        if (!engine) break;
        Result<rc::library::DocumentPrefix> placed = [&] {
          std::lock_guard<std::mutex> lock(shared->mu);
          return rc::library::document_prefix(*engine, *shared->lib, p.system.toStdString(),
                                              p.names);
        }();
        if (placed.ok()) best = std::max(best, heldOf(*engine, placed.value()));
      }
      states[name] = best == Held::in_memory ? tr("in memory")
                     : best == Held::on_disk ? tr("on disk")
                     : best == Held::partly  ? tr("partly in memory")
                                             : tr("not in memory");
    }
    QMetaObject::invokeMethod(
        this, [this, states] { emit documentStates(states); }, Qt::QueuedConnection);
  });
}

}  // namespace rc::gui
