// Placeholder implementation so the chat window links while the panel is
// built; replaced by the GL host and ImGui drawing.
#include "panel/cache-panel.h"

#include <QLabel>
#include <QVBoxLayout>

namespace rc::ui {

struct CachePanelState {};

CachePanel::CachePanel(QWidget* parent) : QWidget(parent), state_(std::make_unique<CachePanelState>()) {
  auto* box = new QVBoxLayout(this);
  unavailable_ = tr("The cache panel is being built.");
  box->addWidget(new QLabel(unavailable_, this));
}
CachePanel::~CachePanel() = default;
void CachePanel::setEngine(rc::Engine*) {}
void CachePanel::locateTokens(const std::vector<int32_t>&) {}
bool CachePanel::hasGl() const { return gl_ != nullptr; }
QString CachePanel::unavailableReason() const { return unavailable_; }
CachePanelState* CachePanel::state() const { return state_.get(); }
void CachePanel::showConversationsForNode(QStringList) {}

}  // namespace rc::ui
