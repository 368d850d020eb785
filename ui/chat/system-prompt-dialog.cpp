#include "chat/system-prompt-dialog.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QHBoxLayout>
#include <QInputDialog>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace rc::ui {

SystemPromptDialog::SystemPromptDialog(const QString& initialText, std::optional<qint64> presetId,
                                       QWidget* parent)
    : QDialog(parent), wanted_(presetId) {
  setWindowTitle(tr("System prompt"));
  resize(560, 420);
  auto* v = new QVBoxLayout(this);
  auto* top = new QHBoxLayout();
  top->addWidget(new QLabel(tr("Preset:"), this));
  combo_ = new QComboBox(this);
  combo_->setObjectName(QStringLiteral("presetCombo"));
  top->addWidget(combo_, 1);
  save_ = new QPushButton(tr("Save as preset…"), this);
  delete_ = new QPushButton(tr("Delete preset"), this);
  top->addWidget(save_);
  top->addWidget(delete_);
  v->addLayout(top);
  edit_ = new QPlainTextEdit(this);
  edit_->setObjectName(QStringLiteral("systemPromptEdit"));
  edit_->setPlaceholderText(tr("Instructions the model sees before the conversation (optional)"));
  edit_->setPlainText(initialText);
  v->addWidget(edit_, 1);
  defaultBox_ = new QCheckBox(tr("Start new chats with this preset"), this);
  v->addWidget(defaultBox_);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
  v->addWidget(buttons);

  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  connect(combo_, &QComboBox::currentIndexChanged, this, &SystemPromptDialog::presetChosen);
  connect(edit_, &QPlainTextEdit::textChanged, this, &SystemPromptDialog::updateButtons);
  connect(save_, &QPushButton::clicked, this, [this] {
    bool ok = false;
    const QString name = QInputDialog::getText(this, tr("Save preset"), tr("Preset name:"),
                                               QLineEdit::Normal, {}, &ok)
                             .trimmed();
    if (ok && !name.isEmpty()) emit savePresetRequested(name, text());
  });
  connect(delete_, &QPushButton::clicked, this, [this] {
    if (const PresetRow* p = selectedPreset()) emit deletePresetRequested(p->id);
  });
  connect(defaultBox_, &QCheckBox::toggled, this, [this](bool on) {
    if (filling_) return;
    const PresetRow* p = selectedPreset();
    defaultPresetId_ = on && p ? p->id : 0;
    emit defaultPresetChanged(defaultPresetId_);
  });
  setPresets({}, 0);
}

void SystemPromptDialog::setPresets(const std::vector<PresetRow>& presets, qint64 defaultPresetId) {
  // Keep the selection across refreshes: by id, or the pending wish.
  const PresetRow* selected = selectedPreset();
  std::optional<qint64> keep = selected ? std::optional<qint64>(selected->id) : wanted_;
  presets_ = presets;
  defaultPresetId_ = defaultPresetId;
  filling_ = true;
  combo_->clear();
  combo_->addItem(tr("(custom)"), qint64(0));
  for (const PresetRow& p : presets_) combo_->addItem(p.name, p.id);
  int index = 0;
  for (size_t i = 0; keep && i < presets_.size(); ++i) {
    if (presets_[i].id == *keep) index = static_cast<int>(i) + 1;
  }
  // A preset just saved from this text: select it (same name and text).
  for (size_t i = 0; index == 0 && i < presets_.size(); ++i) {
    if (presets_[i].text == text() && !text().isEmpty()) index = static_cast<int>(i) + 1;
  }
  combo_->setCurrentIndex(index);
  filling_ = false;
  wanted_.reset();
  updateButtons();
}

QString SystemPromptDialog::text() const { return edit_->toPlainText(); }

std::optional<qint64> SystemPromptDialog::presetId() const {
  const PresetRow* p = selectedPreset();
  if (p && p->text == text()) return p->id;
  return std::nullopt;
}

const PresetRow* SystemPromptDialog::selectedPreset() const {
  const int i = combo_ ? combo_->currentIndex() - 1 : -1;
  return i >= 0 && i < static_cast<int>(presets_.size()) ? &presets_[static_cast<size_t>(i)]
                                                         : nullptr;
}

void SystemPromptDialog::presetChosen(int) {
  if (filling_) return;
  if (const PresetRow* p = selectedPreset()) edit_->setPlainText(p->text);
  updateButtons();
}

void SystemPromptDialog::updateButtons() {
  const PresetRow* p = selectedPreset();
  delete_->setEnabled(p != nullptr);
  save_->setEnabled(!text().trimmed().isEmpty());
  const bool was = filling_;
  filling_ = true;
  defaultBox_->setEnabled(p != nullptr);
  defaultBox_->setChecked(p && p->id == defaultPresetId_);
  filling_ = was;
}

}  // namespace rc::ui
