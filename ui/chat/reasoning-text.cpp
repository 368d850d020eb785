#include "chat/reasoning-text.h"

namespace rc::ui {

namespace {

const QString kOpen = QStringLiteral("<think>");
const QString kClose = QStringLiteral("</think>");

// Leading newlines go (the templates put "\n\n" after </think>); other
// leading spaces may be Markdown indentation and stay.
QString dropLeadingNewlines(QString s) {
  int i = 0;
  while (i < s.size() && (s[i] == QLatin1Char('\n') || s[i] == QLatin1Char('\r'))) ++i;
  return s.mid(i);
}

}  // namespace

ReasoningText splitReasoning(const QString& text, bool opensInReasoning) {
  ReasoningText out;
  int start = 0;
  while (start < text.size() && text[start].isSpace()) ++start;
  const bool opened = text.mid(start, kOpen.size()) == kOpen;
  const int body = opened ? start + kOpen.size() : 0;
  const int close = text.indexOf(kClose, body);
  if (close >= 0 && (opened || !text.left(close).contains(kOpen))) {
    out.hasReasoning = true;
    out.reasoning = text.mid(body, close - body).trimmed();
    out.answer = dropLeadingNewlines(text.mid(close + kClose.size()));
    return out;
  }
  if (opened || (opensInReasoning && close < 0)) {
    out.hasReasoning = true;
    out.thinking = true;
    out.reasoning = text.mid(body).trimmed();
    return out;
  }
  out.answer = text;
  return out;
}

}  // namespace rc::ui
