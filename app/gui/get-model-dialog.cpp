#include "get-model-dialog.h"

#include <unistd.h>

#include <QDialogButtonBox>
#include <QDir>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QProgressBar>
#include <QPushButton>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace rc::gui {

namespace {

enum Column { kModel, kQuant, kSize, kRam, kSource, kColumns };

double physicalMemoryGb() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? double(pages) * double(page) / 1e9 : 0;
}

QString humanSize(qint64 bytes) {
  return QLocale().formattedDataSize(bytes, 1, QLocale::DataSizeSIFormat);
}

}  // namespace

GetModelDialog::GetModelDialog(Catalog catalog, QString modelsDir, QString endpoint,
                               QWidget* parent)
    : QDialog(parent),
      catalog_(std::move(catalog)),
      modelsDir_(std::move(modelsDir)),
      endpoint_(std::move(endpoint)),
      download_(new ModelDownload(this)),
      physicalGb_(physicalMemoryGb()) {
  setObjectName(QStringLiteral("getModelDialog"));
  setWindowTitle(tr("Get a model"));
  buildUi();
  fillRows();
  connect(download_, &ModelDownload::progress, this, &GetModelDialog::onProgress);
  connect(download_, &ModelDownload::stateChanged, this, &GetModelDialog::onState);
  connect(download_, &ModelDownload::failed, this, &GetModelDialog::onFailed);
  connect(download_, &ModelDownload::finished, this, &GetModelDialog::onFinished);
  resize(860, 560);
}

void GetModelDialog::buildUi() {
  auto* v = new QVBoxLayout(this);
  auto* intro = new QLabel(
      tr("<b>Download a chat model</b> from the Hugging Face Hub. Smaller models answer faster; "
         "larger ones know more. Each file is checked against the SHA-256 the Hub publishes "
         "before it is used.<br>Files are saved in <code>%1</code>.")
          .arg(modelsDir_.toHtmlEscaped()),
      this);
  intro->setWordWrap(true);
  intro->setTextInteractionFlags(Qt::TextSelectableByMouse);
  v->addWidget(intro);

  table_ = new QTreeWidget(this);
  table_->setObjectName(QStringLiteral("catalogTable"));
  table_->setColumnCount(kColumns);
  table_->setHeaderLabels(
      {tr("Model"), tr("Quant"), tr("Download"), tr("RAM needed"), tr("Source")});
  table_->setRootIsDecorated(false);
  table_->setUniformRowHeights(true);
  table_->setAlternatingRowColors(true);
  table_->header()->setStretchLastSection(true);

  v->addWidget(table_, 1);

  details_ = new QLabel(this);
  details_->setObjectName(QStringLiteral("modelDetails"));
  details_->setWordWrap(true);
  details_->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::LinksAccessibleByMouse);
  details_->setOpenExternalLinks(true);
  v->addWidget(details_);

  progress_ = new QProgressBar(this);
  progress_->setObjectName(QStringLiteral("downloadProgress"));
  progress_->setRange(0, 1000);
  progress_->setTextVisible(false);
  progress_->hide();
  v->addWidget(progress_);
  status_ = new QLabel(this);
  status_->setObjectName(QStringLiteral("downloadStatus"));
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  v->addWidget(status_);

  auto* buttons = new QHBoxLayout();
  go_ = new QPushButton(tr("Download"), this);
  go_->setObjectName(QStringLiteral("downloadButton"));
  go_->setDefault(true);
  pause_ = new QPushButton(tr("Pause"), this);
  pause_->setObjectName(QStringLiteral("pauseButton"));
  cancel_ = new QPushButton(tr("Cancel download"), this);
  cancel_->setObjectName(QStringLiteral("cancelButton"));
  auto* close = new QPushButton(tr("Close"), this);
  close->setToolTip(tr("A download in progress continues; the model opens when it is done"));
  buttons->addWidget(go_);
  buttons->addWidget(pause_);
  buttons->addWidget(cancel_);
  buttons->addStretch(1);
  buttons->addWidget(close);
  v->addLayout(buttons);

  connect(table_, &QTreeWidget::currentItemChanged, this, [this] {
    updateDetails();
    updateButtons();
  });
  connect(table_, &QTreeWidget::itemDoubleClicked, this, [this] { startSelected(); });
  connect(go_, &QPushButton::clicked, this, &GetModelDialog::startSelected);
  connect(pause_, &QPushButton::clicked, this, [this] {
    if (download_->canResume()) {
      download_->resume();
    } else {
      download_->pause();
    }
  });
  connect(cancel_, &QPushButton::clicked, this, [this] {
    download_->cancel();
    activeId_.clear();
    progress_->hide();
    setStatus(tr("Download cancelled; the partial file was deleted."), false);
    fillRows();
  });
  connect(close, &QPushButton::clicked, this, &QDialog::close);
}

