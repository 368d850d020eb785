// ConversationSidebar: the column of conversations on the left: "New chat",
// a search box (title and message text, any branch), the list (most recent
// first) and a context menu (rename, delete, export). While the search box
// has text, choosing a conversation (a click, or Enter in the box for the
// first one found) asks for it to be opened at the matching message. It can also show a
// filtered list handed to it (conversations sharing a cached prefix) with a
// banner to leave that view. GUI thread; it emits requests only.
#pragma once

#include <QTimer>
#include <QWidget>

class QLabel;
class QLineEdit;
class QListView;
class QPushButton;

namespace rc::ui {

class ConversationListModel;

class ConversationSidebar : public QWidget {
  Q_OBJECT
 public:
  explicit ConversationSidebar(QWidget* parent = nullptr);

  void setModel(ConversationListModel* model);
  // Selects the row of `id` without emitting conversationSelected.
  void setCurrentConversation(qint64 id);
  // A non-empty banner replaces the search: the list shows a special set.
  void setBanner(const QString& text);
  void focusSearch();
  QString searchText() const;
  QListView* listView() const { return list_; }

 signals:
  void newRequested();
  void conversationSelected(qint64 id);
  void searchChanged(const QString& text);  // debounced
  // A conversation chosen from search results (0: the first one found, on
  // Enter); searchChanged with the box's text comes first.
  void searchResultChosen(qint64 id);
  void renameRequested(qint64 id);
  void deleteRequested(qint64 id);
  void exportRequested(qint64 id, const QString& format);  // "markdown" | "json"
  void bannerClosed();

 private:
  qint64 idAt(int row) const;
  void showMenu(const QPoint& pos);

  ConversationListModel* model_ = nullptr;
  QLineEdit* search_ = nullptr;
  QListView* list_ = nullptr;
  QWidget* banner_ = nullptr;
  QLabel* bannerText_ = nullptr;
  QTimer searchTimer_;
  qint64 current_ = 0;
  bool selecting_ = false;  // setCurrentConversation in progress
};

}  // namespace rc::ui
