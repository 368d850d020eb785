// radixchat: the desktop chat (docs/architecture.md section 16).
//
// Usage: radixchat [--model FILE.gguf]
// Hidden developer flags, for tests and documentation screenshots:
//   --data-dir DIR      database and settings in DIR instead of the XDG folders
//   --send TEXT         once the model is loaded, type TEXT and press Enter
//                       (repeatable: each after the previous reply is stored)
//   --regenerate        after the last --send reply, regenerate it once
//                       (Chat > Regenerate last reply)
//   --screenshot FILE   after the last reply is stored, save the window (PNG)
//   --quit-after-reply  then exit: 0 ok, 1 a reply failed, 2 the model did
//                       not load, 3 the database cannot be opened
//   --get-model ID      once ready, open Model > Get a model… and, ID not
//                       "", download catalog entry ID; --screenshot then
//                       captures that dialog
//   --lesson NAME[@K]   once ready, run the panel's demo NAME (a prefix of
//                       its name) in lesson mode; --screenshot is taken once
//                       step K (default: the last) is on screen
// Downloaded models go to <data dir>/models (HF_ENDPOINT replaces the Hub).
#include <unistd.h>

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>
#include <QMessageBox>
#include <QStandardPaths>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <vector>

#include "radixchat/private-files.h"

#include "app-style.h"
#include "dev-driver.h"
#include "main-window.h"
#include "store/store-thread.h"
#include "welcome.h"