QString GetModelDialog::destinationFor(const CatalogModel& m) const {
  return QDir(modelsDir_).filePath(m.file);
}

void GetModelDialog::fillRows() {
  const QString keep = selected() ? selected()->id : QString();
  table_->clear();
  for (const CatalogModel& m : catalog_.models) {
    auto* item = new QTreeWidgetItem(table_);
    const bool have = QFileInfo::exists(destinationFor(m));
    const bool partial = QFileInfo::exists(ModelDownload::partPath(destinationFor(m)));
    QString name = m.name;  // names carry the size ("Qwen3 4B"); params are in the details
    if (have)
      name += tr("  (downloaded)");
    else if (partial)
      name += tr("  (partly downloaded)");
    item->setText(kModel, name);
    item->setText(kQuant, m.quant);
    item->setText(kSize, QStringLiteral("%1 GB").arg(m.sizeGb, 0, 'f', 2));
    item->setText(kRam, QStringLiteral("%1 GB").arg(m.ramGb, 0, 'f', 1));
    item->setText(kSource, m.repo);
    item->setData(kModel, Qt::UserRole, m.id);
    item->setTextAlignment(kSize, Qt::AlignRight | Qt::AlignVCenter);
    item->setTextAlignment(kRam, Qt::AlignRight | Qt::AlignVCenter);
    if (physicalGb_ > 0 && m.ramGb > physicalGb_) {
      item->setForeground(kRam, QColor(0xc0, 0x39, 0x2b));
      item->setToolTip(kRam,
                       tr("More than this computer's %1 GB of memory").arg(physicalGb_, 0, 'f', 1));
    }
    if (m.id == keep) table_->setCurrentItem(item);
  }
  if (!table_->currentItem() && table_->topLevelItemCount() > 0)
    table_->setCurrentItem(table_->topLevelItem(0));
  // Room between columns: ResizeToContents alone leaves none.
  for (int c = kModel; c < kSource; ++c) {
    table_->resizeColumnToContents(c);
    table_->setColumnWidth(c, table_->columnWidth(c) + 28);
  }
  updateDetails();
  updateButtons();
}

const CatalogModel* GetModelDialog::selected() const {
  const QTreeWidgetItem* item = table_ ? table_->currentItem() : nullptr;
  if (!item) return nullptr;
  const QString id = item->data(kModel, Qt::UserRole).toString();
  for (const CatalogModel& m : catalog_.models)
    if (m.id == id) return &m;
  return nullptr;
}

bool GetModelDialog::selectModel(const QString& id) {
  for (int i = 0; i < table_->topLevelItemCount(); ++i) {
    if (table_->topLevelItem(i)->data(kModel, Qt::UserRole).toString() == id) {
      table_->setCurrentItem(table_->topLevelItem(i));
      return true;
    }
  }
  return false;
}

void GetModelDialog::updateDetails() {
  const CatalogModel* m = selected();
  if (!m) {
    details_->clear();
    return;
  }
  const QUrl url = hubFileUrl(m->repo, m->file, endpoint_);
  details_->setText(
      tr("<b>%1</b> (%7 parameters) %2 · %3 · license: %4<br><span style='color:#777'>%5 — "
         "catalog facts checked: %6</span>")
          .arg(m->name.toHtmlEscaped(), m->quant, m->file.toHtmlEscaped(),
               m->license.isEmpty() ? tr("see the repository") : m->license.toHtmlEscaped(),
               url.toString().toHtmlEscaped(), m->verified.toHtmlEscaped(),
               m->params.isEmpty() ? QStringLiteral("?") : m->params.toHtmlEscaped()));
}

