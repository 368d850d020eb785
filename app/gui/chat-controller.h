// ChatController: the chat's logic between the widgets, the store and the
// engine (docs/architecture.md sections 3 and 16).
//
// Threads: lives on the GUI thread and is called only there. It never
// blocks: store work is posted to the StoreThread and its results come back
// with QMetaObject::invokeMethod(this, ..., Qt::QueuedConnection); engine
// work goes through EngineHost (queued to its worker thread). So every
// action below returns at once and its effect shows up a little later, in
// the models and through the signals.
//
// Ownership: does not own the StoreThread or the EngineHost; both must
// outlive it. The destructor saves a reply still streaming (as stopped) and
// waits for the store queue to drain, so nothing it posted is lost.
//
// Branches: the store keeps every message; editing a user message appends a
// new sibling user message (and a new reply), regenerating appends a new
// sibling reply. The thread on screen is the path to the conversation's
// current leaf; switchBranch() moves to a sibling's newest continuation.
#pragma once

#include <QObject>
#include <QString>
#include <functional>
#include <optional>
#include <vector>

#include "chat/chat-model.h"
#include "chat/chat-types.h"
#include "chat/conversation-list-model.h"
#include "chat/engine-host.h"
#include "store/store-thread.h"

namespace rc::gui {

class RemoteChatClient;

using rc::ui::ChatSampling;
using rc::ui::PresetRow;
using rc::ui::ReplyMetrics;

// Settings keys in the store's settings table.
inline constexpr const char* kDefaultPresetKey = "chat.default_preset";

class ChatController : public QObject {
  Q_OBJECT
 public:
  ChatController(rc::store::StoreThread* store, rc::ui::EngineHost* engine,
                 QObject* parent = nullptr);
  ~ChatController() override;

  rc::ui::ChatModel* chatModel() { return &chat_; }
  rc::ui::ConversationListModel* conversationList() { return &list_; }

  qint64 currentConversation() const { return conversationId_; }
  QString currentTitle() const { return title_; }
  QString systemPrompt() const { return systemPrompt_; }
  std::optional<qint64> systemPresetId() const { return presetId_; }
  ChatSampling sampling() const { return sampling_; }
  // What a new conversation starts with: the loaded model's recommended
  // sampling (its file's general.sampling.*) over the app's own defaults.
  ChatSampling defaultSampling() const { return defaultSampling_; }
  // "the model's recommendation: temperature 0.2, …"; empty when it has none.
  QString defaultSamplingNote() const { return defaultSamplingNote_; }
  bool isGenerating() const { return gen_.tag != 0; }
  const std::vector<PresetRow>& presets() const { return presets_; }
  qint64 defaultPresetId() const { return defaultPresetId_; }
  // The system prompt a new conversation starts with: the default preset's
  // text, empty without one. Known once presetsLoaded().
  QString defaultSystemPrompt() const;
  bool presetsLoaded() const { return presetsLoaded_; }
  std::optional<ReplyMetrics> lastMetrics() const { return lastMetrics_; }

  // ---- the model: the local engine, or a remote server ----
  // Replies go to `client` (a remote OpenAI-compatible server) while it is
  // set and connected; null returns to the local engine. History is saved
  // locally either way. The client must outlive the controller or be unset
  // before it goes. A reply streaming when the model changes is stopped.
  void setRemote(RemoteChatClient* client);
  RemoteChatClient* remote() const { return remote_; }
  // A model (local, or the connected server) can answer now.
  bool hasModel() const;
  QString modelName() const;

  // ---- conversations ----
  // Loads the list, presets and settings; call once at start.
  void start();
  // Makes a fresh conversation current (reuses the current one when it has
  // no messages yet). It starts with the default preset's system prompt.
  void newConversation();
  void selectConversation(qint64 id);
  void renameConversation(qint64 id, const QString& title);
  void deleteConversation(qint64 id);
  void setSearchText(const QString& text);
  // Opens a conversation the search found (0: the first one it finds) on
  // the branch holding its first message that contains the search text
  // (the current branch when that shows it); searchHitShown follows once
  // the thread is on screen. Nothing happens when nothing matches.
  void openSearchResult(qint64 conversationId);
  // Shows only these conversations in the list (prefix lookups); an empty
  // optional returns to the normal (searched) list.
  void setListFilter(std::optional<std::vector<qint64>> ids);

  // ---- chatting ----
  // Appends the user message and an empty reply to the current branch and
  // streams the reply into it. Ignored while a reply streams; an error
  // without a model.
  void send(const QString& text);
  void stop();  // the reply ends with reason "cancelled", its text kept
  void regenerate(qint64 assistantMessageId);                   // a new sibling reply
  void editMessage(qint64 userMessageId, const QString& text);  // a new sibling: a branch
  void switchBranch(qint64 messageId, int delta);               // -1: previous sibling, +1: next
  // Jumps to a conversation with a given branch tip on screen.
  void openBranch(qint64 conversationId, qint64 leafId);

  // ---- per-conversation settings, presets ----
  void setSystemPrompt(const QString& text, std::optional<qint64> presetId);
  void setSampling(const ChatSampling& sampling);
  void savePreset(const QString& name, const QString& text);
  void deletePreset(qint64 id);
  void setDefaultPreset(qint64 id);  // 0: none
  // Engine::warmup of every preset (on the worker thread).
  void warmPresets();

