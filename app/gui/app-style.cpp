#include "app-style.h"

#include <QApplication>
#include <QFont>
#include <QPalette>
#include <QStyleFactory>

namespace rc::gui {

namespace {

// Object names are set by the widgets (ui/chat) and the main window.
const char* const kStyleSheet = R"(
QMainWindow, QWidget#centerPane { background: #f7f8fa; }
QWidget#sidebar { background: #eef0f4; }
QPushButton#newChatButton {
  background: #2563eb; color: white; border: none; border-radius: 8px;
  padding: 8px 10px; font-weight: 600; text-align: left;
}
QPushButton#newChatButton:hover { background: #1d4ed8; }
QLineEdit#searchEdit {
  border: 1px solid #d0d5dd; border-radius: 8px; padding: 5px 8px; background: white;
}
QListView#conversationList { border: none; background: transparent; outline: none; }
QListView#conversationList::item { padding: 7px 8px; border-radius: 6px; color: #1f2937; }
QListView#conversationList::item:hover { background: #e2e6ee; }
QListView#conversationList::item:selected { background: #d6e2fb; color: #0f172a; }
QLabel#sidebarBanner { color: #374151; }
QWidget#chatHeader { background: white; border-bottom: 1px solid #e5e7eb; }
QLabel#chatTitle { font-size: 13pt; font-weight: 600; color: #111827; }
QLabel#systemSummary { color: #6b7280; }
QScrollArea#chatView, QWidget#chatContent { background: #f7f8fa; }
QLabel#chatPlaceholder { color: #6b7280; font-size: 12pt; padding: 80px 20px; }
QLabel#chatPlaceholder[page="true"] {
  color: #1f2937; font-size: 10.5pt; padding: 20px 24px; background: white;
  border: 1px solid #e3e6eb; border-radius: 12px;
}
QFrame#userBubble { background: #dbe7fd; border-radius: 12px; }
QFrame#assistantBubble { background: white; border: 1px solid #e3e6eb; border-radius: 12px; }
QFrame#systemBubble { background: #fff7e6; border: 1px solid #f3dfb3; border-radius: 12px; }
QFrame#userBubble[found="true"], QFrame#assistantBubble[found="true"],
QFrame#systemBubble[found="true"] { border: 2px solid #f59e0b; }
QLabel#roleLabel { font-weight: 600; color: #374151; }
QLabel#branchLabel { color: #374151; padding: 0 2px; }
QLabel#metricsLabel { color: #6b7280; font-size: 8.5pt; }
QLabel#metricsLabel[error="true"] { color: #b42318; }
QToolButton#messageAction { color: #4b5563; border: none; padding: 2px 6px; border-radius: 4px; }
QToolButton#messageAction:hover { background: #eceff3; color: #111827; }
QToolButton#messageAction:disabled { color: #b8bec8; }
QToolButton#codeCopyButton {
  color: #4b5563; border: none; padding: 1px 6px; border-radius: 4px; font-size: 8.5pt;
}
QToolButton#codeCopyButton:hover { background: #e2e6ec; color: #111827; }
QWidget#composer { background: white; border-top: 1px solid #e5e7eb; }
QPlainTextEdit#composerEdit {
  border: 1px solid #cfd5de; border-radius: 10px; padding: 6px 8px; background: white;
}
QPlainTextEdit#composerEdit:focus { border: 1px solid #2563eb; }
QPushButton#sendButton {
  background: #2563eb; color: white; border: none; border-radius: 10px;
  padding: 8px 16px; font-weight: 600;
}
QPushButton#sendButton:hover { background: #1d4ed8; }
QPushButton#sendButton:disabled { background: #a9b8d9; }
QPushButton#sendButton[stop="true"] { background: #dc2626; }
QPushButton#sendButton[stop="true"]:hover { background: #b91c1c; }
QLabel#composerHint { color: #8a919c; font-size: 8.5pt; }
QWidget#documentChips, QWidget#composerRow { background: white; }
QWidget#documentChip { background: #eef2ff; border: 1px solid #c7d2fe; border-radius: 10px; }
QLabel#documentChipLabel { color: #1e3a8a; }
QToolButton#documentChipRemove { color: #4b5563; border: none; padding: 0 4px; }
QToolButton#attachButton { border: none; border-radius: 8px; padding: 6px; font-size: 14pt; }
QToolButton#attachButton:hover { background: #eceff3; }
QLabel#backendLabel { color: #374151; padding: 0 8px; }
QLabel#statusMetrics { color: #374151; padding: 0 6px; }
QSplitter::handle { background: #e5e7eb; }
)";

}  // namespace

void applyAppStyle(QApplication& app) {
  // Fusion looks the same everywhere and honours the style sheet fully.
  if (QStyle* fusion = QStyleFactory::create(QStringLiteral("Fusion"))) app.setStyle(fusion);
  QFont font = app.font();
  if (font.pointSizeF() > 0 && font.pointSizeF() < 10.0) font.setPointSizeF(10.0);
  app.setFont(font);
  QPalette p = app.palette();
  p.setColor(QPalette::Window, QColor(0xf7, 0xf8, 0xfa));
  p.setColor(QPalette::Base, Qt::white);
  p.setColor(QPalette::Highlight, QColor(0x25, 0x63, 0xeb));
  app.setPalette(p);
  app.setStyleSheet(QString::fromLatin1(kStyleSheet));
}

}  // namespace rc::gui
