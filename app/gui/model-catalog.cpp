#include "model-catalog.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QSet>

#ifndef RADIXCHAT_SOURCE_DIR
#error "RADIXCHAT_SOURCE_DIR must be defined (app/gui/CMakeLists.txt)"
#endif

namespace rc::gui {

namespace {

// A repo id is owner/name with the Hub's allowed characters; a file is a
// plain .gguf name in the repository root (no path tricks in the URL).
bool validRepo(const QString& s) {
  static const QRegularExpression re(
      QStringLiteral("^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$"));
  return re.match(s).hasMatch() && !s.contains(QLatin1String(".."));
}

bool validFile(const QString& s) {
  static const QRegularExpression re(QStringLiteral("^[A-Za-z0-9][A-Za-z0-9._-]*\\.gguf$"));
  return re.match(s).hasMatch() && !s.contains(QLatin1String(".."));
}

bool validSha(const QString& s) {
  static const QRegularExpression re(QStringLiteral("^[0-9a-f]{64}$"));
  return re.match(s).hasMatch();
}

// One entry; returns an error message or empty.
QString readModel(const QJsonObject& o, int index, CatalogModel* m) {
  const QString where = QStringLiteral("model %1").arg(index + 1);
  auto text = [&](const char* key, QString* out, bool required) -> QString {
    const QJsonValue v = o.value(QLatin1String(key));
    if (v.isUndefined() && !required) return {};
    if (!v.isString() || (required && v.toString().trimmed().isEmpty()))
      return QStringLiteral("%1: \"%2\" must be a non-empty string").arg(where, QLatin1String(key));
    *out = v.toString().trimmed();
    return {};
  };
  auto number = [&](const char* key, double* out) -> QString {
    const QJsonValue v = o.value(QLatin1String(key));
    if (!v.isDouble() || !(v.toDouble() > 0) || v.toDouble() > 1000)
      return QStringLiteral("%1: \"%2\" must be a number of GB above 0")
          .arg(where, QLatin1String(key));
    *out = v.toDouble();
    return {};
  };
  for (QString e : {text("id", &m->id, true), text("name", &m->name, true),
                    text("family", &m->family, true), text("params", &m->params, false),
                    text("repo", &m->repo, true), text("file", &m->file, true),
                    text("quant", &m->quant, true), text("license", &m->license, false),
                    text("verified", &m->verified, true), text("sha256", &m->sha256, false),
                    number("size_gb", &m->sizeGb), number("ram_gb", &m->ramGb)}) {
    if (!e.isEmpty()) return e;
  }
  if (!validRepo(m->repo)) return QStringLiteral("%1: bad repo \"%2\"").arg(where, m->repo);
  if (!validFile(m->file)) return QStringLiteral("%1: bad file name \"%2\"").arg(where, m->file);
  if (!m->sha256.isEmpty() && !validSha(m->sha256))
    return QStringLiteral("%1: sha256 must be 64 lowercase hex digits").arg(where);
  return {};
}

}  // namespace

CatalogResult parseCatalog(const QByteArray& json) {
  QJsonParseError pe{};
  const QJsonDocument doc = QJsonDocument::fromJson(json, &pe);
  if (pe.error != QJsonParseError::NoError)
    return {std::nullopt, QStringLiteral("the model catalog is not valid JSON (offset %1: %2)")
                              .arg(pe.offset)
                              .arg(pe.errorString())};
  if (!doc.isObject() || !doc.object().value(QLatin1String("models")).isArray())
    return {std::nullopt, QStringLiteral("the model catalog has no \"models\" list")};
  if (doc.object().value(QLatin1String("version")).toInt() != 1)
    return {std::nullopt, QStringLiteral("the model catalog's version is not 1")};
  Catalog cat;
  QSet<QString> ids;
  const QJsonArray arr = doc.object().value(QLatin1String("models")).toArray();
  for (int i = 0; i < arr.size(); ++i) {
    if (!arr[i].isObject())
      return {std::nullopt, QStringLiteral("model %1 is not an object").arg(i + 1)};
    CatalogModel m;
    if (QString e = readModel(arr[i].toObject(), i, &m); !e.isEmpty()) return {std::nullopt, e};
    if (ids.contains(m.id))
      return {std::nullopt,
              QStringLiteral("model %1: id \"%2\" appears twice").arg(i + 1).arg(m.id)};
    ids.insert(m.id);
    cat.models.append(m);
  }
  return {cat, QString()};
}

CatalogResult loadCatalog(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly))
    return {std::nullopt,
            QStringLiteral("cannot read the model catalog %1: %2").arg(path, f.errorString())};
  return parseCatalog(f.readAll());
}

QString defaultCatalogPath() {
  const QString installed = QDir(QCoreApplication::applicationDirPath())
                                .filePath(QStringLiteral("../share/radixchat/model-catalog.json"));
  if (QFileInfo::exists(installed)) return QFileInfo(installed).canonicalFilePath();
  return QStringLiteral(RADIXCHAT_SOURCE_DIR "/assets/model-catalog.json");
}

QString defaultHubEndpoint() {
  const QString env = qEnvironmentVariable("HF_ENDPOINT").trimmed();
  return env.isEmpty() ? QStringLiteral("https://huggingface.co") : env;
}

QUrl hubFileUrl(const QString& repo, const QString& file, const QString& endpoint) {
  QString base = endpoint.isEmpty() ? defaultHubEndpoint() : endpoint;
  while (base.endsWith(QLatin1Char('/'))) base.chop(1);
  return QUrl(base + QLatin1Char('/') + repo + QStringLiteral("/resolve/main/") + file);
}

}  // namespace rc::gui
