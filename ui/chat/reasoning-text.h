// A reply of a reasoning model (Qwen3, DeepSeek-R1) split into its <think>
// block and its answer, so the chat shows the reasoning collapsed under the
// reply instead of raw tags. GUI-free; pure functions.
#pragma once

#include <QString>

namespace rc::ui {

struct ReasoningText {
  QString reasoning;  // the block's text, trimmed; empty when none
  QString answer;     // what the chat shows as the reply
  bool hasReasoning = false;
  bool thinking = false;  // the block is still open (streaming, or cut off)
};

// Qwen3 replies open with "<think>"; DeepSeek-R1's prompt already ends in
// "<think>\n", so its replies start inside the block and only "</think>"
// appears: pass opensInReasoning for those (the model's template says so).
// A reply with "</think>" and no "<think>" before it is split there too.
ReasoningText splitReasoning(const QString& text, bool opensInReasoning);

}  // namespace rc::ui
