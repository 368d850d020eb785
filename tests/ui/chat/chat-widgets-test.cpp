// The chat's models and widgets without an engine: ChatModel streaming and
// finishing, Markdown code blocks, the composer's keys, the view's bubbles
// and branch picker, in-place editing.
#include <gtest/gtest.h>
#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTest>
#include <QTextBlock>
#include <QTextDocument>
#include <QToolButton>

#include "chat/chat-model.h"
#include "chat/chat-view.h"
#include "chat/composer.h"
#include "chat/conversation-list-model.h"
#include "chat/markdown-render.h"
#include "chat/markdown-view.h"
#include "chat/message-widget.h"
#include "chat/reasoning-text.h"
#include "chat/sampling-dialog.h"
#include "chat/system-prompt-dialog.h"

using namespace rc::ui;

namespace {

ChatMessageRow row(qint64 id, ChatRole role, const QString& text, int index = 0, int count = 1) {
  ChatMessageRow r;
  r.id = id;
  r.parentId = id - 1;
  r.role = role;
  r.text = text;
  r.branchIndex = index;
  r.branchCount = count;
  return r;
}

QToolButton* buttonWithText(QWidget* w, const QString& text) {
  for (QToolButton* b : w->findChildren<QToolButton*>()) {
    if (b->text() == text) return b;
  }
  return nullptr;
}

}  // namespace

TEST(ChatModel, StreamingAppendsToTheRowAndFinishes) {
  ChatModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
  ChatMessageRow reply = row(2, ChatRole::Assistant, {});
  reply.streaming = true;
  model.setThread(7, {row(1, ChatRole::User, "Hi"), reply});
  EXPECT_EQ(model.rowCount(), 2);
  EXPECT_EQ(model.conversationId(), 7);

  QSignalSpy changed(&model, &ChatModel::dataChanged);
  model.appendText(2, "Hel");
  model.appendText(2, "lo");
  model.appendText(99, "ignored");  // not on screen
  ASSERT_EQ(changed.count(), 2);
  EXPECT_EQ(changed.at(0).at(0).toModelIndex().row(), 1);
  EXPECT_EQ(model.index(1).data(ChatModel::TextRole).toString(), "Hello");
  EXPECT_TRUE(model.index(1).data(ChatModel::StreamingRole).toBool());

  ReplyMetrics m;
  m.promptTokens = 30;
  m.cachedTokens = 20;
  m.completionTokens = 5;
  m.tokensPerSecond = 12.5;
  m.ttftMs = 40;
  m.finishReason = "stop";
  model.finishMessage(2, m, {});
  EXPECT_FALSE(model.index(1).data(ChatModel::StreamingRole).toBool());
  const QString metrics = model.index(1).data(ChatModel::MetricsTextRole).toString();
  EXPECT_TRUE(metrics.contains("20 cached, 10 computed")) << metrics.toStdString();
  EXPECT_TRUE(metrics.contains("12.5 tok/s")) << metrics.toStdString();
  EXPECT_EQ(model.rowOf(1), 0);
  EXPECT_EQ(model.rowOf(3), -1);
}

TEST(ConversationListModel, TitlesAndIds) {
  ConversationListModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::Fatal);
  model.setConversations({{4, "Radix trees", 1000}, {3, "", 900}});
  EXPECT_EQ(model.rowCount(), 2);
  EXPECT_EQ(model.index(0).data().toString(), "Radix trees");
  EXPECT_EQ(model.index(1).data().toString(), "Untitled");
  EXPECT_EQ(model.rowOf(3), 1);
}

TEST(Markdown, CodeBlocksAreMonospaceAndShaded) {
  QTextDocument doc;
  MarkdownStyle style;
  renderMarkdown(&doc, "Some `inline` text\n\n```cpp\nint x = 1;\nint y = 2;\n```\n\nAfter.",
                 style);
  int codeLines = 0;
  bool inlineShaded = false;
  for (QTextBlock b = doc.begin(); b.isValid(); b = b.next()) {
    if (isCodeBlock(b)) {
      ++codeLines;
      EXPECT_EQ(b.blockFormat().background().color(), style.codeBackground);
      EXPECT_TRUE(b.begin().fragment().charFormat().fontFixedPitch());
    }
    for (auto it = b.begin(); !it.atEnd(); ++it) {
      if (it.fragment().text() == "inline") {
        inlineShaded =
            it.fragment().charFormat().background().color() == style.inlineCodeBackground;
      }
    }
  }
  EXPECT_EQ(codeLines, 2);
  EXPECT_TRUE(inlineShaded);
  EXPECT_TRUE(doc.toPlainText().contains("int y = 2;"));
}

