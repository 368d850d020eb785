#include "chat/copy-feedback.h"

#include <QAbstractButton>
#include <QClipboard>
#include <QGuiApplication>
#include <QTimer>

namespace rc::ui {

void copyWithConfirmation(QAbstractButton* button, const QString& text) {
  QGuiApplication::clipboard()->setText(text);
  // The button's own text is kept aside while it says "Copied".
  auto* timer =
      button->findChild<QTimer*>(QStringLiteral("copiedTimer"), Qt::FindDirectChildrenOnly);
  if (!timer) {
    timer = new QTimer(button);
    timer->setObjectName(QStringLiteral("copiedTimer"));
    timer->setSingleShot(true);
    button->setProperty("restText", button->text());
    QObject::connect(timer, &QTimer::timeout, button,
                     [button] { button->setText(button->property("restText").toString()); });
  } else if (!timer->isActive()) {
    button->setProperty("restText", button->text());
  }
  button->setText(QObject::tr("Copied"));
  timer->start(kCopiedConfirmMs);
}

}  // namespace rc::ui
