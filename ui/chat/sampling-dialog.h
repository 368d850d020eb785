// SamplingDialog: a conversation's sampling settings and context length.
// Modal, GUI thread; the caller saves the result (the store keeps it per
// conversation).
#pragma once

#include <QDialog>

#include "chat/chat-types.h"

class QDoubleSpinBox;
class QComboBox;
class QSpinBox;

namespace rc::ui {

class SamplingDialog : public QDialog {
  Q_OBJECT
 public:
  // defaults: what Restore Defaults fills in; defaultsNote says where they
  // come from ("the model's recommendation: …"), empty for the app's own.
  // modelContext: the loaded model's context (0 when none is loaded).
  SamplingDialog(const ChatSampling& sampling, const ChatSampling& defaults,
                 const QString& defaultsNote, int modelContext, QWidget* parent = nullptr);
  ChatSampling sampling() const;

 private:
  void fill(const ChatSampling& s);

  QDoubleSpinBox* temperature_ = nullptr;
  QDoubleSpinBox* topP_ = nullptr;
  QSpinBox* topK_ = nullptr;
  QDoubleSpinBox* minP_ = nullptr;
  QDoubleSpinBox* repetition_ = nullptr;
  QSpinBox* maxTokens_ = nullptr;
  QSpinBox* context_ = nullptr;
  QComboBox* overflow_ = nullptr;
};

}  // namespace rc::ui
