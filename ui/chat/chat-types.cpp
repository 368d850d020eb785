#include "chat/chat-types.h"

#include <QLocale>

#include <algorithm>

namespace rc::ui {

QString chatRoleName(ChatRole role) {
  switch (role) {
    case ChatRole::System:
      return QStringLiteral("system");
    case ChatRole::User:
      return QStringLiteral("user");
    case ChatRole::Assistant:
      return QStringLiteral("assistant");
  }
  return {};
}

QString formatMetrics(const ReplyMetrics& m) {
  const QString dot = QStringLiteral("  ·  ");
  QString text = QStringLiteral("%1 tok/s").arg(m.tokensPerSecond, 0, 'f', 1) + dot +
                 QStringLiteral("TTFT %1 ms").arg(m.ttftMs, 0, 'f', 0) + dot +
                 QStringLiteral("prompt %1 tokens: %2 cached%3, %4 computed")
                     .arg(m.promptTokens)
                     .arg(m.cachedTokens)
                     .arg(m.loadedTokens > 0 ? QStringLiteral(" (%1 from disk)").arg(m.loadedTokens)
                                             : QString())
                     .arg(m.computedTokens());
  if (m.acceptedTokens > 0)
    text += dot + QStringLiteral("%1 of %2 drafted tokens kept")
                      .arg(m.acceptedTokens)
                      .arg(std::max(m.draftedTokens, m.acceptedTokens));
  if (m.documentTokens > 0) {
    const QLocale c(QLocale::English);  // "1,850" whatever the system locale
    text +=
        dot + QStringLiteral("%1 document tokens, %2 cached%3")
                  .arg(c.toString(m.documentTokens), c.toString(m.cachedDocumentTokens),
                       m.documentsRetrieved ? QStringLiteral(" (retrieved chunks)") : QString());
  }
  return text;
}

}  // namespace rc::ui
