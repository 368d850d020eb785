// SystemPromptDialog: edit a conversation's system prompt, pick it from the
// saved presets, save it as a new preset or delete one, and choose the
// preset new chats start with (presets are warmed into the cache at start,
// so a new chat's first reply already hits). Modal, GUI thread. Preset
// changes are requested through signals (the store owns them) and the list
// is refreshed with setPresets().
#pragma once

#include <QDialog>
#include <optional>
#include <vector>

#include "chat/chat-types.h"

class QCheckBox;
class QComboBox;
class QPlainTextEdit;
class QPushButton;

namespace rc::ui {

class SystemPromptDialog : public QDialog {
  Q_OBJECT
 public:
  SystemPromptDialog(const QString& text, std::optional<qint64> presetId,
                     QWidget* parent = nullptr);

  void setPresets(const std::vector<PresetRow>& presets, qint64 defaultPresetId);
  QString text() const;
  // The preset the text came from, when it still reads exactly the same.
  std::optional<qint64> presetId() const;
  // 0: new chats start empty.
  qint64 defaultPresetId() const { return defaultPresetId_; }

 signals:
  void savePresetRequested(const QString& name, const QString& text);
  void deletePresetRequested(qint64 id);
  void defaultPresetChanged(qint64 id);

 private:
  const PresetRow* selectedPreset() const;
  void presetChosen(int index);
  void updateButtons();

  std::vector<PresetRow> presets_;
  qint64 defaultPresetId_ = 0;
  std::optional<qint64> wanted_;  // preset to select once the list arrives
  QComboBox* combo_ = nullptr;
  QPlainTextEdit* edit_ = nullptr;
  QPushButton* save_ = nullptr;
  QPushButton* delete_ = nullptr;
  QCheckBox* defaultBox_ = nullptr;
  bool filling_ = false;
};

}  // namespace rc::ui
