// Conversions between the store's rows (rc::store, std::string, UTF-8) and
// the chat UI's values (rc::ui, QString). Pure functions, any thread.
#pragma once

#include <optional>
#include <vector>

#include "chat/chat-types.h"
#include "radixchat/engine.h"
#include "store/store.h"

namespace rc::gui {

QString qstr(const std::string& s);
std::string utf8(const QString& s);

rc::ui::ChatRole toUiRole(rc::store::Role role);
rc::ui::ReplyMetrics toUiMetrics(const rc::store::MessageMetrics& m);
rc::store::MessageMetrics toStoreMetrics(const rc::ui::ReplyMetrics& m);
rc::ui::ChatSampling toUiSampling(const rc::store::SamplingSettings& s);
rc::store::SamplingSettings toStoreSampling(const rc::ui::ChatSampling& s);
// `base` with each field the model recommends in place of its own.
rc::ui::ChatSampling withRecommended(rc::ui::ChatSampling base, const rc::RecommendedSampling& r);
rc::ui::ConversationRow toUiConversation(const rc::store::Conversation& c);
rc::ui::PresetRow toUiPreset(const rc::store::Preset& p);

// The engine's chat messages for a thread: the system prompt (when not
// empty) and then the messages as stored.
std::vector<rc::ChatMessage> toEngineMessages(const std::string& systemPrompt,
                                              const std::vector<rc::store::Message>& thread);

// Sampling for one request; `seed` varies per request so regenerating gives
// a different reply when temperature > 0.
rc::SamplingParams toEngineSampling(const rc::ui::ChatSampling& s, uint64_t seed);

// A title from the first user message: its first line, at most 48 chars.
QString titleFromMessage(const QString& text);

}  // namespace rc::gui
