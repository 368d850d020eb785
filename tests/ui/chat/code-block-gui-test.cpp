// Code blocks in a reply, in a real window under xvfb-run: the language on
// the block's header line, its colours, and a Copy button that puts exactly
// that block's code on the clipboard. Every Copy (a block's, a message's)
// says "Copied" for a moment.
#include <gtest/gtest.h>
#include <QApplication>
#include <QClipboard>
#include <QTest>
#include <QTextBlock>
#include <QTextDocument>
#include <QToolButton>
#include <vector>

#include "chat/copy-feedback.h"
#include "chat/markdown-render.h"
#include "chat/markdown-view.h"
#include "chat/message-widget.h"

using namespace rc::ui;

namespace {

ChatMessageRow reply(const QString& text) {
  ChatMessageRow r;
  r.id = 2;
  r.parentId = 1;
  r.role = ChatRole::Assistant;
  r.text = text;
  return r;
}

const QString kReply = QStringLiteral(
    "Here is a function:\n\n"
    "```python\ndef add(a, b):\n    # the sum\n    return a + b\n```\n\n"
    "And the shell:\n\n```sh\necho hi\n```\n\nDone.");

std::vector<QToolButton*> copyButtons(QWidget* w) {
  std::vector<QToolButton*> out;
  for (QToolButton* b : w->findChildren<QToolButton*>(QStringLiteral("codeCopyButton")))
    out.push_back(b);
  return out;
}

}  // namespace

TEST(CodeBlockGui, LabelHighlightAndCopyButton) {
  MessageWidget w(reply(kReply));
  w.setAvailableWidth(640);
  w.resize(700, 400);
  w.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&w));
  auto* body = w.findChild<MarkdownView*>();
  ASSERT_NE(body, nullptr);

  // The header line above the code names its language.
  ASSERT_EQ(body->codeBlocks().size(), 2u);
  const QTextBlock header = body->document()->findBlockByNumber(body->codeBlocks()[0].headerBlock);
  EXPECT_TRUE(isCodeHeader(header));
  EXPECT_EQ(header.text(), "python");
  EXPECT_TRUE(isCodeBlock(header.next()));
  EXPECT_EQ(header.next().text(), "def add(a, b):");
  // `def` is drawn as a keyword, the comment as a comment.
  const MarkdownStyle style;
  EXPECT_EQ(header.next().begin().fragment().text(), "def");
  EXPECT_EQ(header.next().begin().fragment().charFormat().foreground().color(), style.keyword);
  const QTextBlock comment = header.next().next();
  bool commentColoured = false;
  for (auto it = comment.begin(); !it.atEnd(); ++it) {
    if (it.fragment().text() == "# the sum")
      commentColoured = it.fragment().charFormat().foreground().color() == style.comment;
  }
  EXPECT_TRUE(commentColoured);

  // One Copy button per block, on its header line, inside the view.
  const auto buttons = copyButtons(body);
  ASSERT_EQ(buttons.size(), 2u);
  const QRectF line = header.layout()->lineAt(0).rect().translated(header.layout()->position());
  QToolButton* first = buttons[0]->y() < buttons[1]->y() ? buttons[0] : buttons[1];
  QToolButton* second = first == buttons[0] ? buttons[1] : buttons[0];
  EXPECT_TRUE(first->isVisible());
  EXPECT_TRUE(line.contains(QPointF(line.center().x(), first->geometry().center().y())));
  EXPECT_LE(first->geometry().right(), body->viewport()->width());
  w.grab().save(QStringLiteral(RADIXCHAT_TEST_OUT "/code-block.png"));

  QApplication::clipboard()->setText("before");
  QTest::mouseClick(first, Qt::LeftButton);
  EXPECT_EQ(QApplication::clipboard()->text(), "def add(a, b):\n    # the sum\n    return a + b");
  QTest::mouseClick(second, Qt::LeftButton);
  EXPECT_EQ(QApplication::clipboard()->text(), "echo hi");
}

TEST(CodeBlockGui, AStreamingBlockKeepsItsButtonAndCopiesTheLatestCode) {
  ChatMessageRow r = reply("```js\nlet x");
  r.streaming = true;
  MessageWidget w(r);
  w.setAvailableWidth(640);
  w.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&w));
  r.text = "```js\nlet x = 1;\nlet y = 2;\n```";
  r.streaming = false;
  w.setRow(r);
  auto* body = w.findChild<MarkdownView*>();
  const auto buttons = copyButtons(body);
  ASSERT_EQ(buttons.size(), 1u);
  QTest::mouseClick(buttons[0], Qt::LeftButton);
  EXPECT_EQ(QApplication::clipboard()->text(), "let x = 1;\nlet y = 2;");
}

TEST(CopyGui, EveryCopyConfirmsForAMoment) {
  MessageWidget w(reply(kReply));
  w.setAvailableWidth(640);
  w.show();
  ASSERT_TRUE(QTest::qWaitForWindowExposed(&w));
  QToolButton* message = nullptr;
  for (QToolButton* b : w.findChildren<QToolButton*>(QStringLiteral("messageAction")))
    if (b->text() == "Copy") message = b;
  ASSERT_NE(message, nullptr);
  QToolButton* code = copyButtons(&w).front();

  QTest::mouseClick(message, Qt::LeftButton);
  EXPECT_EQ(QApplication::clipboard()->text(), kReply);
  EXPECT_EQ(message->text(), "Copied");
  QTest::mouseClick(code, Qt::LeftButton);
  EXPECT_EQ(code->text(), "Copied");
  // The confirmation fits: the button is placed by its right edge.
  EXPECT_GE(code->width(), code->sizeHint().width());
  EXPECT_TRUE(QTest::qWaitFor([&] { return message->text() == "Copy"; }, kCopiedConfirmMs + 1000));
  EXPECT_TRUE(QTest::qWaitFor([&] { return code->text() == "Copy"; }, kCopiedConfirmMs + 1000));
  // A second click says it again.
  QTest::mouseClick(message, Qt::LeftButton);
  EXPECT_EQ(message->text(), "Copied");
}
