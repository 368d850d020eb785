// Plain value types shared by the chat widgets, the chat models and the
// engine worker. No store types here: ui/ knows the engine's public API only
// (docs/architecture.md section 1); app/gui converts between these and rc::store rows.
#pragma once

#include <QMetaType>
#include <QString>
#include <optional>

namespace rc::ui {

enum class ChatRole { System, User, Assistant };
QString chatRoleName(ChatRole role);  // "system" | "user" | "assistant"

// Figures of one finished reply (status bar, message footer, store).
struct ReplyMetrics {
  int promptTokens = 0;
  int cachedTokens = 0;  // prompt tokens served from the radix cache
  // Of those, loaded back from the cache tiers below the pool (the disk
  // cache) instead of computed. Shown under the reply; not stored.
  int loadedTokens = 0;
  int completionTokens = 0;
  double ttftMs = 0;
  double tokensPerSecond = 0;  // decode speed after the first token
  QString finishReason;        // stop | length | cancelled | error | "" unknown
  // Context overflow (rc::fit_context): earliest messages left out of this
  // reply's prompt, and whether the cut moved at this turn (the cached
  // history stopped matching). Shown under the reply; not stored.
  int droppedMessages = 0;
  bool prefixChanged = false;
  // Drafted decoding (EngineConfig::speculate "tree"): reply tokens proposed
  // from the cached tree or the prompt and verified, and how many of them
  // were kept.
  int draftedTokens = 0;
  int acceptedTokens = 0;
  // Documents in the prompt (docs/architecture.md section 21): the tokens
  // they added and how many of those the cache served; retrieved when the
  // whole documents exceeded their budget and chunks went in instead.
  // Shown under the reply; not stored.
  int documentTokens = 0;
  int cachedDocumentTokens = 0;
  bool documentsRetrieved = false;
  int computedTokens() const { return promptTokens - cachedTokens; }
};

// "12.3 tok/s · TTFT 85 ms · prompt 240 tokens: 200 cached, 40 computed"
// ("200 cached (192 from disk)" when the tiers supplied some),
// then "  ·  9 of 12 drafted tokens kept" once a drafted token was kept (a
// draft that kept nothing saved nothing: docs/architecture.md section 20),
// and "  ·  1,850 document tokens, 1,850 cached" with documents.
QString formatMetrics(const ReplyMetrics& m);

// One message of the thread on screen.
struct ChatMessageRow {
  qint64 id = 0;
  qint64 parentId = 0;  // 0: a root
  ChatRole role = ChatRole::User;
  QString text;
  QString model;  // the model that wrote an assistant reply
  // Position among the message's siblings (same parent), for the "< 2/3 >"
  // branch picker. branchIndex is 0-based.
  int branchIndex = 0;
  int branchCount = 1;
  bool streaming = false;  // tokens are still arriving
  // The model's replies start inside a <think> block (DeepSeek-R1): text
  // before "</think>" is reasoning even without an opening tag.
  bool opensInReasoning = false;
  std::optional<ReplyMetrics> metrics;
  QString error;  // why the reply failed (only while the app runs)
};

struct ConversationRow {
  qint64 id = 0;
  QString title;
  qint64 updatedAtMs = 0;
};

// Per-conversation generation settings (mirrors rc::store::SamplingSettings).
struct ChatSampling {
  double temperature = 0.7;
  double topP = 0.95;
  int topK = 40;
  double minP = 0.05;
  double repetitionPenalty = 1.0;
  int maxTokens = 1024;
  int contextLength = 0;  // 0: the model's own context
  // A chat longer than the context: "stop" | "truncate-middle" | "rolling-window".
  QString contextOverflow = QStringLiteral("rolling-window");
  bool operator==(const ChatSampling&) const = default;
};

struct PresetRow {
  qint64 id = 0;
  QString name;
  QString text;
};

}  // namespace rc::ui

Q_DECLARE_METATYPE(rc::ui::ReplyMetrics)
Q_DECLARE_METATYPE(rc::ui::ChatSampling)
