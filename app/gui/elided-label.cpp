#include "elided-label.h"

#include <QFontMetrics>
#include <QResizeEvent>
#include <algorithm>

namespace rc::gui {

ElidedLabel::ElidedLabel(QWidget* parent) : QLabel(parent) {
  setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  setTextFormat(Qt::PlainText);
  setWordWrap(false);
}

void ElidedLabel::setFullText(const QString& text, const QString& tip) {
  full_ = text;
  tip_ = tip;
  elide();
}

// Height of one line; width small, so layouts never grow for the text.
QSize ElidedLabel::minimumSizeHint() const {
  return {fontMetrics().averageCharWidth() * 4, QLabel::minimumSizeHint().height()};
}

QSize ElidedLabel::sizeHint() const {
  // Prefers its whole text, but the Ignored policy lets layouts shrink it.
  return {fontMetrics().horizontalAdvance(full_) + 4, QLabel::sizeHint().height()};
}

void ElidedLabel::resizeEvent(QResizeEvent* event) {
  QLabel::resizeEvent(event);
  elide();
}

void ElidedLabel::elide() {
  const QString shown = fontMetrics().elidedText(full_, Qt::ElideRight, std::max(width(), 0));
  if (shown != text()) setText(shown);
  setToolTip(!tip_.isEmpty() ? tip_ : shown == full_ ? QString() : full_);
}

}  // namespace rc::gui