void GetModelDialog::updateButtons() {
  const ModelDownload::State s = download_->state();
  const bool busy = s == ModelDownload::State::Checking || s == ModelDownload::State::Connecting ||
                    s == ModelDownload::State::Downloading || s == ModelDownload::State::Verifying;
  const bool held = busy || download_->canResume();
  const CatalogModel* m = selected();
  const bool have = m && QFileInfo::exists(destinationFor(*m));
  go_->setText(have ? tr("Use this model") : tr("Download"));
  const bool mine = m && held && m->id == activeId_;  // Pause/Resume drive it
  go_->setEnabled(m && (have || (!mine && !busy)));
  pause_->setVisible(held);
  pause_->setText(download_->canResume() ? tr("Resume") : tr("Pause"));
  pause_->setEnabled(s != ModelDownload::State::Verifying);
  cancel_->setVisible(held);
}

void GetModelDialog::startSelected() {
  const CatalogModel* m = selected();
  if (!m) return;
  const QString dest = destinationFor(*m);
  if (QFileInfo::exists(dest)) {
    emit modelReady(dest);
    accept();
    return;
  }
  if (!activeId_.isEmpty() && activeId_ != m->id &&
      download_->state() != ModelDownload::State::Failed &&
      download_->state() != ModelDownload::State::Idle &&
      download_->state() != ModelDownload::State::Done)
    return;  // one download at a time
  activeId_ = m->id;
  speedClock_.start();
  speedBase_ = 0;
  progress_->setValue(0);
  progress_->show();
  download_->start({hubFileUrl(m->repo, m->file, endpoint_), dest, m->sha256});
  updateButtons();
}

void GetModelDialog::onProgress(qint64 received, qint64 total) {
  if (speedBase_ == 0 && received > 0 && download_->state() == ModelDownload::State::Downloading) {
    speedBase_ = received;  // bytes from a resumed .part do not count as speed
    speedClock_.restart();
  }
  if (total > 0) progress_->setValue(int(1000.0 * double(received) / double(total)));
  QString text =
      total > 0 ? tr("%1 of %2").arg(humanSize(received), humanSize(total)) : humanSize(received);
  if (download_->state() == ModelDownload::State::Checking) {
    text = tr("Checking the partial download: %1").arg(humanSize(received));
  } else if (speedClock_.elapsed() > 1000 && received > speedBase_) {
    const double rate = double(received - speedBase_) / (speedClock_.elapsed() / 1000.0);
    text += tr(" · %1/s").arg(humanSize(qint64(rate)));
    if (total > received && rate > 0) {
      const int secs = int(double(total - received) / rate);
      text += secs >= 90 ? tr(" · about %1 min left").arg((secs + 30) / 60)
                         : tr(" · about %1 s left").arg(secs);
    }
  }
  setStatus(text, false);
}

void GetModelDialog::onState(ModelDownload::State s) {
  using S = ModelDownload::State;
  if (s == S::Connecting)
    setStatus(tr("Connecting to %1…").arg(hubFileUrl("a/b", "c.gguf", endpoint_).host()), false);
  if (s == S::Paused)
    setStatus(tr("Paused at %1. The partial file is kept; Resume continues from there.")
                  .arg(humanSize(download_->received())),
              false);
  if (s == S::Verifying) setStatus(tr("Checking the SHA-256…"), false);
  if (s == S::Paused || s == S::Failed) speedBase_ = 0;
  updateButtons();
}

void GetModelDialog::onFailed(const QString& message) {
  setStatus(message, true);
  if (download_->received() == 0) progress_->hide();
  fillRows();
}

void GetModelDialog::onFinished(const QString& path) {
  progress_->setValue(1000);
  setStatus(tr("Downloaded and verified: %1").arg(QDir::toNativeSeparators(path)), false);
  activeId_.clear();
  fillRows();
  emit modelReady(path);
  accept();
}

void GetModelDialog::setStatus(const QString& text, bool error) {
  status_->setText(text);
  status_->setStyleSheet(error ? QStringLiteral("color:#c0392b;") : QString());
}

QString GetModelDialog::statusText() const { return status_->text(); }

}  // namespace rc::gui
