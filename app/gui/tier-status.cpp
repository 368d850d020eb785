#include "tier-status.h"

#include <QObject>
#include <QStringList>

namespace rc::gui {

namespace {

QString capitalised(const std::string& name) {
  QString s = QString::fromStdString(name);
  // "redis" is a product name; the others read as plain words.
  if (s == QLatin1String("redis")) return QStringLiteral("Redis");
  return s;
}

}  // namespace

QString byteText(int64_t bytes) {
  if (bytes < 0) return QStringLiteral("?");
  static const char* kUnits[] = {"B", "kB", "MB", "GB", "TB"};
  double v = double(bytes);
  int u = 0;
  while (v >= 1000.0 && u < 4) {
    v /= 1000.0;
    ++u;
  }
  const int decimals = u == 0 || v >= 10.0 ? 0 : 1;
  return QStringLiteral("%1 %2").arg(v, 0, 'f', decimals).arg(QLatin1String(kUnits[u]));
}

QString tierStatusText(const rc::TierStats& tiers) {
  if (!tiers.enabled) return QString();
  QStringList parts;
  for (const rc::TierInfo& t : tiers.tiers) {
    const QString name = capitalised(t.name);
    if (t.state != "up")
      parts << QStringLiteral("%1 %2").arg(name, QString::fromStdString(t.state));
    else if (t.bytes >= 0)
      parts << QStringLiteral("%1 %2").arg(name, byteText(t.bytes));
    else
      parts << QStringLiteral("%1 up").arg(name);
  }
  return parts.join(QStringLiteral(" · "));
}

QString tierStatusTooltip(const rc::TierStats& tiers) {
  if (!tiers.enabled) return QString();
  QStringList lines;
  lines << QObject::tr("KV cache tiers below the pool (whole %1-token blocks):")
               .arg(tiers.block_tokens);
  for (const rc::TierInfo& t : tiers.tiers) {
    QString line = QStringLiteral("%1 (%2): %3")
                       .arg(capitalised(t.name), QString::fromStdString(t.where),
                            QString::fromStdString(t.state));
    if (!t.error.empty()) line += QStringLiteral(" — ") + QString::fromStdString(t.error);
    lines << line;
    lines << QObject::tr("  %1 held of %2 · %3 blocks · %4 hits · %5 written · %6 refused")
                 .arg(byteText(t.bytes),
                      t.budget_bytes < 0    ? QObject::tr("not known yet")
                      : t.budget_bytes == 0 ? QObject::tr("no limit")
                                            : byteText(t.budget_bytes))
                 .arg(t.blocks)
                 .arg(t.hits)
                 .arg(t.puts)
                 .arg(t.refused);
  }
  lines << QObject::tr(
               "Requests that loaded from the tiers: %1 (%2 tokens) · recomputed "
               "instead: %3")
               .arg(tiers.loads)
               .arg(tiers.loaded_tokens)
               .arg(tiers.recomputes);
  return lines.join(QLatin1Char('\n'));
}

}  // namespace rc::gui
