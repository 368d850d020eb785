// ChatController: the conversation list, presets, export and the lookups
// the cache panel asks for (which conversations share a prefix, which
// tokens a message's prompt renders to).

#include <algorithm>
#include <map>

#include "chat-controller-internal.h"
#include "chat-controller.h"
#include "radixchat/private-files.h"

namespace rc::gui {

using rc::store::Id;
using rc::store::Store;

namespace {

// Caps the branches a prefix lookup renders: it runs on the worker thread,
// but thousands of renders would delay the next reply.
constexpr size_t kMaxPrefixCandidates = 4000;

struct Library {
  std::vector<rc::ui::ConversationRow> conversations;
  std::vector<PresetRow> presets;
  qint64 defaultPreset = 0;
  QString error;
};

// The presets and which one is the default, into l. On failure l.error
// says why and false is returned (the caller decides what else to load).
bool readPresets(Store& s, Library& l) {
  Result<std::vector<rc::store::Preset>> presets = s.list_presets();
  if (!presets.ok()) {
    l.error = failure(QObject::tr("Cannot read the presets"), presets.status());
    return false;
  }
  for (const auto& p : presets.value()) l.presets.push_back(toUiPreset(p));
  Result<std::optional<std::string>> def = s.get_setting(kDefaultPresetKey);
  if (def.ok() && def.value()) l.defaultPreset = qstr(*def.value()).toLongLong();
  return true;
}

// Every branch tip of every conversation with its thread (store thread):
// a depth-first walk over each message forest, at most kMaxPrefixCandidates.
std::vector<rc::ui::PrefixCandidate> branchTips(Store& s) {
  std::vector<rc::ui::PrefixCandidate> out;
  Result<std::vector<rc::store::Conversation>> list = s.list_conversations();
  if (!list.ok()) return out;
  for (const rc::store::Conversation& c : list.value()) {
    std::vector<std::optional<Id>> stack{std::nullopt};
    while (!stack.empty() && out.size() < kMaxPrefixCandidates) {
      const std::optional<Id> parent = stack.back();
      stack.pop_back();
      Result<std::vector<rc::store::Message>> kids = s.children(c.id, parent);
      if (!kids.ok()) break;
      if (kids->empty() && parent) {
        Result<std::vector<rc::store::Message>> path = s.path_to(*parent);
        if (path.ok()) {
          out.push_back(
              {c.id, *parent, qstr(c.title), toEngineMessages(c.system_prompt, path.value())});
        }
      }
      for (const rc::store::Message& k : kids.value()) stack.push_back(k.id);
    }
  }
  return out;
}

// A conversation's deletion: its branches (what the cache purges) and the
// others' (what it keeps), read before the rows go.
struct Deletion {
  rc::Status status;
  std::vector<rc::ui::PrefixCandidate> gone;
  std::vector<rc::ui::PrefixCandidate> kept;
  // The documents each conversation was sent with, by id (none: absent).
  std::map<qint64, std::vector<std::string>> documents;
};

}  // namespace

void ChatController::start() {
  storeCall<Library>(
      [](Store& s) {
        Library l;
        Result<std::vector<rc::store::Conversation>> list = s.list_conversations();
        if (!list.ok()) {
          l.error = failure(QObject::tr("Cannot read the conversations"), list.status());
          return l;
        }
        for (const auto& c : list.value()) l.conversations.push_back(toUiConversation(c));
        readPresets(s, l);  // the conversations are still shown when this fails
        return l;
      },
      [this](Library l) {
        if (!l.error.isEmpty()) emit errorOccurred(l.error);
        list_.setConversations(std::move(l.conversations));
        presets_ = std::move(l.presets);
        defaultPresetId_ = l.defaultPreset;
        presetsLoaded_ = true;
        emit presetsChanged();
        newConversation();
        if (warmWanted_) warmPresets();
      });
  // The engine may become ready before or after the presets are read.
  connect(engine_, &rc::ui::EngineHost::modelReady, this,
          [this](const rc::ui::ModelDescription& m) {
            adoptModelSampling(m.sampling);
            if (presetsLoaded_) {
              warmPresets();
            } else {
              warmWanted_ = true;
            }
          });
}

void ChatController::adoptModelSampling(const rc::RecommendedSampling& recommended) {
  // A chat not yet started follows the new model's defaults; a saved
  // conversation keeps its own settings.
  const ChatSampling defaults = withRecommended(ChatSampling{}, recommended);
  if (conversationId_ == 0 && sampling_ == defaultSampling_) sampling_ = defaults;
  defaultSampling_ = defaults;
  defaultSamplingNote_ = recommended.empty()
                             ? QString()
                             : tr("the model's recommendation: %1")
                                   .arg(QString::fromStdString(rc::describe_sampling(recommended)));
}

void ChatController::refreshList() {
  const std::string query = utf8(search_);
  const std::optional<std::vector<qint64>> filter = filter_;
  storeCall<std::vector<rc::ui::ConversationRow>>(
      [query, filter](Store& s) {
        std::vector<rc::ui::ConversationRow> rows;
        if (filter) {
          for (qint64 id : *filter) {
            Result<rc::store::Conversation> c = s.get_conversation(id);
            if (c.ok()) rows.push_back(toUiConversation(c.value()));
          }
          return rows;
        }
        Result<std::vector<rc::store::Conversation>> list = s.search_conversations(query);
        if (list.ok()) {
          for (const auto& c : list.value()) rows.push_back(toUiConversation(c));
        }
        return rows;
      },
      [this](std::vector<rc::ui::ConversationRow> rows) {
        list_.setConversations(std::move(rows));
      });
}

void ChatController::setSearchText(const QString& text) {
  search_ = text;
  refreshList();
}

void ChatController::openSearchResult(qint64 conversationId) {
  const QString text = search_;
  const std::string query = utf8(text);
  if (query.empty()) return;
  struct Hit {
    Loaded loaded;
    qint64 message = 0;
  };
  storeCall<Hit>(
      [query, conversationId](Store& s) {
        Hit h;
        rc::store::Id id = conversationId;
        if (id <= 0) {
          Result<std::vector<rc::store::Conversation>> first = s.search_conversations(query, 1);
          if (!first.ok() || first.value().empty()) return h;
          id = first.value().front().id;
        }
        Result<std::optional<rc::store::Id>> m = s.first_matching_message(id, query);
        if (m.ok() && m.value()) {
          h.message = *m.value();
          // Another branch holds it: open that branch at its newest tip.
          Result<std::vector<rc::store::Message>> thread = s.current_thread(id);
          const bool shown =
              thread.ok() &&
              std::any_of(thread.value().begin(), thread.value().end(),
                          [&](const rc::store::Message& x) { return x.id == h.message; });
          Result<rc::store::Id> leaf = s.newest_leaf(h.message);
          if (!shown && leaf.ok()) (void)s.set_current_leaf(id, leaf.value());
        }
        h.loaded = readConversation(s, id);
        return h;
      },
      [this, text](Hit h) {
        if (h.loaded.id == 0 && h.loaded.error.isEmpty()) return;  // nothing matched
        applyLoaded(h.loaded);
        if (h.message > 0 && h.loaded.error.isEmpty()) emit searchHitShown(h.message, text);
      });
}

void ChatController::setListFilter(std::optional<std::vector<qint64>> ids) {
  filter_ = std::move(ids);
  refreshList();
}

void ChatController::renameConversation(qint64 id, const QString& title) {
  const std::string t = utf8(title.trimmed());
  if (t.empty()) return;
  storeCall<rc::Status>([id, t](Store& s) { return s.rename_conversation(id, t); },
                        [this, id, title](rc::Status st) {
                          if (!st.ok()) {
                            emit errorOccurred(failure(tr("Cannot rename"), st));
                            return;
                          }
                          if (id == conversationId_) {
                            title_ = title.trimmed();
                            emit conversationChanged(id, title_);
                          }
                          refreshList();
                        });
}

void ChatController::deleteConversation(qint64 id) {
  if (gen_.tag != 0 && gen_.conversationId == id) stop();
  storeCall<Deletion>(
      [id](Store& s) {
        Deletion d;
        for (rc::ui::PrefixCandidate& b : branchTips(s)) {
          if (!d.documents.count(b.conversationId)) {
            Result<std::vector<std::string>> names = s.conversation_documents(b.conversationId);
            if (names.ok() && !names->empty()) d.documents[b.conversationId] = names.value();
          }
          (b.conversationId == id ? d.gone : d.kept).push_back(std::move(b));
        }
        d.status = s.delete_conversation(id);
        return d;
      },
      [this, id](Deletion d) {
        if (!d.status.ok()) {
          emit errorOccurred(failure(tr("Cannot delete"), d.status));
          return;
        }
        // Their prompts held their documents: render them so (section 21).
        for (auto* branches : {&d.gone, &d.kept}) {
          for (rc::ui::PrefixCandidate& b : *branches) {
            auto names = d.documents.find(b.conversationId);
            if (names == d.documents.end() || !namedDocumentSource_) continue;
            b.documents = [source = namedDocumentSource_, names = names->second](
                              const std::vector<rc::ChatMessage>& m) { return source(names, m); };
          }
        }
        // Deletion that deletes: the KV only this conversation used leaves
        // the pool and the disk and Redis tiers (docs/architecture.md section 8).
        if (engine_->hasModel() && !d.gone.empty()) engine_->forget(d.gone, d.kept);
        if (id == conversationId_) newConversation();
        refreshList();
      });
}

void ChatController::refreshPresets() {
  storeCall<Library>(
      [](Store& s) {
        Library l;
        readPresets(s, l);
        return l;
      },
      [this](Library l) {
        if (!l.error.isEmpty()) {
          emit errorOccurred(l.error);
          return;
        }
        presets_ = std::move(l.presets);
        defaultPresetId_ = l.defaultPreset;
        emit presetsChanged();
      });
}

void ChatController::savePreset(const QString& name, const QString& text) {
  const std::string n = utf8(name.trimmed());
  const std::string t = utf8(text);
  storeCall<rc::Status>(
      [n, t](Store& s) {
        Result<Id> id = s.create_preset(n, t);
        return id.ok() ? rc::Status() : id.status();
      },
      [this, text](rc::Status st) {
        if (!st.ok()) {
          emit errorOccurred(failure(tr("Cannot save the preset"), st));
          return;
        }
        refreshPresets();
        // Cached now, so the first chat that uses it already hits.
        if (engine_->hasModel()) engine_->warmup({text});
      });
}

void ChatController::deletePreset(qint64 id) {
  const bool wasDefault = id == defaultPresetId_;
  storeCall<rc::Status>(
      [id, wasDefault](Store& s) {
        rc::Status st = s.delete_preset(id);
        if (st.ok() && wasDefault) st = s.erase_setting(kDefaultPresetKey);
        return st;
      },
      [this, id](rc::Status st) {
        if (!st.ok()) emit errorOccurred(failure(tr("Cannot delete the preset"), st));
        if (presetId_ == id) presetId_.reset();
        refreshPresets();
      });
}

void ChatController::setDefaultPreset(qint64 id) {
  storeCall<rc::Status>(
      [id](Store& s) {
        return id > 0 ? s.set_setting(kDefaultPresetKey, std::to_string(id))
                      : s.erase_setting(kDefaultPresetKey);
      },
      [this](rc::Status st) {
        if (!st.ok()) emit errorOccurred(failure(tr("Cannot save the setting"), st));
        refreshPresets();
      });
}

void ChatController::warmPresets() {
  warmWanted_ = false;
  if (!engine_->hasModel()) return;
  QStringList prompts;
  for (const PresetRow& p : presets_) prompts << p.text;
  if (!prompts.isEmpty()) engine_->warmup(prompts);
}

void ChatController::exportConversation(qint64 id, const QString& format, const QString& path) {
  const bool json = format == QLatin1String("json");
  const std::string file = path.toStdString();
  storeCall<QString>(
      [id, json, file](Store& s) -> QString {
        Result<std::string> text = json ? s.export_json(id) : s.export_markdown(id);
        if (!text.ok()) return failure(QObject::tr("Cannot export"), text.status());
        const Status written = write_private_file(file, text.value());
        if (!written.ok()) return QObject::tr("Cannot write %1").arg(qstr(file));
        return {};
      },
      [this, path](QString error) {
        if (error.isEmpty()) {
          emit exported(path);
        } else {
          emit errorOccurred(error);
        }
      });
}

void ChatController::requestPromptTokens(qint64 messageId) {
  struct Thread {
    std::vector<rc::ChatMessage> messages;
    QString error;
  };
  storeCall<Thread>(
      [messageId](Store& s) {
        Thread t;
        Result<rc::store::Message> m = s.get_message(messageId);
        Result<std::vector<rc::store::Message>> path = s.path_to(messageId);
        if (!m.ok() || !path.ok()) {
          t.error =
              failure(QObject::tr("Cannot read the message"), m.ok() ? path.status() : m.status());
          return t;
        }
        Result<rc::store::Conversation> c = s.get_conversation(m->conversation_id);
        t.messages = toEngineMessages(c.ok() ? c->system_prompt : std::string(), path.value());
        return t;
      },
      [this, messageId](Thread t) {
        if (!t.error.isEmpty()) {
          emit errorOccurred(t.error);
          return;
        }
        promptMessage_ = messageId;
        promptTag_ = engine_->renderThread(t.messages);
      });
}

void ChatController::findConversationsWithPrefix(const std::vector<int32_t>& tokens) {
  storeCall<std::vector<rc::ui::PrefixCandidate>>(
      [](Store& s) { return branchTips(s); },
      [this, tokens](std::vector<rc::ui::PrefixCandidate> candidates) {
        prefixTag_ = engine_->matchPrefix(tokens, candidates);
      });
}

}  // namespace rc::gui
