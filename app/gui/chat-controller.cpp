// ChatController: conversations on screen, turns, streaming and branches.
// Lists, presets, export and cache lookups are in chat-controller-library.cpp.
#include "chat-controller.h"

#include <QRandomGenerator>

#include "chat-controller-internal.h"
#include "remote-chat-client.h"

namespace rc::gui {

using rc::store::Id;
using rc::store::Store;

QString failure(const QString& what, const rc::Status& status) {
  return QStringLiteral("%1: %2").arg(what, qstr(status.message()));
}

ChatController::Loaded ChatController::readConversation(Store& s, qint64 id) {
  Loaded out;
  Result<rc::store::Conversation> c = s.get_conversation(id);
  if (!c.ok()) {
    out.error = failure(QObject::tr("Cannot open the conversation"), c.status());
    return out;
  }
  out.id = c->id;
  out.title = qstr(c->title);
  out.systemPrompt = qstr(c->system_prompt);
  out.presetId = c->preset_id;
  out.sampling = toUiSampling(c->sampling);
  Result<std::vector<rc::store::Message>> thread = s.current_thread(id);
  if (!thread.ok()) {
    out.error = failure(QObject::tr("Cannot read the conversation"), thread.status());
    return out;
  }
  for (const rc::store::Message& m : thread.value()) {
    rc::ui::ChatMessageRow row;
    row.id = m.id;
    row.parentId = m.parent_id.value_or(0);
    row.role = toUiRole(m.role);
    row.text = qstr(m.content);
    row.model = qstr(m.model);
    if (m.metrics) row.metrics = toUiMetrics(*m.metrics);
    Result<std::vector<rc::store::Message>> siblings = s.children(id, m.parent_id);
    if (siblings.ok()) {
      row.branchCount = static_cast<int>(siblings->size());
      for (size_t i = 0; i < siblings->size(); ++i) {
        if ((*siblings)[i].id == m.id) row.branchIndex = static_cast<int>(i);
      }
    }
    out.rows.push_back(std::move(row));
  }
  return out;
}

ChatController::ChatController(rc::store::StoreThread* store, rc::ui::EngineHost* engine,
                               QObject* parent)
    : QObject(parent), store_(store), engine_(engine) {
  connect(engine_, &rc::ui::EngineHost::textArrived, this, &ChatController::onText);
  connect(engine_, &rc::ui::EngineHost::generationFinished, this, &ChatController::onFinished);
  connect(engine_, &rc::ui::EngineHost::threadRendered, this,
          [this](quint64 tag, const std::vector<int32_t>& tokens) {
            if (tag == promptTag_) emit promptTokensReady(promptMessage_, tokens);
          });
  connect(engine_, &rc::ui::EngineHost::prefixMatched, this,
          [this](quint64 tag, const std::vector<rc::ui::PrefixMatch>& matches) {
            if (tag == prefixTag_) emit prefixMatches(matches);
          });
}

ChatController::~ChatController() {
  // A reply still streaming keeps what it has, marked stopped.
  if (gen_.tag != 0) {
    stop();
    rc::store::MessageMetrics m;
    m.finish_reason = "cancelled";
    const Id id = gen_.messageId;
    const std::string text = utf8(gen_.text);
    store_->post([id, text, m](Store& s) { (void)s.update_message(id, text, m); });
  }
  // Every task that calls back into `this` has run once this returns.
  store_->wait_idle();
}

void ChatController::waitForStore() { store_->wait_idle(); }

void ChatController::setRemote(RemoteChatClient* client) {
  if (client == remote_) return;
  stop();  // its finish still arrives: each source keeps its connections
  remote_ = client;
  if (!client) return;
  connect(client, &RemoteChatClient::textArrived, this, &ChatController::onText,
          Qt::UniqueConnection);
  connect(client, &RemoteChatClient::generationFinished, this, &ChatController::onFinished,
          Qt::UniqueConnection);
}

bool ChatController::hasModel() const {
  return remote_ ? remote_->isConnected() : engine_->hasModel();
}

QString ChatController::modelName() const {
  return remote_ ? remote_->server().model : engine_->model().name;
}

void ChatController::applyLoaded(const Loaded& loaded) {
  if (!loaded.error.isEmpty()) {
    emit errorOccurred(loaded.error);
    return;
  }
  conversationId_ = loaded.id;
  title_ = loaded.title;
  systemPrompt_ = loaded.systemPrompt;
  presetId_ = loaded.presetId;
  sampling_ = loaded.sampling;
  std::vector<rc::ui::ChatMessageRow> rows = loaded.rows;
  // DeepSeek-R1 replies start inside their <think> block (the prompt opened it).
  const bool opensInReasoning = !remote_ && engine_->hasModel() &&
                                engine_->model().chatTemplate == QLatin1String("deepseek-r1");
  // The reply streaming now is saved only when it ends: show its text so far.
  for (rc::ui::ChatMessageRow& r : rows) {
    r.opensInReasoning = opensInReasoning && r.role == rc::ui::ChatRole::Assistant;
    if (gen_.tag != 0 && r.id == gen_.messageId) {
      r.text = gen_.text;
      r.streaming = true;
    }
  }
  chat_.setThread(loaded.id, std::move(rows));
  emit conversationChanged(conversationId_, title_);
}

QString ChatController::defaultSystemPrompt() const {
  for (const PresetRow& p : presets_)
    if (p.id == defaultPresetId_) return p.text;
  return QString();
}

void ChatController::newConversation() {
  // The conversation is written to the store with its first message, so
  // pressing Ctrl+N repeatedly leaves no empty chats behind.
  conversationId_ = 0;
  title_.clear();
  sampling_ = defaultSampling_;
  systemPrompt_ = defaultSystemPrompt();
  presetId_.reset();
  for (const PresetRow& p : presets_) {
    if (p.id == defaultPresetId_) presetId_ = p.id;
  }
  chat_.clear();
  emit conversationChanged(0, title_);
}

void ChatController::selectConversation(qint64 id) {
  if (id == conversationId_ || id <= 0) return;
  storeCall<Loaded>([id](Store& s) { return readConversation(s, id); },
                    [this](Loaded loaded) { applyLoaded(loaded); });
}

void ChatController::openBranch(qint64 conversationId, qint64 leafId) {
  storeCall<Loaded>(
      [conversationId, leafId](Store& s) {
        rc::Status st = s.set_current_leaf(conversationId, leafId);
        if (!st.ok()) {
          Loaded l;
          l.error = failure(QObject::tr("Cannot open that branch"), st);
          return l;
        }
        return readConversation(s, conversationId);
      },
      [this](Loaded loaded) { applyLoaded(loaded); });
}

void ChatController::send(const QString& text) {
  const QString trimmed = text.trimmed();
  if (trimmed.isEmpty() || isGenerating() || busyTurn_) return;
  if (!hasModel()) {
    emit errorOccurred(remote_
                           ? tr("Not connected to the server: connect again from the Model menu.")
                           : tr("No model is loaded: open one from the Model menu."));
    return;
  }
  std::optional<qint64> parent;
  if (!chat_.rows().empty()) parent = chat_.rows().back().id;
  startTurn(parent, trimmed, std::nullopt);
}

void ChatController::regenerate(qint64 assistantMessageId) {
  const rc::ui::ChatMessageRow* row = chat_.message(assistantMessageId);
  if (!row || row->role != rc::ui::ChatRole::Assistant || row->parentId == 0) return;
  if (isGenerating() || busyTurn_ || !hasModel()) return;
  startTurn(std::nullopt, std::nullopt, row->parentId);
}

void ChatController::editMessage(qint64 userMessageId, const QString& text) {
  const rc::ui::ChatMessageRow* row = chat_.message(userMessageId);
  if (!row || row->role != rc::ui::ChatRole::User || text.trimmed().isEmpty()) return;
  if (isGenerating() || busyTurn_ || !hasModel()) return;
  std::optional<qint64> parent;
  if (row->parentId != 0) parent = row->parentId;
  startTurn(parent, text.trimmed(), std::nullopt);
}

void ChatController::startTurn(std::optional<qint64> userParent, std::optional<QString> userText,
                               std::optional<qint64> existingUser) {
  busyTurn_ = true;
  struct Turn {
    Loaded loaded;
    qint64 assistantId = 0;
    std::vector<rc::ChatMessage> messages;
  };
  const qint64 conversationId = conversationId_;
  rc::store::NewConversation fresh;
  if (conversationId == 0) {
    fresh.title = utf8(titleFromMessage(userText.value_or(QString())));
    fresh.system_prompt = utf8(systemPrompt_);
    fresh.preset_id = presetId_;
    fresh.sampling = toStoreSampling(sampling_);
  }
  const std::string text = utf8(userText.value_or(QString()));
  const std::string model = utf8(modelName());
  const bool newUser = userText.has_value();

  storeCall<Turn>(
      [=](Store& s) {
        Turn t;
        auto fail = [&t](const QString& what, const rc::Status& st) {
          t.loaded.error = failure(what, st);
          return t;
        };
        Id conv = conversationId;
        if (conv == 0) {
          Result<Id> created = s.create_conversation(fresh);
          if (!created.ok())
            return fail(QObject::tr("Cannot create the conversation"), created.status());
          conv = created.value();
        }
        Id user = existingUser.value_or(0);
        if (newUser) {
          rc::store::NewMessage m;
          m.conversation_id = conv;
          m.parent_id = userParent;
          m.role = rc::store::Role::user;
          m.content = text;
          Result<Id> added = s.append_message(m);
          if (!added.ok()) return fail(QObject::tr("Cannot save the message"), added.status());
          user = added.value();
        }
        Result<std::vector<rc::store::Message>> path = s.path_to(user);
        Result<rc::store::Conversation> c = s.get_conversation(conv);
        if (!path.ok()) return fail(QObject::tr("Cannot read the conversation"), path.status());
        if (!c.ok()) return fail(QObject::tr("Cannot read the conversation"), c.status());
        t.messages = toEngineMessages(c->system_prompt, path.value());
        // The reply is saved empty now and completed when it ends, so a
        // crash mid-reply leaves a visible, empty branch, not a lost turn.
        rc::store::NewMessage reply;
        reply.conversation_id = conv;
        reply.parent_id = user;
        reply.role = rc::store::Role::assistant;
        reply.model = model;
        Result<Id> added = s.append_message(reply);
        if (!added.ok()) return fail(QObject::tr("Cannot save the reply"), added.status());
        t.assistantId = added.value();
        t.loaded = readConversation(s, conv);
        return t;
      },
      [this, created = conversationId == 0](Turn t) {
        busyTurn_ = false;
        if (!t.loaded.error.isEmpty()) {
          emit errorOccurred(t.loaded.error);
          refreshList();
          return;
        }
        for (rc::ui::ChatMessageRow& r : t.loaded.rows) {
          if (r.id == t.assistantId) r.streaming = true;
        }
        rc::ui::GenerationJob job;
        job.messages = std::move(t.messages);
        job.sampling =
            toEngineSampling(t.loaded.sampling, QRandomGenerator::global()->generate64());
        job.maxTokens = t.loaded.sampling.maxTokens;
        job.contextLength = t.loaded.sampling.contextLength;
        job.contextPolicy =
            rc::parse_context_policy(t.loaded.sampling.contextOverflow.toStdString())
                .value_or(rc::ContextPolicy::rolling_window);
        if (created) emit conversationCreated(t.loaded.id);
        if (documentSource_ && !remote_) job.documents = documentSource_(job.messages);
        // The model may have changed while the turn was being saved.
        const quint64 tag = remote_ ? remote_->generate(job) : engine_->generate(job);
        gen_ = {};
        gen_.model = modelName();
        setGenerating(tag, t.loaded.id, t.assistantId);
        applyLoaded(t.loaded);
        refreshList();
      });
}

void ChatController::setGenerating(quint64 tag, qint64 conversationId, qint64 messageId) {
  const bool was = isGenerating();
  gen_.tag = tag;
  gen_.conversationId = conversationId;
  gen_.messageId = messageId;
  gen_.text.clear();
  if (was != isGenerating()) emit generatingChanged(isGenerating());
}

void ChatController::stop() {
  if (gen_.tag == 0) return;
  // Remote tags start at RemoteChatClient::kFirstTag, the engine's at 1.
  if (gen_.tag >= RemoteChatClient::kFirstTag) {
    if (remote_) remote_->stop(gen_.tag);
  } else {
    engine_->stop(gen_.tag);
  }
}

void ChatController::onText(quint64 tag, const QString& text) {
  if (tag != gen_.tag || tag == 0) return;
  gen_.text += text;
  chat_.appendText(gen_.messageId, text);
}

void ChatController::onFinished(quint64 tag, const rc::ui::GenerationOutcome& outcome) {
  if (tag != gen_.tag || tag == 0) return;
  const Generation g = gen_;
  gen_ = {};
  ReplyMetrics metrics = outcome.metrics;
  if (metrics.finishReason.isEmpty()) metrics.finishReason = outcome.reason;
  metrics.droppedMessages = outcome.droppedMessages;
  metrics.prefixChanged = outcome.prefixChanged;
  lastMetrics_ = metrics;
  chat_.finishMessage(g.messageId, metrics, outcome.error);
  const rc::store::MessageMetrics stored = toStoreMetrics(metrics);
  const std::string text = utf8(g.text);
  const Id id = g.messageId;
  // The generated ids are saved with the text (docs/architecture.md section 10): a reopened
  // conversation's next prompt then holds exactly what was generated.
  storeCall<rc::Status>([id, text, stored, tokens = outcome.tokens](
                            Store& s) { return s.update_message(id, text, stored, tokens); },
                        [this, id](rc::Status st) {
                          // not_found: its conversation was deleted meanwhile.
                          if (!st.ok() && st.code() != rc::StatusCode::not_found) {
                            emit errorOccurred(failure(tr("Cannot save the reply"), st));
                          }
                          if (!st.ok()) return;
                          emit replyStored(id);
                          refreshList();
                        });
  if (outcome.prefixChanged) {
    emit info(outcome.droppedMessages == 1
                  ? tr("The earliest message no longer fits the context; the cached prefix "
                       "changed.")
                  : tr("The earliest %1 messages no longer fit the context; the cached prefix "
                       "changed.")
                        .arg(outcome.droppedMessages));
    emit contextCut(outcome.droppedMessages, outcome.promptTokens, metrics.cachedTokens);
  }
  emit generatingChanged(false);
  emit replyFinished(id, metrics, outcome.error);
}

void ChatController::switchBranch(qint64 messageId, int delta) {
  if (isGenerating() || busyTurn_ || delta == 0) return;
  const qint64 conv = conversationId_;
  storeCall<Loaded>(
      [conv, messageId, delta](Store& s) {
        auto fail = [](const rc::Status& st) {
          Loaded l;
          l.error = failure(QObject::tr("Cannot switch branches"), st);
          return l;
        };
        Result<rc::store::Message> m = s.get_message(messageId);
        if (!m.ok()) return fail(m.status());
        Result<std::vector<rc::store::Message>> siblings = s.children(conv, m->parent_id);
        if (!siblings.ok()) return fail(siblings.status());
        const auto& sib = siblings.value();
        int index = 0;
        for (size_t i = 0; i < sib.size(); ++i) {
          if (sib[i].id == messageId) index = static_cast<int>(i);
        }
        const int target = std::clamp(index + delta, 0, static_cast<int>(sib.size()) - 1);
        Result<Id> leaf = s.newest_leaf(sib[static_cast<size_t>(target)].id);
        if (!leaf.ok()) return fail(leaf.status());
        rc::Status st = s.set_current_leaf(conv, leaf.value());
        if (!st.ok()) return fail(st);
        return readConversation(s, conv);
      },
      [this](Loaded loaded) { applyLoaded(loaded); });
}

void ChatController::setSystemPrompt(const QString& text, std::optional<qint64> presetId) {
  systemPrompt_ = text;
  presetId_ = presetId;
  const qint64 conv = conversationId_;
  if (conv == 0) return;  // saved with the first message
  const std::string t = utf8(text);
  storeCall<rc::Status>(
      [conv, t, presetId](Store& s) { return s.set_system_prompt(conv, t, presetId); },
      [this](rc::Status st) {
        if (!st.ok()) emit errorOccurred(failure(tr("Cannot save the system prompt"), st));
      });
}

void ChatController::setSampling(const ChatSampling& sampling) {
  sampling_ = sampling;
  const qint64 conv = conversationId_;
  if (conv == 0) return;
  const rc::store::SamplingSettings s = toStoreSampling(sampling);
  storeCall<rc::Status>([conv, s](Store& st) { return st.set_sampling(conv, s); },
                        [this](rc::Status st) {
                          if (!st.ok())
                            emit errorOccurred(failure(tr("Cannot save the settings"), st));
                        });
}

}  // namespace rc::gui
