// The status bar's words for the cache tiers below the pool (EngineStats::tiers):
// "disk 1.2 GB · Redis down", and a tooltip with each tier's place, state,
// error and counts. Pure functions of a TierStats; GUI thread or any.
#pragma once

#include <QString>
#include <cstdint>

#include "radixchat/tier-stats.h"

namespace rc::gui {

// "1.2 GB", "640 MB", "12 kB", "0 B" (decimal units, as file managers show).
QString byteText(int64_t bytes);
// One short phrase per tier: "<name> <bytes held>" while up, "<Name> down"
// (or "refused") otherwise; joined by " · ". Empty without tiers.
QString tierStatusText(const rc::TierStats& tiers);
// Several lines: each tier's place, state and error, budget, hits and
// loads, then the requests that loaded against those that recomputed.
QString tierStatusTooltip(const rc::TierStats& tiers);

}  // namespace rc::gui
