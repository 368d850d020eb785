// The curated model catalog of the "Get a model…" dialog: a JSON data file
// (assets/model-catalog.json, installed as share/radixchat/model-catalog.json)
// listing small chat GGUFs on the Hugging Face Hub. The catalog only names
// files and describes them; what is downloaded is checked against what the
// Hub publishes (model-download.h). No widgets here.
#pragma once

#include <QList>
#include <QString>
#include <QUrl>
#include <optional>

namespace rc::gui {

struct CatalogModel {
  QString id;         // unique, stable
  QString name;       // "Qwen2.5 1.5B Instruct"
  QString family;     // "Qwen2.5"
  QString params;     // "1.5B"
  QString repo;       // "owner/name" on the Hub
  QString file;       // a .gguf in the repository's root
  QString quant;      // "Q4_K_M"
  double sizeGb = 0;  // as the Hub's file list shows it (decimal GB)
  double ramGb = 0;   // memory to run it with a 4096-token context
  QString license;
  QString verified;  // what of this entry was checked, and how
  QString sha256;    // optional pin (lowercase hex); empty: the Hub's hash alone
};

struct Catalog {
  QList<CatalogModel> models;
};

// Parses the catalog JSON. Errors name the entry and field at fault.
struct CatalogResult {
  std::optional<Catalog> catalog;
  QString error;
};
CatalogResult parseCatalog(const QByteArray& json);
CatalogResult loadCatalog(const QString& path);

// Where the catalog is: share/radixchat/model-catalog.json beside the
// program's bin/ when installed, else the source tree's assets/.
QString defaultCatalogPath();

// https://huggingface.co/{repo}/resolve/main/{file} under `endpoint`
// (default https://huggingface.co, or $HF_ENDPOINT as huggingface_hub does).
QUrl hubFileUrl(const QString& repo, const QString& file, const QString& endpoint = QString());
QString defaultHubEndpoint();

}  // namespace rc::gui
