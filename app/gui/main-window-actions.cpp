// MainWindow: reactions to the controller, the engine host and the cache
// panel, and the dialogs behind the menus.
#include <QClipboard>
#include <QDir>
#include <QFileDialog>
#include <QGuiApplication>
#include <QInputDialog>
#include <QLabel>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QSettings>
#include <QSplitter>
#include <QStandardPaths>
#include <QStatusBar>
#include <algorithm>
#include <memory>

#include "chat/chat-view.h"
#include "chat/composer.h"
#include "chat/conversation-sidebar.h"
#include "chat/engine-host.h"
#include "chat/sampling-dialog.h"
#include "chat/save-folder.h"
#include "chat/system-prompt-dialog.h"
#include "main-window.h"
#include "model-picker.h"
#include "panel/cache-panel.h"
#include "radixchat/backend-probe.h"
#include "recording-source.h"
#include "recording/miss-analysis.h"

namespace rc::gui {

void MainWindow::connectController() {
  ChatController* c = controller_.get();
  connect(c, &ChatController::conversationChanged, this, [this](qint64 id) {
    // The introduction gives way to the first conversation there is.
    if (welcome_ && id > 0) {
      welcome_ = false;
      updateComposerState();
    }
    sidebar_->setCurrentConversation(id);
    updateHeader();
    listLoaded_ = true;  // the first one comes once start() has read the store
    maybeReady();
  });
  connect(c, &ChatController::generatingChanged, this, &MainWindow::updateComposerState);
  connect(c, &ChatController::presetsChanged, this, &MainWindow::updateHeader);
  connect(c, &ChatController::replyFinished, this,
          [this](qint64, const ReplyMetrics& metrics, const QString& error) {
            metricsLabel_->setText(formatMetrics(metrics));
            if (!error.isEmpty())
              statusBar()->showMessage(tr("The reply failed: %1").arg(error), 10000);
          });
  connect(c, &ChatController::errorOccurred, this,
          [this](const QString& message) { statusBar()->showMessage(message, 10000); });
  connect(c, &ChatController::info, this,
          [this](const QString& message) { statusBar()->showMessage(message, 6000); });
  connect(c, &ChatController::contextCut, this,
          [this](int dropped, const std::vector<int32_t>& prompt, int cached) {
            panel_->markContextCut(dropped, prompt, cached);
          });
  connect(c, &ChatController::exported, this, [this](const QString& path) {
    statusBar()->showMessage(tr("Exported to %1").arg(QDir::toNativeSeparators(path)), 8000);
  });
  connect(c, &ChatController::promptTokensReady, this,
          [this](qint64 messageId, const std::vector<int32_t>& tokens) {
            panel_->setVisible(true);
            panelAction_->setChecked(true);
            // The request behind the message (a reply's own, a user
            // message's reply's), for the panel's "Why it missed": its
            // prompt length and what the cache served when it ran.
            int prompt = -1, cached = -1;
            const std::vector<rc::ui::ChatMessageRow>& rows = controller_->chatModel()->rows();
            for (size_t i = 0; i < rows.size(); ++i) {
              if (rows[i].id != messageId) continue;
              const size_t r = rows[i].role == rc::ui::ChatRole::Assistant ? i : i + 1;
              if (r < rows.size() && rows[r].role == rc::ui::ChatRole::Assistant &&
                  rows[r].metrics && rows[r].metrics->promptTokens > 0 &&
                  rows[r].metrics->droppedMessages == 0 && !controller_->remote() &&
                  // A user message's tokens are its request's prompt, unless the
                  // thread changed since (then the reply's numbers are another's).
                  (r == i || int(tokens.size()) == rows[r].metrics->promptTokens)) {
                prompt = rows[r].metrics->promptTokens;
                cached = rows[r].metrics->cachedTokens;
              }
              break;
            }
            panel_->locateTokens(tokens, prompt, cached);
          });
  connect(c, &ChatController::prefixMatches, this,
          [this](const std::vector<rc::ui::PrefixMatch>& matches) {
            QStringList titles;
            std::vector<qint64> ids;
            prefixLeaves_.clear();
            for (const rc::ui::PrefixMatch& m : matches) {
              titles << m.title;
              ids.push_back(m.conversationId);
              prefixLeaves_[m.conversationId] = m.leafId;
            }
            panel_->showConversationsForNode(titles);
            sidebar_->setBanner(
                matches.empty() ? tr("No saved conversation starts with this cached prefix.")
                : matches.size() == 1
                    ? tr("1 conversation starts with this cached prefix; pick it to open that "
                         "branch.")
                    : tr("%1 conversations start with this cached prefix; pick one to open "
                         "that branch.")
                          .arg(matches.size()));
            controller_->setListFilter(ids);
          });

  connect(sidebar_, &rc::ui::ConversationSidebar::newRequested, this, [this] {
    controller_->newConversation();
    composer_->focusInput();
  });
  connect(sidebar_, &rc::ui::ConversationSidebar::conversationSelected, this, [this](qint64 id) {
    if (auto it = prefixLeaves_.find(id); it != prefixLeaves_.end()) {
      controller_->openBranch(id, it->second);
    } else {
      controller_->selectConversation(id);
    }
  });
  connect(sidebar_, &rc::ui::ConversationSidebar::searchChanged, c, &ChatController::setSearchText);
  connect(sidebar_, &rc::ui::ConversationSidebar::searchResultChosen, c,
          &ChatController::openSearchResult);
  connect(c, &ChatController::searchHitShown, chatView_, &rc::ui::ChatView::showMessage);
  connect(sidebar_, &rc::ui::ConversationSidebar::renameRequested, this,
          &MainWindow::renameConversation);
  connect(sidebar_, &rc::ui::ConversationSidebar::deleteRequested, this,
          &MainWindow::deleteConversation);
  connect(sidebar_, &rc::ui::ConversationSidebar::exportRequested, this,
          &MainWindow::exportConversation);
  connect(sidebar_, &rc::ui::ConversationSidebar::bannerClosed, this, [this] {
    prefixLeaves_.clear();
    controller_->setListFilter(std::nullopt);
  });

  connect(chatView_, &rc::ui::ChatView::editSubmitted, c, &ChatController::editMessage);
  connect(chatView_, &rc::ui::ChatView::regenerateRequested, c, &ChatController::regenerate);
  connect(chatView_, &rc::ui::ChatView::branchRequested, c, &ChatController::switchBranch);
  connect(chatView_, &rc::ui::ChatView::locateRequested, c, &ChatController::requestPromptTokens);
  connect(composer_, &rc::ui::Composer::sendRequested, c, &ChatController::send);
  connect(composer_, &rc::ui::Composer::stopRequested, c, &ChatController::stop);
}

void MainWindow::connectEngine() {
  rc::ui::EngineHost* e = engine_.get();
  // The panel must switch engines synchronously, before the old one goes.
  connect(e, &rc::ui::EngineHost::engineChanged, this, [this](rc::Engine* engine) {
    if (panel_) panel_->setEngine(engine);
  });
  connect(e, &rc::ui::EngineHost::loadStarted, this, [this](const rc::ui::ModelRequest& r) {
    progress_->setValue(0);
    progress_->show();
    cancelLoad_->show();
    statusBar()->showMessage(r.path.isEmpty()
                                 ? tr("Loading the bundled model…")
                                 : tr("Loading %1…").arg(QDir::toNativeSeparators(r.path)));
    updateComposerState();
  });
  connect(e, &rc::ui::EngineHost::loadProgress, this,
          [this](double f) { progress_->setValue(static_cast<int>(f * 100)); });
  connect(e, &rc::ui::EngineHost::modelReady, this, [this](const rc::ui::ModelDescription& m) {
    progress_->hide();
    cancelLoad_->hide();
    picker_->setLoadedModel(m.bundled ? QString() : m.path, m.name);
    // Which device runs it and why (e.g. no CUDA device, or this build has
    // no CUDA backend): shown, not hidden in a log.
    // The chat template too: a fallback (unrecognised template) is flagged.
    const QString tmpl = m.chatTemplateNotice.isEmpty()
                             ? tr("template %1").arg(m.chatTemplate)
                             : tr("⚠ template %1 (fallback)").arg(m.chatTemplate);
    backendLabel_->setText(tr("Backend: %1 — %2").arg(m.device, m.backendReason) +
                           QStringLiteral("  ·  ") + tmpl);
    // The technical detail (driver answer, plugin path) lives here, not in
    // the status line: most desktops have no NVIDIA GPU and need no alarm.
    const QString plugin =
        QString::fromStdString(rc::probe_backend(rc::BackendSetting::automatic).cuda_plugin);
    backendLabel_->setToolTip(
        tr("Backend: %1 (%2)\n%3\nCUDA plugin: %8\nContext %4 tokens · cache %5, pool %6 "
           "tokens\nChat template: %7")
            .arg(m.backend, m.device, m.backendReason)
            .arg(m.contextLength)
            .arg(m.cachePolicy)
            .arg(m.poolTokens)
            .arg(m.chatTemplateNotice.isEmpty() ? m.chatTemplateDetail : m.chatTemplateNotice)
            .arg(plugin));
    if (!m.tierNotice.isEmpty()) {
      statusBar()->showMessage(tr("Loaded %1. %2").arg(m.name, m.tierNotice), 30000);
    } else if (!m.chatTemplateNotice.isEmpty()) {
      statusBar()->showMessage(tr("Loaded %1: %2").arg(m.name, m.chatTemplateNotice), 30000);
    } else {
      statusBar()->showMessage(tr("Loaded %1 on %2 — %3").arg(m.name, m.device, m.backendReason),
                               10000);
    }
    settings_->setValue(QStringLiteral("models/path"), m.bundled ? QString() : m.path);
    settings_->setValue(QStringLiteral("models/cache"), engine_->modelRequest().cachePolicy);
    settings_->setValue(QStringLiteral("models/pool"), engine_->modelRequest().poolTokens);
    settings_->setValue(QStringLiteral("models/recent"), picker_->recent());
    firstLoad_ = false;
    updateTierStatus();
    updateComposerState();
    maybeReady();
  });
  connect(e, &rc::ui::EngineHost::loadFailed, this, [this](const QString& message, bool cancelled) {
    progress_->hide();
    cancelLoad_->hide();
    picker_->loadEnded();
    const QString still =
        engine_->hasModel() ? tr(" Still using %1.").arg(engine_->model().name) : QString();
    const bool startup = firstLoad_;
    firstLoad_ = false;
    updateComposerState();
    if (cancelled) {
      statusBar()->showMessage(tr("Loading cancelled.") + still, 10000);
      return;
    }
    // A saved model that no longer loads: fall back to the bundled one.
    if (startup && !loadingPath_.isEmpty() && !options_.modelPath) {
      statusBar()->showMessage(
          tr("%1 could not be loaded (%2); using the bundled model.").arg(loadingPath_, message),
          15000);
      loadModel(QString(), QStringLiteral("radix"), 0);
      return;
    }
    showError(tr("The model could not be loaded"),
              message + (still.isEmpty() ? QString() : QStringLiteral("\n\n") + still.trimmed()));
    if (startup) emit startupLoadFailed(message);
  });
  connect(e, &rc::ui::EngineHost::warmedUp, this, [this](int count, const QString& error) {
    if (!error.isEmpty()) {
      statusBar()->showMessage(tr("Could not warm the saved system prompts: %1").arg(error), 8000);
    } else if (count > 0) {
      statusBar()->showMessage(
          count == 1 ? tr("1 saved system prompt warmed into the cache.")
                     : tr("%1 saved system prompts warmed into the cache.").arg(count),
          6000);
    }
  });
  connect(picker_, &ModelPicker::modelRequested, this, [this](const QString& path) {
    loadModel(path, engine_->modelRequest().cachePolicy, engine_->modelRequest().poolTokens);
  });
  connect(picker_, &ModelPicker::getModelRequested, this, [this] { openGetModel(); });
}

void MainWindow::connectPanel() {
  connect(panel_, &rc::ui::CachePanel::treeExported, this, [this](const QString& path) {
    statusBar()->showMessage(tr("Saved the cache tree to %1").arg(QDir::toNativeSeparators(path)),
                             8000);
  });
  connect(panel_, &rc::ui::CachePanel::cacheSettingsRequested, this,
          [this](const QString& policy, qint64 poolTokens) {
            // Same model, new cache: a new engine (the cache is built at create).
            loadModel(engine_->hasModel() ? engine_->modelRequest().path : loadingPath_, policy,
                      poolTokens);
          });
  // Recordings: open a file in the panel, or record this engine.
  // A chat reply is recorded as a request; its prompt is the thread on
  // screen up to the reply, which is what the controller sent.
  rc::ui::EngineHost* host = engine_.get();
  panel_->setRecordingOpener(make_recording_opener([host] {
    const rc::Engine* e = host->engine();
    return e ? LoadedModel{e->model_info().name, e->model_info().path,
                           rc::recording::template_closing_tokens(*e)}
             : LoadedModel{};
  }));
  auto recorder = std::make_shared<LocalRecorder>([host] { return host->engine(); });
  panel_->setRecordingStarter(recorder->starter());
  panel_->setTreeExporter(make_tree_exporter([host]() -> int32_t {
    const rc::Engine* e = host->engine();
    if (!e) return -1;
    auto t = e->tokenize("", true);
    return t.ok() && !t.value().empty() ? t.value().front() : -1;
  }));
  // "Why it missed" for a chat message's prompt (the Cache button), by the
  // same explanation as a recording's Request tab.
  // The template's closing tokens never count as "agreeing again".
  panel_->setMissExplainer(make_miss_explainer([host] {
    const rc::Engine* e = host->engine();
    return e ? rc::recording::template_closing_tokens(*e) : 0;
  }));
  connect(controller_.get(), &ChatController::replyFinished, this,
          [this, recorder](qint64 messageId, const ReplyMetrics& m, const QString&) {
            if (!recorder->recording() || m.promptTokens <= 0) return;
            std::vector<rc::ChatMessage> prompt;
            if (!controller_->systemPrompt().isEmpty())
              prompt.push_back({"system", controller_->systemPrompt().toStdString()});
            for (const rc::ui::ChatMessageRow& r : controller_->chatModel()->rows()) {
              if (r.id == messageId) break;
              prompt.push_back({rc::ui::chatRoleName(r.role).toStdString(), r.text.toStdString()});
            }
            rc::RequestMetrics metrics;
            metrics.prompt_tokens = m.promptTokens;
            metrics.cached_tokens = m.cachedTokens;
            metrics.computed_tokens = m.computedTokens();
            metrics.output_tokens = m.completionTokens;
            metrics.ttft_ms = m.ttftMs;
            recorder->replyFinished(prompt, metrics, m.finishReason, {});
          });
  connect(
      panel_, &rc::ui::CachePanel::conversationsForPrefixRequested, this,
      [this](std::vector<int32_t> tokens) { controller_->findConversationsWithPrefix(tokens); });
  // A lesson is about the tree, not the chat: the panel takes over half the
  // window while it is shown, and the splitter goes back as it was after.
  auto before = std::make_shared<QList<int>>();
  connect(panel_, &rc::ui::CachePanel::lessonShownChanged, this, [this, before](bool shown) {
    QList<int> sizes = splitter_->sizes();
    if (sizes.size() != 3) return;
    lessonWide_ = shown;
    if (!shown) {
      if (!before->isEmpty()) splitter_->setSizes(*before);
      before->clear();
      applyDefaultSplit();  // the window may have changed size meanwhile
      return;
    }
    if (before->isEmpty()) *before = sizes;
    const int total = sizes[0] + sizes[1] + sizes[2];
    const int want = std::max(sizes[2], total * 11 / 20);
    int need = want - sizes[2];
    // The chat keeps room for a message's header ("Assistant", Copy,
    // Regenerate, Cache) on a small screen: the panel gets less than half.
    const int fromChat = std::min(need, std::max(sizes[1] - 420, 0));
    sizes[1] -= fromChat;
    need -= fromChat;
    const int fromList = std::min(need, std::max(sizes[0] - sidebar_->minimumWidth(), 0));
    sizes[0] -= fromList;
    sizes[2] += fromChat + fromList;
    splitter_->setSizes(sizes);
  });
}

void MainWindow::loadModel(const QString& path, const QString& cachePolicy, qint64 poolTokens) {
  // A reply on the old engine would be cut when it is replaced: end it now.
  if (controller_->isGenerating()) controller_->stop();
  if (controller_->remote()) useLocalModel();  // a local model: the chat is local again
  loadingPath_ = path;
  rc::ui::ModelRequest r;
  r.path = path;
  r.cachePolicy = cachePolicy.isEmpty() ? QStringLiteral("radix") : cachePolicy;
  r.poolTokens = poolTokens;
  r.drafted = settings_->value(QStringLiteral("models/drafted"), true).toBool();
  setTierRequest(r);
  engine_->load(r);
}

void MainWindow::maybeReady() {
  if (readyEmitted_ || !listLoaded_ || !engine_->hasModel()) return;
  readyEmitted_ = true;
  emit readyForInput();
}

void MainWindow::showError(const QString& title, const QString& message) {
  statusBar()->showMessage(title + QStringLiteral(": ") + message, 15000);
  // Not modal: the chat keeps working while the message is up.
  auto* box = new QMessageBox(QMessageBox::Warning, title, message, QMessageBox::Ok, this);
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->setModal(false);
  box->show();
}

void MainWindow::editSystemPrompt() {
  rc::ui::SystemPromptDialog dialog(controller_->systemPrompt(), controller_->systemPresetId(),
                                    this);
  dialog.setPresets(controller_->presets(), controller_->defaultPresetId());
  connect(controller_.get(), &ChatController::presetsChanged, &dialog, [this, &dialog] {
    dialog.setPresets(controller_->presets(), controller_->defaultPresetId());
  });
  connect(&dialog, &rc::ui::SystemPromptDialog::savePresetRequested, controller_.get(),
          &ChatController::savePreset);
  connect(&dialog, &rc::ui::SystemPromptDialog::deletePresetRequested, controller_.get(),
          &ChatController::deletePreset);
  connect(&dialog, &rc::ui::SystemPromptDialog::defaultPresetChanged, controller_.get(),
          &ChatController::setDefaultPreset);
  if (dialog.exec() != QDialog::Accepted) return;
  controller_->setSystemPrompt(dialog.text(), dialog.presetId());
  updateHeader();
}

void MainWindow::editSampling() {
  rc::ui::SamplingDialog dialog(controller_->sampling(), controller_->defaultSampling(),
                                controller_->defaultSamplingNote(),
                                engine_->hasModel() ? engine_->model().contextLength : 0, this);
  if (dialog.exec() == QDialog::Accepted) controller_->setSampling(dialog.sampling());
}

void MainWindow::renameConversation(qint64 id) {
  if (id <= 0) return;
  const rc::ui::ConversationListModel* list = controller_->conversationList();
  const int row = list->rowOf(id);
  const QString current =
      row >= 0 ? list->conversations()[static_cast<size_t>(row)].title : QString();
  bool ok = false;
  const QString title = QInputDialog::getText(this, tr("Rename conversation"), tr("Title:"),
                                              QLineEdit::Normal, current, &ok);
  if (ok && !title.trimmed().isEmpty()) controller_->renameConversation(id, title);
}

void MainWindow::deleteConversation(qint64 id) {
  if (id <= 0) return;
  const auto answer = QMessageBox::question(this, tr("Delete conversation"),
                                            tr("Delete this conversation and all its branches?"));
  if (answer == QMessageBox::Yes) controller_->deleteConversation(id);
}

void MainWindow::exportConversation(qint64 id, const QString& format) {
  if (id <= 0) {
    statusBar()->showMessage(tr("Nothing to export yet: send a message first."), 6000);
    return;
  }
  const bool json = format == QLatin1String("json");
  const rc::ui::ConversationListModel* list = controller_->conversationList();
  const int row = list->rowOf(id);
  QString name =
      row >= 0 ? list->conversations()[static_cast<size_t>(row)].title : tr("conversation");
  name.replace(QRegularExpression(QStringLiteral("[^\\w\\- ]+")), QStringLiteral("_"));
  const QString dir = rc::ui::startFolder(QStandardPaths::DocumentsLocation);
  const QString path = QFileDialog::getSaveFileName(
      this, json ? tr("Export as JSON") : tr("Export as Markdown"),
      QDir(dir).filePath(name.trimmed() + (json ? QStringLiteral(".json") : QStringLiteral(".md"))),
      json ? tr("JSON (*.json)") : tr("Markdown (*.md)"));
  if (!path.isEmpty()) controller_->exportConversation(id, format, path);
}

void MainWindow::regenerateLast() {
  const auto& rows = controller_->chatModel()->rows();
  for (auto it = rows.rbegin(); it != rows.rend(); ++it) {
    if (it->role == rc::ui::ChatRole::Assistant) {
      controller_->regenerate(it->id);
      return;
    }
  }
}

void MainWindow::copyLastReply() {
  const auto& rows = controller_->chatModel()->rows();
  for (auto it = rows.rbegin(); it != rows.rend(); ++it) {
    if (it->role == rc::ui::ChatRole::Assistant) {
      QGuiApplication::clipboard()->setText(it->text);
      statusBar()->showMessage(tr("Reply copied."), 3000);
      return;
    }
  }
}

}  // namespace rc::gui
