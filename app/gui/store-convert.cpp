#include "store-convert.h"

#include <QObject>

namespace rc::gui {

QString qstr(const std::string& s) { return QString::fromStdString(s); }
std::string utf8(const QString& s) { return s.toStdString(); }

rc::ui::ChatRole toUiRole(rc::store::Role role) {
  switch (role) {
    case rc::store::Role::system:
      return rc::ui::ChatRole::System;
    case rc::store::Role::user:
      return rc::ui::ChatRole::User;
    case rc::store::Role::assistant:
      return rc::ui::ChatRole::Assistant;
  }
  return rc::ui::ChatRole::User;
}

rc::ui::ReplyMetrics toUiMetrics(const rc::store::MessageMetrics& m) {
  rc::ui::ReplyMetrics r;
  r.promptTokens = m.prompt_tokens;
  r.cachedTokens = m.cached_tokens;
  r.completionTokens = m.completion_tokens;
  r.ttftMs = m.ttft_ms;
  r.tokensPerSecond = m.tokens_per_s;
  r.finishReason = qstr(m.finish_reason);
  return r;
}

rc::store::MessageMetrics toStoreMetrics(const rc::ui::ReplyMetrics& m) {
  rc::store::MessageMetrics r;
  r.prompt_tokens = m.promptTokens;
  r.cached_tokens = m.cachedTokens;
  r.completion_tokens = m.completionTokens;
  r.ttft_ms = m.ttftMs;
  r.tokens_per_s = m.tokensPerSecond;
  r.finish_reason = utf8(m.finishReason);
  return r;
}

rc::ui::ChatSampling toUiSampling(const rc::store::SamplingSettings& s) {
  rc::ui::ChatSampling r;
  r.temperature = s.temperature;
  r.topP = s.top_p;
  r.topK = s.top_k;
  r.minP = s.min_p;
  r.repetitionPenalty = s.repetition_penalty;
  r.maxTokens = s.max_tokens;
  r.contextLength = s.context_length;
  r.contextOverflow = QString::fromStdString(s.context_overflow);
  return r;
}

rc::store::SamplingSettings toStoreSampling(const rc::ui::ChatSampling& s) {
  rc::store::SamplingSettings r;
  r.temperature = s.temperature;
  r.top_p = s.topP;
  r.top_k = s.topK;
  r.min_p = s.minP;
  r.repetition_penalty = s.repetitionPenalty;
  r.max_tokens = s.maxTokens;
  r.context_length = s.contextLength;
  r.context_overflow = s.contextOverflow.toStdString();
  return r;
}

rc::ui::ChatSampling withRecommended(rc::ui::ChatSampling base, const rc::RecommendedSampling& r) {
  // The file's float as the decimal it was written as (0.3, not 0.30000001).
  auto put = [](double& field, std::optional<float> v) {
    if (v) field = QString::number(*v).toDouble();
  };
  put(base.temperature, r.temperature);
  put(base.topP, r.top_p);
  put(base.minP, r.min_p);
  put(base.repetitionPenalty, r.repetition_penalty);
  base.topK = r.top_k.value_or(base.topK);
  return base;
}

rc::ui::ConversationRow toUiConversation(const rc::store::Conversation& c) {
  return {c.id, qstr(c.title), c.updated_at_ms};
}

rc::ui::PresetRow toUiPreset(const rc::store::Preset& p) {
  return {p.id, qstr(p.name), qstr(p.text)};
}

std::vector<rc::ChatMessage> toEngineMessages(const std::string& systemPrompt,
                                              const std::vector<rc::store::Message>& thread) {
  std::vector<rc::ChatMessage> out;
  if (!systemPrompt.empty()) out.push_back({"system", systemPrompt});
  for (const rc::store::Message& m : thread) {
    // A reply's saved ids go with it, so the prompt holds what the cache
    // holds even after a restart (the engine's own memory of replies is gone).
    out.push_back({rc::store::role_name(m.role), m.content, m.tokens});
  }
  return out;
}

rc::SamplingParams toEngineSampling(const rc::ui::ChatSampling& s, uint64_t seed) {
  rc::SamplingParams p;
  p.temperature = static_cast<float>(s.temperature);
  p.top_k = s.topK;
  p.top_p = static_cast<float>(s.topP);
  p.min_p = static_cast<float>(s.minP);
  p.repetition_penalty = static_cast<float>(s.repetitionPenalty);
  p.seed = seed;
  return p;
}

QString titleFromMessage(const QString& text) {
  QString line = text.trimmed().section(QLatin1Char('\n'), 0, 0).simplified();
  if (line.size() > 48) line = line.left(47).trimmed() + QStringLiteral("…");
  return line.isEmpty() ? QObject::tr("New chat") : line;
}

}  // namespace rc::gui
