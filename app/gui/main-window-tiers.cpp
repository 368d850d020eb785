// MainWindow's cache tiers: the disk cache is on by default (its folder and
// budget come from WindowOptions and the settings), Model > Disk cache turns
// it off, "Disk cache size…" sets its budget, "Clear disk cache" empties it;
// the status bar says what each tier holds or why it is down.
#include <QAction>
#include <QDir>
#include <QFileInfo>
#include <QInputDialog>
#include <QLabel>
#include <QMenu>
#include <QSettings>
#include <QStatusBar>
#include <QTimer>

#include "chat-controller.h"
#include "chat/engine-host.h"
#include "main-window.h"
#include "radixchat/engine.h"
#include "tier-status.h"

namespace rc::gui {

namespace {
constexpr qint64 kDefaultDiskBytes = qint64(2) << 30;
const QString kDiskKey = QStringLiteral("cache/disk");
const QString kDiskBytesKey = QStringLiteral("cache/diskBytes");
}  // namespace

void MainWindow::buildTierMenu(QMenu* model) {
  model->addSeparator();
  diskCacheAction_ = model->addAction(tr("Dis&k cache"));
  diskCacheAction_->setCheckable(true);
  diskCacheAction_->setToolTip(
      tr("Keep computed prompts on disk: a conversation reopened after a restart, or pushed "
         "out of memory, loads instead of being computed again"));
  diskCacheAction_->setChecked(settings_->value(kDiskKey, true).toBool() &&
                               !options_.kvDisk.isEmpty());
  diskCacheAction_->setEnabled(!options_.kvDisk.isEmpty());
  connect(diskCacheAction_, &QAction::toggled, this, [this](bool on) {
    settings_->setValue(kDiskKey, on);
    reloadForTiers();
  });
  model->addAction(tr("Disk cache si&ze…"), this, [this] {
    const qint64 now = settings_->value(kDiskBytesKey, kDefaultDiskBytes).toLongLong();
    bool ok = false;
    const double gib = QInputDialog::getDouble(
        this, tr("Disk cache size"), tr("Largest size of the disk cache, in GiB:"),
        double(now) / double(qint64(1) << 30), 0.1, 4096.0, 1, &ok);
    if (!ok) return;
    const qint64 bytes = qint64(gib * double(qint64(1) << 30));
    if (bytes == now) return;
    settings_->setValue(kDiskBytesKey, bytes);
    reloadForTiers();
  });
  model->addAction(tr("C&lear disk cache"), this, [this] {
    if (!engine_->hasModel()) {
      statusBar()->showMessage(tr("No model is loaded."), 6000);
      return;
    }
    if (!engine_->engine()->stats().tiers.enabled) {
      statusBar()->showMessage(tr("The disk cache is off: there is nothing to clear."), 6000);
      return;
    }
    engine_->clearTierCache();
  });
  connect(engine_.get(), &rc::ui::EngineHost::tierCacheCleared, this, [this](const QString& e) {
    statusBar()->showMessage(e.isEmpty() ? tr("Disk cache cleared.")
                                         : tr("The disk cache could not be cleared: %1").arg(e),
                             8000);
    updateTierStatus();
  });
}

void MainWindow::setTierRequest(rc::ui::ModelRequest& r) const {
  r.kvDisk.clear();
  r.kvRedis.clear();
  // `off` reuses no prefix, so there is nothing to keep below the pool (the
  // engine refuses tiers under it).
  if (r.cachePolicy == QLatin1String("off")) return;
  r.kvRedis = options_.kvRedis;
  r.kvDiskBytes = options_.kvDiskBytes
                      ? *options_.kvDiskBytes
                      : settings_->value(kDiskBytesKey, kDefaultDiskBytes).toLongLong();
  if (options_.kvDisk.isEmpty() || !settings_->value(kDiskKey, true).toBool()) return;
  r.kvDisk = options_.kvDisk;
  // Tests and --data-dir keep everything in their folder, the cache too.
  if (r.kvDisk == QLatin1String("default") && !options_.settingsFile.isEmpty())
    r.kvDisk = QFileInfo(options_.settingsFile).dir().filePath(QStringLiteral("kv"));
}

void MainWindow::reloadForTiers() {
  if (!engine_->hasModel() || controller_->remote()) return;
  const rc::ui::ModelRequest& r = engine_->modelRequest();
  loadModel(r.path, r.cachePolicy, r.poolTokens);
}

void MainWindow::buildTierStatus() {
  tierLabel_ = new QLabel(statusBar());
  tierLabel_->setObjectName(QStringLiteral("statusTiers"));
  tierLabel_->hide();
  statusBar()->addPermanentWidget(tierLabel_);
  // The engine's counters change as it writes blocks below; a second's
  // delay is fine for a status line.
  tierTimer_ = new QTimer(this);
  tierTimer_->setInterval(1000);
  connect(tierTimer_, &QTimer::timeout, this, &MainWindow::updateTierStatus);
  tierTimer_->start();
}

void MainWindow::updateTierStatus() {
  const rc::Engine* e = engine_->engine();
  if (!e || controller_->remote()) {
    tierLabel_->hide();
    return;
  }
  const rc::TierStats tiers = e->stats().tiers;
  QString text = tierStatusText(tiers);
  QString tip = tierStatusTooltip(tiers);
  const QString notice = engine_->model().tierNotice;
  if (!notice.isEmpty()) {  // the disk tier was asked for and left out
    text = text.isEmpty() ? tr("disk off") : tr("disk off · ") + text;
    tip = tip.isEmpty() ? notice : notice + QLatin1Char('\n') + tip;
  }
  tierLabel_->setText(text);
  tierLabel_->setToolTip(tip);
  tierLabel_->setVisible(!text.isEmpty());
}

}  // namespace rc::gui