namespace {

QCommandLineOption hidden(QCommandLineOption o) {
  o.setFlags(QCommandLineOption::HiddenFromHelp);
  return o;
}

void complain(const QString& message) {
  std::fprintf(stderr, "radixchat: %s\n", message.toLocal8Bit().constData());
}

// The history, settings and downloads are the user's alone on a shared
// machine: their folders are made 0700 (new ones are created so) and wider
// files left by older versions are narrowed, with one line saying so.
bool restrictToOwner(const std::filesystem::path& dbPath, const QString& settingsFile) {
  std::vector<std::filesystem::path> config;
  std::filesystem::path settings = settingsFile.toStdString();
  if (settingsFile.isEmpty()) {
    // QSettings' default place for this organization (main-window.h).
    const std::filesystem::path dir =
        QStandardPaths::writableLocation(QStandardPaths::GenericConfigLocation).toStdString() +
        "/RadixChat";
    if (rc::Status s = rc::make_private_dir(dir); !s.ok()) {
      complain(QString::fromStdString(s.message()));
      return false;
    }
    settings = dir / "radixchat.conf";
    config = {dir, settings};
  }
  // QSettings keeps an existing file's mode when it rewrites it, and
  // creates a new one 0644: make it first, 0600.
  if (rc::Result<int> fd = rc::open_private_file(settings, rc::CreateMode::keep); fd.ok())
    ::close(fd.value());
  rc::Result<std::string> data = rc::store::restrict_data_folder(dbPath);
  rc::Result<std::vector<std::filesystem::path>> conf = rc::tighten_to_owner(config);
  if (!data.ok() || !conf.ok()) {
    complain(QString::fromStdString((data.ok() ? conf.status() : data.status()).message()));
    return false;
  }
  std::string notice = data.value();
  const std::string more = rc::tightened_notice(conf.value());
  if (!more.empty()) notice = notice.empty() ? more : notice + "; " + more;
  if (!notice.empty()) complain(QString::fromStdString(notice));
  return true;
}

// "2G", "512M", "1048576": bytes, with binary K/M/G/T multipliers as the
// CLI's --kv-disk-size takes them. Nullopt for anything else.
std::optional<qint64> parseBytes(const QString& text) {
  QString t = text.trimmed().toUpper();
  if (t.endsWith(QLatin1Char('B'))) t.chop(1);
  qint64 unit = 1;
  const QString units = QStringLiteral("KMGT");
  if (!t.isEmpty() && units.contains(t.back())) {
    unit = qint64(1) << (10 * (units.indexOf(t.back()) + 1));
    t.chop(1);
  }
  bool ok = false;
  const double v = t.toDouble(&ok);
  if (!ok || v <= 0 || v * double(unit) > 9e18) return std::nullopt;
  return qint64(v * double(unit));
}

}  // namespace

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("RadixChat"));
  QApplication::setApplicationName(QStringLiteral("radixchat"));
  QApplication::setApplicationDisplayName(QStringLiteral("RadixChat"));
  QApplication::setApplicationVersion(QStringLiteral(RADIXCHAT_VERSION));
  QApplication::setDesktopFileName(QStringLiteral("radixchat"));

  QCommandLineParser cli;
  cli.setApplicationDescription(
      QStringLiteral("Chat with a local language model; the KV cache is a radix tree."));
  cli.addHelpOption();
  cli.addVersionOption();
  const QCommandLineOption model(QStringLiteral("model"),
                                 QStringLiteral("GGUF model to load (default: the bundled one)"),
                                 QStringLiteral("file"));
  const QCommandLineOption dataDir = hidden(
      {QStringLiteral("data-dir"), QStringLiteral("database folder"), QStringLiteral("dir")});
  const QCommandLineOption send =
      hidden({QStringLiteral("send"), QStringLiteral("message to send"), QStringLiteral("text")});
  const QCommandLineOption shot =
      hidden({QStringLiteral("screenshot"), QStringLiteral("PNG to save"), QStringLiteral("file")});
  const QCommandLineOption regenerate =
      hidden({QStringLiteral("regenerate"), QStringLiteral("regenerate the last reply")});
  const QCommandLineOption quit =
      hidden({QStringLiteral("quit-after-reply"), QStringLiteral("exit after the reply")});
  const QCommandLineOption getModel =
      hidden({QStringLiteral("get-model"), QStringLiteral("open the download dialog"),
              QStringLiteral("id")});
  const QCommandLineOption lesson = hidden(
      {QStringLiteral("lesson"), QStringLiteral("run a panel demo"), QStringLiteral("name")});
  const QCommandLineOption kvDisk(
      QStringLiteral("kv-disk"),
      QStringLiteral("disk cache folder, kept across restarts ('default': "
                     "$XDG_CACHE_HOME/radixchat/kv, the default; 'off': none)"),
      QStringLiteral("dir"));
  const QCommandLineOption kvDiskSize(
      QStringLiteral("kv-disk-size"),
      QStringLiteral("the disk cache's budget (2G, 512M; default: the setting, 2G)"),
      QStringLiteral("bytes"));
  const QCommandLineOption kvRedis(
      QStringLiteral("kv-redis"),
      QStringLiteral("shared Redis cache tier: redis://[:password@]host:port[/db]"),
      QStringLiteral("url"));
  cli.addOptions({model, dataDir, send, regenerate, shot, quit, getModel, lesson, kvDisk,
                  kvDiskSize, kvRedis});
  cli.process(app);
  rc::gui::applyAppStyle(app);

  rc::gui::WindowOptions options;
  std::filesystem::path dbPath;
  if (cli.isSet(dataDir)) {
    const QString dir = QDir(cli.value(dataDir)).absolutePath();
    if (rc::Status s = rc::make_private_dir(dir.toStdString()); !s.ok()) {
      complain(QString::fromStdString(s.message()));
      return 3;
    }
    dbPath = QDir(dir).filePath(QStringLiteral("radixchat.db")).toStdString();
    options.libraryPath = QDir(dir).filePath(QStringLiteral("library.db"));
    options.settingsFile = QDir(dir).filePath(QStringLiteral("settings.ini"));
    options.modelsDir = QDir(dir).filePath(QStringLiteral("models"));
  } else {
    rc::Result<std::filesystem::path> p = rc::store::default_database_path();
    if (!p.ok()) {
      complain(QString::fromStdString(p.status().message()));
      return 3;
    }
    dbPath = p.value();
    options.modelsDir = QString::fromStdString((dbPath.parent_path() / "models").string());
  }
  if (cli.isSet(model)) options.modelPath = QFileInfo(cli.value(model)).absoluteFilePath();
  if (cli.isSet(kvDisk)) {
    const QString v = cli.value(kvDisk);
    options.kvDisk = v == QLatin1String("off")       ? QString()
                     : v == QLatin1String("default") ? v
                                                     : QDir(v).absolutePath();
  }
  if (cli.isSet(kvDiskSize)) {
    options.kvDiskBytes = parseBytes(cli.value(kvDiskSize));
    if (!options.kvDiskBytes) {
      complain(QStringLiteral("--kv-disk-size: '%1' is not a size (2G, 512M, bytes)")
                   .arg(cli.value(kvDiskSize)));
      return 2;
    }
  }
  options.kvRedis = cli.value(kvRedis);
  if (!restrictToOwner(dbPath, options.settingsFile)) return 3;

  rc::Result<std::unique_ptr<rc::store::StoreThread>> store = rc::store::StoreThread::open(dbPath);
  if (!store.ok()) {
    // A damaged or newer database is reported and left untouched.
    const QString why = QString::fromStdString(store.status().message());
    complain(why);
    if (!cli.isSet(quit)) {
      QMessageBox::critical(
          nullptr, QObject::tr("RadixChat"),
          QObject::tr("The chat history cannot be opened:\n\n%1\n\nThe file was not changed.")
              .arg(why));
    }
    return 3;
  }

  // First run: the empty chat introduces the app and its cache panel.
  // Scripted runs (--send, --lesson) go straight to their work.
  if (!cli.isSet(send) && !cli.isSet(lesson)) {
    rc::Result<bool> first =
        store.value()->submit([](rc::store::Store& s) { return rc::gui::take_first_run(s); }).get();
    if (!first.ok()) complain(QString::fromStdString(first.status().message()));
    options.welcome = first.ok() && first.value();
  }

  rc::gui::MainWindow window(store.value().get(), options);
  window.show();
  if (cli.isSet(send) || cli.isSet(shot) || cli.isSet(quit) || cli.isSet(getModel) ||
      cli.isSet(lesson)) {
    auto* driver = new rc::gui::DevDriver(&window, cli.values(send), cli.value(shot),
                                          cli.isSet(quit));  // owned by window
    if (cli.isSet(getModel)) driver->openGetModel(cli.value(getModel));
    if (cli.isSet(regenerate)) driver->regenerateLast();
    if (cli.isSet(lesson)) driver->runLesson(cli.value(lesson));
  }
  window.start();
  return app.exec();
}