  // ---- export, cache lookups ----
  // format: "markdown" | "json"; the store's exporters; written on the
  // store thread.
  void exportConversation(qint64 id, const QString& format, const QString& path);
  // The rendered prompt of the thread up to `messageId` (assistant turn
  // open) -> promptTokensReady.
  void requestPromptTokens(qint64 messageId);
  // Conversations (any branch) whose rendered prompt starts with `tokens`
  // -> prefixMatches.
  void findConversationsWithPrefix(const std::vector<int32_t>& tokens);

  // ---- documents (docs/architecture.md section 21) ----
  // Gives each local request the documents `source` returns for its
  // messages (the conversation on screen's); unset: none.
  using DocumentSource = std::function<rc::DocumentSet(const std::vector<rc::ChatMessage>&)>;
  void setDocumentSource(DocumentSource source) { documentSource_ = std::move(source); }
  // The documents a request with these names attached was sent with, for
  // any conversation's messages; any thread. Deleting a conversation
  // renders its prompts with them, so its purge finds what the cache holds.
  using NamedDocumentSource = std::function<rc::DocumentSet(
      const std::vector<std::string>& names, const std::vector<rc::ChatMessage>& messages)>;
  void setNamedDocumentSource(NamedDocumentSource source) {
    namedDocumentSource_ = std::move(source);
  }

  // For tests and the --screenshot flag: blocks until every store task
  // posted so far has run (their results are still queued to this thread).
  void waitForStore();

 signals:
  void conversationChanged(qint64 id, const QString& title);
  // A conversation was written for its first message (just before the
  // conversationChanged that shows it).
  void conversationCreated(qint64 id);
  // openSearchResult's message is in the thread on screen; `text` is the
  // search that found it.
  void searchHitShown(qint64 messageId, const QString& text);
  void generatingChanged(bool generating);
  // The reply ended (any reason); its text and metrics are being saved.
  void replyFinished(qint64 messageId, const rc::ui::ReplyMetrics& metrics, const QString& error);
  // The reply's final text and metrics are in the store.
  void replyStored(qint64 messageId);
  void presetsChanged();
  void exported(const QString& path);
  void promptTokensReady(qint64 messageId, const std::vector<int32_t>& tokens);
  void prefixMatches(const std::vector<rc::ui::PrefixMatch>& matches);
  void errorOccurred(const QString& message);
  void info(const QString& message);  // transient status-bar text
  // A reply's prompt dropped more old messages than the previous turn's
  // (rc::ContextFit::prefix_changed): the cache panel marks the cut.
  // `promptTokens` is the prompt sent (empty when unknown) and its first
  // `cachedTokens` came from the cache: where it leaves the cached path.
  void contextCut(int droppedMessages, const std::vector<int32_t>& promptTokens, int cachedTokens);

 private:
  struct Generation {
    quint64 tag = 0;  // 0: none
    qint64 conversationId = 0;
    qint64 messageId = 0;
    QString text;
    QString model;
  };
  struct Loaded;  // a conversation read on the store thread
  // A model loaded: its recommended sampling becomes the default.
  void adoptModelSampling(const rc::RecommendedSampling& recommended);
  // Store thread: the conversation with its current thread and, per message,
  // its place among its siblings (for the branch picker).
  static Loaded readConversation(rc::store::Store& s, qint64 id);

  // Store work: `task` runs on the store thread; `done` on the GUI thread.
  template <typename R>
  void storeCall(std::function<R(rc::store::Store&)> task, std::function<void(R)> done);
  void applyLoaded(const Loaded& loaded);
  void refreshList();
  void refreshPresets();
  // Appends [user message], an empty reply, then starts generation.
  // userParent: parent of a new user message, or reuse `existingUser`.
  void startTurn(std::optional<qint64> userParent, std::optional<QString> userText,
                 std::optional<qint64> existingUser);
  void onText(quint64 tag, const QString& text);
  void onFinished(quint64 tag, const rc::ui::GenerationOutcome& outcome);
  void setGenerating(quint64 tag, qint64 conversationId, qint64 messageId);

  rc::store::StoreThread* store_;
  rc::ui::EngineHost* engine_;
  RemoteChatClient* remote_ = nullptr;
  rc::ui::ChatModel chat_;
  rc::ui::ConversationListModel list_;

  qint64 conversationId_ = 0;
  QString title_;
  QString systemPrompt_;
  std::optional<qint64> presetId_;
  ChatSampling sampling_;
  ChatSampling defaultSampling_;
  QString defaultSamplingNote_;
  QString search_;
  std::optional<std::vector<qint64>> filter_;
  std::vector<PresetRow> presets_;
  qint64 defaultPresetId_ = 0;
  Generation gen_;
  std::optional<ReplyMetrics> lastMetrics_;
  quint64 promptTag_ = 0;
  qint64 promptMessage_ = 0;
  quint64 prefixTag_ = 0;
  DocumentSource documentSource_;
  NamedDocumentSource namedDocumentSource_;
  bool busyTurn_ = false;  // a turn is being written to the store
  bool presetsLoaded_ = false;
  bool warmWanted_ = false;  // the model came before the presets
};

}  // namespace rc::gui
