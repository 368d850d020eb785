#include "panel/panel-source.h"

namespace rc::ui::panel {

void PanelSource::hold(std::vector<CacheEvent> events, bool overflowed) {
  if (overflowed || pending.size() + events.size() > kMaxPending) {
    pending_lost = true;
    pending.clear();
    return;
  }
  for (CacheEvent& e : events) pending.push_back(std::move(e));
}

void PanelSource::read_stats() {
  if (!feed) return;
  cache_stats = feed->cache_stats();
  has_requests = feed->request_totals(&requests);
  has_tiers = feed->tier_stats(&tiers) && tiers.enabled;
}

void PanelSource::forget() {
  pending.clear();
  pending_lost = false;
  cache_stats = CacheStats{};
  has_requests = false;
  has_tiers = false;
  tiers = TierStats{};
}

}  // namespace rc::ui::panel