TEST(Markdown, UnclosedFenceWhileStreamingStillRenders) {
  QTextDocument doc;
  renderMarkdown(&doc, "Here:\n\n```\nfor (;;)");
  bool code = false;
  for (QTextBlock b = doc.begin(); b.isValid(); b = b.next()) code = code || isCodeBlock(b);
  EXPECT_TRUE(code);
}

TEST(MarkdownView, TakesTheHeightOfItsText) {
  MarkdownView view;
  view.setLayoutWidth(300, false);
  view.setMarkdownText("one line");
  const int oneLine = view.height();
  view.setMarkdownText("first\n\nsecond\n\nthird");
  EXPECT_GT(view.height(), oneLine * 2);
  view.setLayoutWidth(600, true);
  view.setMarkdownText("short");
  EXPECT_LT(view.width(), 200);  // shrinks to its text
}

TEST(Composer, EnterSendsShiftEnterAddsALine) {
  Composer composer;
  composer.setReady(true);
  QSignalSpy sent(&composer, &Composer::sendRequested);
  ComposerEdit* edit = composer.edit();
  QTest::keyClicks(edit, "first");
  QTest::keyClick(edit, Qt::Key_Return, Qt::ShiftModifier);
  QTest::keyClicks(edit, "second");
  EXPECT_EQ(sent.count(), 0);
  EXPECT_EQ(edit->toPlainText(), "first\nsecond");
  QTest::keyClick(edit, Qt::Key_Return);
  ASSERT_EQ(sent.count(), 1);
  EXPECT_EQ(sent.at(0).at(0).toString(), "first\nsecond");
  EXPECT_TRUE(edit->toPlainText().isEmpty());
}

TEST(Composer, KeepsTheTextWhileGeneratingOrWithoutAModel) {
  Composer composer;
  QSignalSpy sent(&composer, &Composer::sendRequested);
  QSignalSpy stop(&composer, &Composer::stopRequested);
  QTest::keyClicks(composer.edit(), "wait");
  QTest::keyClick(composer.edit(), Qt::Key_Return);  // not ready
  composer.setReady(true);
  composer.setGenerating(true);
  QTest::keyClick(composer.edit(), Qt::Key_Return);  // generating
  EXPECT_EQ(sent.count(), 0);
  EXPECT_EQ(composer.text(), "wait");
  // The button stops while generating.
  auto* button = composer.findChild<QPushButton*>("sendButton");
  ASSERT_NE(button, nullptr);
  EXPECT_EQ(button->text(), "Stop");
  button->click();
  EXPECT_EQ(stop.count(), 1);
}

TEST(ChatView, MirrorsTheModelAndShowsTheBranchPicker) {
  ChatModel model;
  ChatView view;
  view.resize(900, 700);
  view.setModel(&model);
  model.setThread(
      1, {row(1, ChatRole::User, "Question", 1, 3), row(2, ChatRole::Assistant, "Answer")});
  ASSERT_EQ(view.messageCount(), 2);

  MessageWidget* user = view.messageWidget(0);
  auto* label = user->findChild<QLabel*>("branchLabel");
  ASSERT_NE(label, nullptr);
  EXPECT_EQ(label->text(), "2/3");
  EXPECT_FALSE(label->isHidden());
  EXPECT_TRUE(view.messageWidget(1)->findChild<QLabel*>("branchLabel")->isHidden());

  QSignalSpy branch(&view, &ChatView::branchRequested);
  buttonWithText(user, "›")->click();
  buttonWithText(user, "‹")->click();
  ASSERT_EQ(branch.count(), 2);
  EXPECT_EQ(branch.at(0).at(0).toLongLong(), 1);
  EXPECT_EQ(branch.at(0).at(1).toInt(), 1);
  EXPECT_EQ(branch.at(1).at(1).toInt(), -1);

  QSignalSpy regen(&view, &ChatView::regenerateRequested);
  buttonWithText(view.messageWidget(1), "Regenerate")->click();
  ASSERT_EQ(regen.count(), 1);
  EXPECT_EQ(regen.at(0).at(0).toLongLong(), 2);

  // Busy: branch switching and regenerating are off.
  view.setBusy(true);
  EXPECT_FALSE(buttonWithText(user, "›")->isEnabled());
  EXPECT_FALSE(buttonWithText(view.messageWidget(1), "Regenerate")->isEnabled());
}

