#include "chat/conversation-sidebar.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListView>
#include <QMenu>
#include <QPushButton>
#include <QVBoxLayout>

#include "chat/conversation-list-model.h"

namespace rc::ui {

ConversationSidebar::ConversationSidebar(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("sidebar"));
  auto* v = new QVBoxLayout(this);
  v->setContentsMargins(10, 10, 10, 10);
  v->setSpacing(8);
  auto* newButton = new QPushButton(tr("+  New chat"), this);
  newButton->setObjectName(QStringLiteral("newChatButton"));
  newButton->setToolTip(tr("Start a new conversation (Ctrl+N)"));
  v->addWidget(newButton);
  search_ = new QLineEdit(this);
  search_->setObjectName(QStringLiteral("searchEdit"));
  search_->setPlaceholderText(tr("Search conversations (Ctrl+F)"));
  search_->setClearButtonEnabled(true);
  v->addWidget(search_);

  banner_ = new QWidget(this);
  auto* bh = new QHBoxLayout(banner_);
  bh->setContentsMargins(0, 0, 0, 0);
  bannerText_ = new QLabel(banner_);
  bannerText_->setWordWrap(true);
  bannerText_->setObjectName(QStringLiteral("sidebarBanner"));
  auto* close = new QPushButton(tr("Show all"), banner_);
  bh->addWidget(bannerText_, 1);
  bh->addWidget(close);
  banner_->hide();
  v->addWidget(banner_);

  list_ = new QListView(this);
  list_->setObjectName(QStringLiteral("conversationList"));
  list_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  list_->setUniformItemSizes(true);
  list_->setContextMenuPolicy(Qt::CustomContextMenu);
  list_->setTextElideMode(Qt::ElideRight);
  // Long titles are elided to the list's width, never scrolled sideways.
  list_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  v->addWidget(list_, 1);

  searchTimer_.setSingleShot(true);
  searchTimer_.setInterval(200);
  connect(newButton, &QPushButton::clicked, this, &ConversationSidebar::newRequested);
  connect(search_, &QLineEdit::textChanged, this, [this] { searchTimer_.start(); });
  connect(&searchTimer_, &QTimer::timeout, this, [this] { emit searchChanged(search_->text()); });
  connect(search_, &QLineEdit::returnPressed, this, [this] {
    if (search_->text().isEmpty()) return;
    searchTimer_.stop();  // the search is what the box says now
    emit searchChanged(search_->text());
    emit searchResultChosen(0);
  });
  connect(close, &QPushButton::clicked, this, [this] {
    setBanner({});
    emit bannerClosed();
  });
  connect(list_, &QListView::customContextMenuRequested, this, &ConversationSidebar::showMenu);
}

void ConversationSidebar::setModel(ConversationListModel* model) {
  if (model_) disconnect(model_, nullptr, this, nullptr);
  model_ = model;
  list_->setModel(model);
  if (!model) return;
  // The selection model is replaced with the model: connect afresh.
  connect(list_->selectionModel(), &QItemSelectionModel::currentChanged, this,
          [this](const QModelIndex& index) {
            if (selecting_ || !index.isValid()) return;
            const qint64 id = idAt(index.row());
            if (!search_->text().isEmpty() && !search_->isHidden()) {
              current_ = id;
              emit searchResultChosen(id);
            } else if (id != current_) {
              current_ = id;
              emit conversationSelected(id);
            }
          });
  // A reset (new list from the store) keeps the current row selected.
  connect(model, &QAbstractItemModel::modelReset, this,
          [this] { setCurrentConversation(current_); });
}

void ConversationSidebar::setCurrentConversation(qint64 id) {
  current_ = id;
  if (!model_) return;
  selecting_ = true;
  const int row = model_->rowOf(id);
  if (row < 0) {
    list_->clearSelection();
    list_->setCurrentIndex({});
  } else {
    list_->setCurrentIndex(model_->index(row));
  }
  selecting_ = false;
}

void ConversationSidebar::setBanner(const QString& text) {
  bannerText_->setText(text);
  banner_->setVisible(!text.isEmpty());
  search_->setVisible(text.isEmpty());
}

void ConversationSidebar::focusSearch() {
  search_->setFocus();
  search_->selectAll();
}

QString ConversationSidebar::searchText() const { return search_->text(); }

qint64 ConversationSidebar::idAt(int row) const {
  return model_ ? model_->index(row).data(ConversationListModel::IdRole).toLongLong() : 0;
}

void ConversationSidebar::showMenu(const QPoint& pos) {
  const QModelIndex index = list_->indexAt(pos);
  if (!index.isValid()) return;
  const qint64 id = idAt(index.row());
  QMenu menu(this);
  menu.addAction(tr("Rename…"), this, [this, id] { emit renameRequested(id); });
  menu.addAction(tr("Export as Markdown…"), this,
                 [this, id] { emit exportRequested(id, QStringLiteral("markdown")); });
  menu.addAction(tr("Export as JSON…"), this,
                 [this, id] { emit exportRequested(id, QStringLiteral("json")); });
  menu.addSeparator();
  menu.addAction(tr("Delete"), this, [this, id] { emit deleteRequested(id); });
  menu.exec(list_->viewport()->mapToGlobal(pos));
}

}  // namespace rc::ui
