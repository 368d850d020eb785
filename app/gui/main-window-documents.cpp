// MainWindow: documents in the chat (docs/architecture.md section 21): the
// chips above the composer, the paperclip beside it, files dropped on the
// chat, and the Documents pane.
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QMimeData>
#include <QPainter>
#include <QPainterPath>
#include <QStatusBar>
#include <QToolButton>
#include <QVBoxLayout>

#include "chat/chat-view.h"
#include "chat/composer.h"
#include "chat/document-chips.h"
#include "document-controller.h"
#include "documents-dialog.h"
#include "library/library.h"
#include "main-window.h"

namespace rc::gui {
namespace {

// Local files among dropped URLs.
QStringList droppedFiles(const QMimeData* mime) {
  QStringList files;
  if (!mime || !mime->hasUrls()) return files;
  for (const QUrl& u : mime->urls()) {
    if (u.isLocalFile()) files << u.toLocalFile();
  }
  return files;
}

// The theme's attachment icon, or a drawn paperclip (no emoji font needed).
QIcon paperclipIcon() {
  QPixmap pm(64, 64);
  pm.fill(Qt::transparent);
  QPainter p(&pm);
  p.setRenderHint(QPainter::Antialiasing);
  p.scale(2, 2);
  p.translate(16, 16);
  p.rotate(40);
  p.translate(-16, -16);
  p.setPen(QPen(QColor(0x4b, 0x55, 0x63), 2.2, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin));
  QPainterPath clip;  // arcTo: degrees, counter-clockwise on screen
  clip.moveTo(22, 10);
  clip.lineTo(22, 24);
  clip.arcTo(QRectF(10, 18, 12, 12), 0, -180);
  clip.lineTo(10, 8);
  clip.arcTo(QRectF(10, 4, 8, 8), 180, -180);
  clip.lineTo(18, 22);
  clip.arcTo(QRectF(14, 20, 4, 4), 0, -180);
  clip.lineTo(14, 12);
  p.drawPath(clip);
  p.end();
  return QIcon::fromTheme(QStringLiteral("mail-attachment"), QIcon(pm));
}

}  // namespace

void MainWindow::makeDocuments(rc::store::StoreThread* store) {
  std::filesystem::path path = options_.libraryPath.toStdString();
  if (path.empty() && !options_.settingsFile.isEmpty())
    path = std::filesystem::path(options_.settingsFile.toStdString()).parent_path() / "library.db";
  if (path.empty()) {
    // The CLI's default, so `radixchat-cli docs` sees what the app added.
    Result<std::filesystem::path> def = rc::library::default_library_path();
    if (def.ok()) path = def.value();
  }
  documents_ = std::make_unique<DocumentController>(store, engine_.get(), controller_.get(), path);
  connect(documents_.get(), &DocumentController::errorOccurred, this,
          [this](const QString& message) { showError(tr("Documents"), message); });
  connect(documents_.get(), &DocumentController::info, this,
          [this](const QString& message) { statusBar()->showMessage(message, 8000); });
  if (!path.empty()) documents_->open();
}

void MainWindow::buildDocumentRow(QWidget* center, QVBoxLayout* v) {
  chips_ = new rc::ui::DocumentChips(center);
  v->addWidget(chips_);
  auto* row = new QWidget(center);
  row->setObjectName(QStringLiteral("composerRow"));
  row->setAttribute(Qt::WA_StyledBackground);
  auto* h = new QHBoxLayout(row);
  h->setContentsMargins(12, 0, 0, 0);
  h->setSpacing(0);
  attachButton_ = new QToolButton(row);
  attachButton_->setObjectName(QStringLiteral("attachButton"));
  attachButton_->setIcon(paperclipIcon());
  attachButton_->setIconSize(QSize(22, 22));
  attachButton_->setAccessibleName(tr("Attach documents"));
  attachButton_->setToolTip(
      tr("Attach documents: the model answers from them in this conversation (Ctrl+Shift+A). "
         "Files can also be dropped on the chat."));
  h->addWidget(attachButton_, 0, Qt::AlignTop);
  h->addWidget(composer_, 1);
  v->addWidget(row);

  connect(attachButton_, &QToolButton::clicked, this, [this] { openAttachDialog(true); });
  connect(chips_, &rc::ui::DocumentChips::removeRequested, documents_.get(),
          &DocumentController::detach);
  connect(documents_.get(), &DocumentController::attachedChanged, this,
          [this] { chips_->setChips(documents_->chips()); });
  chatView_->setAcceptDrops(true);
  chatView_->installEventFilter(this);
}

void MainWindow::openAttachDialog(bool attach) {
  // Not the static helper: a dialog object tests can find and answer.
  auto* dialog = new QFileDialog(this, attach ? tr("Attach documents") : tr("Add to the library"),
                                 QDir::homePath());
  dialog->setObjectName(QStringLiteral("attachDialog"));
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  dialog->setFileMode(QFileDialog::ExistingFiles);
  dialog->setNameFilters({tr("Documents (*.txt *.md *.markdown *.html *.htm *.pdf *.c *.cc *.cpp "
                             "*.h *.hpp *.py *.rs *.go *.js *.ts *.java *.json *.toml *.yaml)"),
                          tr("All files (*)")});
  connect(dialog, &QFileDialog::filesSelected, this,
          [this, attach](const QStringList& files) { documents_->addFiles(files, attach); });
  dialog->open();
}

DocumentsDialog* MainWindow::openDocuments() {
  if (!documentsDialog_) {
    documentsDialog_ = new DocumentsDialog(documents_.get(), this);
    connect(documentsDialog_, &DocumentsDialog::addRequested, this,
            [this] { openAttachDialog(false); });
  } else {
    documentsDialog_->refresh();
  }
  documentsDialog_->show();
  documentsDialog_->raise();
  return documentsDialog_;
}

bool MainWindow::attachDroppedFiles(QObject* watched, QEvent* event) {
  if (watched == chatView_) {
    if (event->type() == QEvent::DragEnter || event->type() == QEvent::DragMove) {
      auto* drag = static_cast<QDragMoveEvent*>(event);
      if (!droppedFiles(drag->mimeData()).isEmpty()) {
        drag->acceptProposedAction();
        return true;
      }
    } else if (event->type() == QEvent::Drop) {
      auto* drop = static_cast<QDropEvent*>(event);
      const QStringList files = droppedFiles(drop->mimeData());
      if (!files.isEmpty()) {
        drop->acceptProposedAction();
        documents_->addFiles(files, true);
        return true;
      }
    }
  }
  return false;
}

}  // namespace rc::gui
