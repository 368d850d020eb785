#include "chat/sampling-dialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>
#include <algorithm>

namespace rc::ui {

namespace {

QDoubleSpinBox* doubleBox(double min, double max, double step, int decimals, QWidget* parent) {
  auto* b = new QDoubleSpinBox(parent);
  b->setRange(min, max);
  b->setSingleStep(step);
  b->setDecimals(decimals);
  return b;
}

}  // namespace

SamplingDialog::SamplingDialog(const ChatSampling& sampling, const ChatSampling& defaults,
                               const QString& defaultsNote, int modelContext, QWidget* parent)
    : QDialog(parent) {
  setWindowTitle(tr("Sampling settings"));
  auto* v = new QVBoxLayout(this);
  auto* form = new QFormLayout();
  temperature_ = doubleBox(0, 2, 0.05, 2, this);
  temperature_->setToolTip(tr("0 = greedy: always the most likely token"));
  topP_ = doubleBox(0.01, 1, 0.01, 2, this);
  topP_->setToolTip(tr("Nucleus sampling; 1 = off"));
  topK_ = new QSpinBox(this);
  topK_->setRange(0, 1000);
  topK_->setSpecialValueText(tr("off"));
  minP_ = doubleBox(0, 1, 0.01, 2, this);
  minP_->setToolTip(tr("Drop tokens less likely than this fraction of the best; 0 = off"));
  repetition_ = doubleBox(1, 2, 0.01, 2, this);
  repetition_->setToolTip(tr("1 = off"));
  maxTokens_ = new QSpinBox(this);
  maxTokens_->setRange(1, 32768);
  context_ = new QSpinBox(this);
  context_->setRange(0, modelContext > 0 ? modelContext : 1 << 20);
  context_->setSingleStep(256);
  context_->setSpecialValueText(modelContext > 0 ? tr("model's (%1 tokens)").arg(modelContext)
                                                 : tr("model's"));
  context_->setToolTip(
      tr("Tokens of history sent with each message; the oldest turns are left out "
         "when a conversation grows past it"));
  form->addRow(tr("Temperature"), temperature_);
  form->addRow(tr("Top-p"), topP_);
  form->addRow(tr("Top-k"), topK_);
  form->addRow(tr("Min-p"), minP_);
  form->addRow(tr("Repetition penalty"), repetition_);
  form->addRow(tr("Max reply tokens"), maxTokens_);
  form->addRow(tr("Context length"), context_);
  overflow_ = new QComboBox(this);
  overflow_->addItem(tr("Keep the system prompt and latest turns"),
                     QStringLiteral("rolling-window"));
  overflow_->addItem(tr("Keep the first exchange too (truncate middle)"),
                     QStringLiteral("truncate-middle"));
  overflow_->addItem(tr("Stop and say so"), QStringLiteral("stop"));
  overflow_->setToolTip(
      tr("When the conversation no longer fits the context. Old turns are dropped in steps, "
         "so the kept history stays the same for several turns and keeps hitting the cache."));
  form->addRow(tr("When the chat is too long"), overflow_);
  v->addLayout(form);
  auto* note = new QLabel(defaultsNote.isEmpty()
                              ? tr("Defaults are RadixChat's: this model recommends none.")
                              : tr("Defaults are %1.").arg(defaultsNote),
                          this);
  note->setObjectName(QStringLiteral("samplingDefaultsNote"));
  note->setWordWrap(true);
  v->addWidget(note);
  auto* buttons = new QDialogButtonBox(
      QDialogButtonBox::Ok | QDialogButtonBox::Cancel | QDialogButtonBox::RestoreDefaults, this);
  v->addWidget(buttons);
  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  connect(buttons->button(QDialogButtonBox::RestoreDefaults), &QPushButton::clicked, this,
          [this, defaults] { fill(defaults); });
  fill(sampling);
}

void SamplingDialog::fill(const ChatSampling& s) {
  temperature_->setValue(s.temperature);
  topP_->setValue(s.topP);
  topK_->setValue(s.topK);
  minP_->setValue(s.minP);
  repetition_->setValue(s.repetitionPenalty);
  maxTokens_->setValue(s.maxTokens);
  context_->setValue(s.contextLength);
  overflow_->setCurrentIndex(std::max(0, overflow_->findData(s.contextOverflow)));
}

ChatSampling SamplingDialog::sampling() const {
  ChatSampling s;
  s.temperature = temperature_->value();
  s.topP = topP_->value();
  s.topK = topK_->value();
  s.minP = minP_->value();
  s.repetitionPenalty = repetition_->value();
  s.maxTokens = maxTokens_->value();
  s.contextLength = context_->value();
  s.contextOverflow = overflow_->currentData().toString();
  return s;
}

}  // namespace rc::ui