TEST(ChatView, StreamingTextReachesTheBubble) {
  ChatModel model;
  ChatView view;
  view.resize(900, 700);
  view.setModel(&model);
  ChatMessageRow reply = row(2, ChatRole::Assistant, {});
  reply.streaming = true;
  model.setThread(1, {row(1, ChatRole::User, "Hi"), reply});
  model.appendText(2, "Hello ");
  model.appendText(2, "**there**");
  EXPECT_EQ(view.messageWidget(1)->markdown(), "Hello **there**");
  // Rendering is coalesced while streaming; it catches up within 50 ms.
  auto* body = view.messageWidget(1)->findChild<MarkdownView*>();
  ASSERT_NE(body, nullptr);
  EXPECT_TRUE(QTest::qWaitFor([&] { return body->toPlainText() == "Hello there"; }, 2000));
}

TEST(MessageWidget, EditingSubmitsTheNewText) {
  MessageWidget w(row(5, ChatRole::User, "old question"));
  w.setAvailableWidth(700);
  QSignalSpy edited(&w, &MessageWidget::editSubmitted);
  buttonWithText(&w, "Edit")->click();
  EXPECT_TRUE(w.isEditing());
  auto* editor = w.findChild<QPlainTextEdit*>("editText");
  ASSERT_NE(editor, nullptr);
  EXPECT_EQ(editor->toPlainText(), "old question");
  editor->setPlainText("new question");
  for (QPushButton* b : w.findChildren<QPushButton*>()) {
    if (b->text() == "Send as new branch") b->click();
  }
  EXPECT_FALSE(w.isEditing());
  ASSERT_EQ(edited.count(), 1);
  EXPECT_EQ(edited.at(0).at(0).toLongLong(), 5);
  EXPECT_EQ(edited.at(0).at(1).toString(), "new question");
}

TEST(ChatView, RendersAReadableThread) {
  // A look at the bubbles with Markdown (saved next to the binary) and a
  // check that the code block is drawn on its shade.
  ChatModel model;
  ChatView view;
  view.resize(820, 640);
  view.setModel(&model);
  ChatMessageRow reply =
      row(2, ChatRole::Assistant,
          "A **radix tree** merges chains of single children:\n\n"
          "- shared prefixes are stored once\n- lookups walk edges, not characters\n\n"
          "```cpp\nauto m = cache.match_prefix(tokens);\ncache.lock(m.node);\n```\n\n"
          "Use `match_prefix` before `insert`.");
  ReplyMetrics m;
  m.promptTokens = 42;
  m.cachedTokens = 30;
  m.completionTokens = 50;
  m.tokensPerSecond = 120;
  m.ttftMs = 12;
  m.finishReason = "stop";
  reply.metrics = m;
  reply.model = "radixchat-demo";
  reply.branchIndex = 1;
  reply.branchCount = 2;
  model.setThread(1, {row(1, ChatRole::User, "What is a radix tree?"), reply});
  view.show();
  QTest::qWait(50);
  const QImage image = view.grab().toImage();
  image.save(QStringLiteral(RADIXCHAT_TEST_OUT "/chat-view-markdown.png"));
  const QRgb shade = MarkdownStyle{}.codeBackground.rgb();
  int shaded = 0;
  for (int y = 0; y < image.height(); y += 2) {
    for (int x = 0; x < image.width(); x += 2) shaded += image.pixel(x, y) == shade;
  }
  EXPECT_GT(shaded, 500);  // a code box of several hundred pixels
}

