// ElidedLabel: a one-line QLabel that never asks for more width than it is
// given. The chat header's title and system-prompt summary are user text of
// any length; a plain QLabel's minimum width is its whole text, which
// widened the centre pane and pushed the cache panel off the window's right
// edge. This label shows as much as fits, ends with "…", and keeps the full
// text in its tool tip. GUI thread.
#pragma once

#include <QLabel>

namespace rc::gui {

class ElidedLabel : public QLabel {
  Q_OBJECT
 public:
  explicit ElidedLabel(QWidget* parent = nullptr);

  // The whole text; what is shown is elided to the label's width. `tip`
  // (when not empty) is always the tool tip; otherwise the full text is,
  // while it is cut.
  void setFullText(const QString& text, const QString& tip = QString());
  QString fullText() const { return full_; }

  QSize minimumSizeHint() const override;
  QSize sizeHint() const override;

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  void elide();
  QString full_;
  QString tip_;
};

}  // namespace rc::gui
