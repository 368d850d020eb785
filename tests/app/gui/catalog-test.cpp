// The shipped catalog (assets/model-catalog.json) and the parser's errors.
#include <gtest/gtest.h>

#include <QFile>
#include <QSet>
#include <QSslSocket>

#include "model-catalog.h"

namespace rc::gui {
namespace {

QByteArray shipped() {
  QFile f(QStringLiteral(RADIXCHAT_SOURCE_DIR "/assets/model-catalog.json"));
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

TEST(Catalog, TheShippedCatalogCoversTheFamiliesTheEngineRuns) {
  const CatalogResult r = parseCatalog(shipped());
  ASSERT_TRUE(r.catalog) << r.error.toStdString();
  QSet<QString> families;
  for (const CatalogModel& m : r.catalog->models) {
    families.insert(m.family);
    EXPECT_TRUE(m.file.endsWith(QStringLiteral(".gguf"))) << m.file.toStdString();
    EXPECT_GT(m.ramGb, m.sizeGb) << m.id.toStdString();  // the file is in memory, plus the cache
    EXPECT_FALSE(m.verified.isEmpty()) << m.id.toStdString();
  }
  for (const char* fam : {"Llama 3.2", "Qwen2.5", "Qwen3", "SmolLM2", "Mistral"})
    EXPECT_TRUE(families.contains(QLatin1String(fam))) << fam;
  EXPECT_EQ(loadCatalog(defaultCatalogPath()).catalog.has_value(), true);
}

TEST(Catalog, HubUrlsAreTheResolveUrls) {
  EXPECT_EQ(hubFileUrl("Qwen/Qwen3-0.6B-GGUF", "Qwen3-0.6B-Q8_0.gguf", "https://huggingface.co/")
                .toString(),
            QStringLiteral(
                "https://huggingface.co/Qwen/Qwen3-0.6B-GGUF/resolve/main/Qwen3-0.6B-Q8_0.gguf"));
  EXPECT_EQ(hubFileUrl("a/b", "c.gguf", "http://127.0.0.1:9").toString(),
            QStringLiteral("http://127.0.0.1:9/a/b/resolve/main/c.gguf"));
}

TEST(Catalog, BadCatalogsGetOneErrorNamingTheProblem) {
  const QByteArray ok =
      R"({"version":1,"models":[{"id":"a","name":"A","family":"F","repo":"o/r","file":"f.gguf",)"
      R"("quant":"Q4_K_M","size_gb":1,"ram_gb":2,"verified":"x"}]})";
  ASSERT_TRUE(parseCatalog(ok).catalog) << parseCatalog(ok).error.toStdString();
  struct Case {
    QByteArray from, to;
    const char* says;
  };
  const Case cases[] = {
      {"\"version\":1", "\"version\":2", "version"},
      {"\"repo\":\"o/r\"", "\"repo\":\"../r\"", "bad repo"},
      {"\"file\":\"f.gguf\"", "\"file\":\"x/f.gguf\"", "bad file"},
      {"\"file\":\"f.gguf\"", "\"file\":\"f.bin\"", "bad file"},
      {"\"size_gb\":1", "\"size_gb\":-1", "size_gb"},
      {"\"ram_gb\":2", "\"ram_gb\":\"2\"", "ram_gb"},
      {"\"name\":\"A\"", "\"name\":\"\"", "name"},
      {"\"verified\":\"x\"", "\"verified\":\"x\",\"sha256\":\"ABC\"", "sha256"},
      {"}]}", "},{\"id\":\"a\"}]}", "model 2"},
      {"\"models\":[", "\"modelz\":[", "models"},
  };
  for (const Case& c : cases) {
    QByteArray bad = ok;
    bad.replace(c.from, c.to);
    const CatalogResult r = parseCatalog(bad);
    EXPECT_FALSE(r.catalog) << bad.toStdString();
    EXPECT_TRUE(r.error.contains(QLatin1String(c.says)))
        << r.error.toStdString() << " / " << c.says;
  }
  QByteArray dup = ok;
  dup.replace("}]}", "}," + ok.mid(ok.indexOf("{\"id\"")));
  EXPECT_TRUE(parseCatalog(dup).error.contains(QStringLiteral("twice")))
      << parseCatalog(dup).error.toStdString();
}

TEST(Catalog, EveryTruncationOfTheShippedFileIsAnErrorNotACrash) {
  const QByteArray full = shipped();
  ASSERT_FALSE(full.isEmpty());
  for (qsizetype n = 0; n < full.size() - 2; n += 7) {
    const CatalogResult r = parseCatalog(full.left(n));
    EXPECT_FALSE(r.catalog) << n;
    EXPECT_FALSE(r.error.isEmpty()) << n;
  }
}

// The Hub is HTTPS: Qt's TLS backend (the OpenSSL plugin of libqt6network6,
// which loads libssl3 at run time) must load on this system.
TEST(Catalog, TlsIsAvailableForTheHub) {
  EXPECT_TRUE(QSslSocket::supportsSsl())
      << "active TLS backend: " << QSslSocket::activeBackend().toStdString();
}

}  // namespace
}  // namespace rc::gui