TEST(SystemPromptDialog, PresetsFillTheTextAndAreRemembered) {
  SystemPromptDialog dialog("my own prompt", std::nullopt);
  dialog.setPresets({{1, "Concise", "Be brief."}, {2, "Teacher", "Explain step by step."}}, 2);
  EXPECT_EQ(dialog.text(), "my own prompt");
  EXPECT_FALSE(dialog.presetId().has_value());
  auto* combo = dialog.findChild<QComboBox*>("presetCombo");
  ASSERT_NE(combo, nullptr);
  ASSERT_EQ(combo->count(), 3);  // (custom) + 2
  combo->setCurrentIndex(2);
  EXPECT_EQ(dialog.text(), "Explain step by step.");
  EXPECT_EQ(dialog.presetId(), std::optional<qint64>(2));
  // Default for new chats: the checkbox follows the selected preset.
  auto* box = dialog.findChild<QCheckBox*>();
  ASSERT_NE(box, nullptr);
  EXPECT_TRUE(box->isChecked());
  QSignalSpy def(&dialog, &SystemPromptDialog::defaultPresetChanged);
  box->setChecked(false);
  ASSERT_EQ(def.count(), 1);
  EXPECT_EQ(def.at(0).at(0).toLongLong(), 0);
  // Editing the text detaches it from the preset.
  dialog.findChild<QPlainTextEdit*>("systemPromptEdit")
      ->setPlainText("Explain step by step, kindly.");
  EXPECT_FALSE(dialog.presetId().has_value());
}

TEST(SamplingDialog, RoundTripsTheSettings) {
  ChatSampling s;
  s.temperature = 0.3;
  s.topK = 7;
  s.maxTokens = 99;
  s.contextLength = 512;
  for (const char* policy : {"stop", "truncate-middle", "rolling-window"}) {
    s.contextOverflow = QString::fromLatin1(policy);
    SamplingDialog dialog(s, ChatSampling{}, QString(), 1024);
    EXPECT_EQ(dialog.sampling(), s);
  }
}

// Restore Defaults fills in the defaults it was given (the model's
// recommendation over the app's own), and the dialog says where they come from.
TEST(SamplingDialog, RestoreDefaultsUsesTheModelsRecommendation) {
  ChatSampling mine;
  mine.temperature = 1.2;
  mine.maxTokens = 77;
  ChatSampling defaults;
  defaults.temperature = 0.5;
  defaults.minP = 0.1;
  SamplingDialog dialog(mine, defaults,
                        QStringLiteral("the model's recommendation: temperature 0.5"), 1024);
  auto* note = dialog.findChild<QLabel*>(QStringLiteral("samplingDefaultsNote"));
  ASSERT_NE(note, nullptr);
  EXPECT_TRUE(note->text().contains(QStringLiteral("temperature 0.5")))
      << note->text().toStdString();
  auto* buttons = dialog.findChild<QDialogButtonBox*>();
  ASSERT_NE(buttons, nullptr);
  buttons->button(QDialogButtonBox::RestoreDefaults)->click();
  EXPECT_EQ(dialog.sampling(), defaults);
  SamplingDialog plain(mine, ChatSampling{}, QString(), 1024);
  EXPECT_TRUE(plain.findChild<QLabel*>(QStringLiteral("samplingDefaultsNote"))
                  ->text()
                  .contains(QStringLiteral("recommends none")));
}

TEST(ReasoningText, SplitsThinkBlocks) {
  // Qwen3: the reply opens the block itself.
  ReasoningText q = splitReasoning("<think>\nplan it\n</think>\n\nThe answer.", false);
  EXPECT_TRUE(q.hasReasoning);
  EXPECT_FALSE(q.thinking);
  EXPECT_EQ(q.reasoning, "plan it");
  EXPECT_EQ(q.answer, "The answer.");
  // Still streaming the block.
  ReasoningText s = splitReasoning("<think>\nhalf a tho", false);
  EXPECT_TRUE(s.thinking);
  EXPECT_EQ(s.reasoning, "half a tho");
  EXPECT_TRUE(s.answer.isEmpty());
  // DeepSeek-R1: the prompt opened it; only the close appears.
  ReasoningText r = splitReasoning("plan\n</think>\n\nAnswer", true);
  EXPECT_EQ(r.reasoning, "plan");
  EXPECT_EQ(r.answer, "Answer");
  EXPECT_TRUE(splitReasoning("still planning", true).thinking);
  // Found without the hint too; a plain reply is left alone.
  EXPECT_EQ(splitReasoning("plan</think>Answer", false).answer, "Answer");
  ReasoningText plain = splitReasoning("Just text about <think> tags.", false);
  EXPECT_FALSE(plain.hasReasoning);
  EXPECT_EQ(plain.answer, "Just text about <think> tags.");
}

