#include "chat/document-chips.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QToolButton>

namespace rc::ui {

DocumentChips::DocumentChips(QWidget* parent) : QWidget(parent) {
  setObjectName(QStringLiteral("documentChips"));
  setAttribute(Qt::WA_StyledBackground);  // the style sheet paints the row
  row_ = new QHBoxLayout(this);
  row_->setContentsMargins(16, 6, 16, 0);
  row_->setSpacing(6);
  row_->addStretch(1);
  setVisible(false);
}

void DocumentChips::setChips(const std::vector<DocumentChip>& chips) {
  chips_ = chips;
  while (row_->count() > 1) {  // the stretch stays last
    QLayoutItem* item = row_->takeAt(0);
    delete item->widget();
    delete item;
  }
  for (size_t i = 0; i < chips.size(); ++i) {
    const DocumentChip& c = chips[i];
    auto* chip = new QWidget(this);
    chip->setObjectName(QStringLiteral("documentChip"));
    chip->setAttribute(Qt::WA_StyledBackground);
    chip->setToolTip(c.tooltip);
    auto* h = new QHBoxLayout(chip);
    h->setContentsMargins(8, 2, 2, 2);
    h->setSpacing(4);
    // U+25A4, the document mark the cache panel uses too.
    auto* label = new QLabel(QStringLiteral("\u25A4 ") + c.name +
                                 (c.state.isEmpty() ? QString() : QStringLiteral(" · ") + c.state),
                             chip);
    label->setObjectName(QStringLiteral("documentChipLabel"));
    auto* remove = new QToolButton(chip);
    remove->setObjectName(QStringLiteral("documentChipRemove"));
    remove->setText(QStringLiteral("×"));
    remove->setAutoRaise(true);
    remove->setToolTip(tr("Stop answering from %1 in this conversation").arg(c.name));
    connect(remove, &QToolButton::clicked, this,
            [this, name = c.name] { emit removeRequested(name); });
    h->addWidget(label);
    h->addWidget(remove);
    row_->insertWidget(static_cast<int>(i), chip);
  }
  setVisible(!chips.empty());
}

}  // namespace rc::ui