TEST(MessageWidget, ReasoningIsCollapsedUnderTheReply) {
  ChatMessageRow r = row(7, ChatRole::Assistant, "<think>\nsecret plan\n</think>\n\nHello!");
  MessageWidget w(r);
  w.setAvailableWidth(700);
  w.show();
  auto* body = w.findChildren<MarkdownView*>().front();
  EXPECT_EQ(body->toPlainText().trimmed(), "Hello!");
  EXPECT_FALSE(body->toPlainText().contains("think"));
  auto* toggle = w.findChild<QToolButton*>("reasoningToggle");
  ASSERT_NE(toggle, nullptr);
  EXPECT_TRUE(toggle->isVisible());
  auto* reasoning = w.findChild<MarkdownView*>("reasoningBody");
  ASSERT_NE(reasoning, nullptr);
  EXPECT_FALSE(reasoning->isVisible());
  toggle->click();
  EXPECT_TRUE(reasoning->isVisible());
  EXPECT_EQ(reasoning->toPlainText().trimmed(), "secret plan");
  toggle->click();
  EXPECT_FALSE(reasoning->isVisible());
  // A plain reply has no toggle.
  MessageWidget plain(row(8, ChatRole::Assistant, "Just an answer."));
  plain.show();
  EXPECT_FALSE(plain.findChild<QToolButton*>("reasoningToggle")->isVisible());
}

TEST(MessageWidget, ContextCutIsExplainedUnderTheReply) {
  ChatMessageRow r = row(9, ChatRole::Assistant, "ok");
  ReplyMetrics m;
  m.promptTokens = 900;
  m.cachedTokens = 20;
  m.droppedMessages = 6;
  m.prefixChanged = true;
  r.metrics = m;
  MessageWidget w(r);
  auto* footer = w.findChild<QLabel*>("metricsLabel");
  ASSERT_NE(footer, nullptr);
  EXPECT_TRUE(footer->text().contains("earliest 6 messages no longer fit"))
      << footer->text().toStdString();
  EXPECT_TRUE(footer->text().contains("cached prefix changed"));
  // One message: singular, no "(s)".
  m.droppedMessages = 1;
  r.metrics = m;
  MessageWidget one(r);
  const QString text = one.findChild<QLabel*>("metricsLabel")->text();
  EXPECT_TRUE(text.contains("The earliest message no longer fits")) << text.toStdString();
  EXPECT_FALSE(text.contains("(s)")) << text.toStdString();
}

TEST(ChatView, AStreamedReplyShowsAllItsLines) {
  // The bubble must grow with the text as it streams, never scroll inside.
  ChatModel model;
  ChatView view;
  view.resize(640, 600);
  view.setModel(&model);
  view.show();
  ChatMessageRow reply = row(2, ChatRole::Assistant, {});
  reply.streaming = true;
  model.setThread(1, {row(1, ChatRole::User, "Hi"), reply});
  const QString words =
      "Define the same request in a tiny language model, RadixChat, a small assistant "
      "running on this computer, with a radix tree cache that keeps every prefix.";
  for (const QString& w : words.split(' ')) {
    model.appendText(2, w + " ");
    QTest::qWait(5);
  }
  model.finishMessage(2, std::nullopt, {});
  QTest::qWait(100);
  auto* body = view.messageWidget(1)->findChild<MarkdownView*>();
  ASSERT_NE(body, nullptr);
  EXPECT_GE(body->viewport()->height() + 1, static_cast<int>(body->document()->size().height()))
      << "viewport " << body->viewport()->height() << " document "
      << body->document()->size().height();
  EXPECT_EQ(body->verticalScrollBar()->value(), 0);
  EXPECT_GE(body->document()->size().height(), 1.8 * body->fontMetrics().lineSpacing())
      << "width " << body->width() << " textWidth " << body->document()->textWidth() << " ideal "
      << body->document()->idealWidth() << " " << body->toPlainText().toStdString();
}
