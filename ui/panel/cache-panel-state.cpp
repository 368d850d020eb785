// CachePanelState: the feed -> model -> layout pipeline, pause/step and
// selection. The ImGui composition of the panel is in panel-frame.cpp.
#include "panel/cache-panel-state.h"

#include <algorithm>

#include "radixchat/engine.h"

namespace rc::ui {

namespace {
// More queued events than this while paused are dropped and replaced by a
// resync: stepping through a hundred thousand events teaches nothing.
constexpr size_t kMaxPending = 100000;
constexpr double kGhostKeep = 3.5;  // seconds; the view fades them over 3
}  // namespace

CachePanelState::CachePanelState() {
  demo.note = [this](const std::string& s) { log.note(s, now_); };
}

CachePanelState::~CachePanelState() {
  // The lesson feed reads the lesson engine: it goes first.
  feed_.reset();
  demo.stop(lesson.engine());
  lesson.release();
}

void CachePanelState::set_feed(std::unique_ptr<panel::CacheFeed> feed, double now) {
  // The owner's engine changed (a new model or new cache settings): a lesson
  // built for the old one ends, and the panel follows the new engine.
  if (lesson_active() || lesson_shown()) {
    demo.stop(lesson.engine());
    lesson_scenario_ = -1;
    const bool was_shown = lesson_shown();
    parked_feed_.reset();
    paused = false;
    show_feed(std::move(feed), now, true);
    restore_user_view();
    lesson.release();
    if (was_shown && on_lesson_shown) on_lesson_shown(false);
    return;
  }
  // The user's own tree (the engine's, not a remote cache's or a
  // recording's) keeps its view across an attach or an opened recording.
  auto own = [this](const panel::CacheFeed* f) { return f && !f->remote() && f != replay.feed(); };
  if (own(feed_.get()) && !own(feed.get()) && !user_view_) {
    save_user_view();
    lod.collapsed.clear();  // node ids of this tree mean nothing in another
    lod.expanded.clear();
    lod_changed();
  }
  const bool back = own(feed.get());
  show_feed(std::move(feed), now, true);
  if (back) restore_user_view();
}

void CachePanelState::show_feed(std::unique_ptr<panel::CacheFeed> feed, double now, bool users) {
  now_ = now;
  feed_ = std::move(feed);
  labels_.clear();
  layout_structure_ = pages_version_ = UINT64_MAX;  // versions restart with a new model
  pending.clear();
  pending_lost = false;
  selected = located = located_partial = kNoNode;
  live_miss_valid = false;  // it was about the old tree (Cache again asks anew)
  conversations_for = kNoNode;
  conversation_titles.clear();
  // The plots go on across engines (another policy or pool): a marker says
  // where the source changed.
  history.restart(
      feed_ ? feed_->cache_setting() + ", " + std::to_string(feed_->pool_tokens()) + " tok"
            : std::string("no model"),
      now);
  cache_stats = CacheStats{};
  has_requests = false;
  has_tiers = false;
  tiers = TierStats{};
  held_refreshed_at_ = -1e9;
  if (!feed_) {
    model = panel::TreeModel();
    log.note("no model: the panel is idle", now);
    return;
  }
  const std::string setting = feed_->cache_setting();
  for (int i = 0; i < 4; ++i)
    if (setting == kCachePolicies[i]) settings_policy = i;
  // The Cache tab edits the user's engine: a lesson's small pool never
  // becomes its value.
  if (users) settings_pool_tokens = feed_->pool_tokens();
  resync(now, "following " + feed_->describe() + ", cache " + setting + ", " +
                  std::to_string(feed_->pool_tokens()) + "-token pool");
  view.request_fit();
  view.follow = true;
}

void CachePanelState::resync(double now, const std::string& why) {
  if (!feed_) return;
  model.reset(feed_->snapshot(), now);
  ghosts_placed_ = model.ghost_serial();
  last_activity = now;
  ++resyncs;
  log.note("snapshot: " + why, now);
}

void CachePanelState::place_new_ghosts(NodeId id) {
  // The ghost takes the box where the view last drew the node; its id may be
  // reused at once by a new node, which must not glide from the old place.
  for (panel::Ghost& g : model.ghosts()) {
    if (g.serial <= ghosts_placed_) continue;
    float x, y, w, h;
    if (view.world_box(g.node.id, layout_, &x, &y, &w, &h)) {
      g.placed = true;
      g.x = x;
      g.y = y;
      g.w = w;
      g.h = h;
    }
    view.forget(g.node.id);
    labels_.erase(g.node.id);
  }
  (void)id;
  ghosts_placed_ = model.ghost_serial();
}

void CachePanelState::apply_event(const CacheEvent& e, double now) {
  auto span_text = [this](const std::vector<Token>& t) {
    return feed_ ? feed_->detokenize(t) : std::string();
  };
  // Formatted against the model before the event (an evicted node's text).
  std::string text =
      e.seq >= model.next_seq() ? panel::EventLog::describe(e, model, span_text) : std::string();
  panel::ApplyResult r = model.apply(e, now);
  if (r == panel::ApplyResult::needs_resync) {
    resync(now, "event " + std::to_string(e.seq) + " did not follow (expected " +
                    std::to_string(model.next_seq()) + ")");
    r = model.apply(e, now);  // usually older than the snapshot: skipped
  }
  if (r != panel::ApplyResult::applied) return;
  last_activity = now;
  log.add(e, std::move(text), now);
  if (e.kind == CacheEventKind::evict || e.kind == CacheEventKind::reset) place_new_ghosts(e.node);
}

void CachePanelState::sync(double now) {
  now_ = now;
  if (!feed_) return;
  bool overflowed = false;
  replay.tick(now);
  std::vector<CacheEvent> events = feed_->drain(&overflowed);
  tee_recording(events, overflowed);
  if (paused) {
    if (overflowed || pending.size() + events.size() > kMaxPending) {
      pending_lost = true;
      pending.clear();
    } else {
      for (CacheEvent& e : events) pending.push_back(std::move(e));
    }
  } else {
    if (overflowed)
      resync(now, feed_->remote() ? "the remote cache changed (" + feed_->describe() + ")"
                  : replay_shown()
                      ? "the recording at event " + std::to_string(replay.cursor().target)
                      : "the event queue overflowed");
    for (const CacheEvent& e : events) apply_event(e, now);
  }
  cache_stats = feed_->cache_stats();
  has_requests = feed_->request_totals(&requests);
  refresh_tiers(now);
  history.observe(has_requests ? &requests : nullptr, cache_stats, now);
  model.expire_ghosts(now, kGhostKeep);
  if (!located_tokens.empty() && located_structure_ != model.structure_version()) {
    located_structure_ = model.structure_version();
    located = model.locate(located_tokens, &located_partial);
  }
  refresh_marks(now);
  poll_lesson(now);
  if (replay_shown()) replay_after_sync();
}

void CachePanelState::set_paused(bool on, double now) {
  if (on == paused) return;
  paused = on;
  if (on) {
    log.note("paused: new events wait in a queue; Step applies one", now);
    return;
  }
  while (!pending.empty()) {
    CacheEvent e = std::move(pending.front());
    pending.pop_front();
    apply_event(e, now);
  }
  if (pending_lost) {
    pending_lost = false;
    resync(now, "events were dropped while paused");
  }
  log.note("resumed", now);
}

bool CachePanelState::step_one(double now) {
  if (pending.empty()) {
    if (pending_lost) {
      pending_lost = false;
      resync(now, "events were dropped while paused");
      return true;
    }
    return false;
  }
  CacheEvent e = std::move(pending.front());
  pending.pop_front();
  apply_event(e, now);
  return true;
}

const panel::TreeLayout& CachePanelState::layout(double now) {
  // Nodes kept visible through level of detail: what the user looks at, and
  // where the latest request matched and inserted.
  std::vector<NodeId> keep;
  for (NodeId id : {selected, located, located_partial, context_cut.node, model.last_match_node(),
                    model.last_insert_node()})
    if (id != kNoNode && model.find(id)) keep.push_back(id);
  // Only the user's own picks force a relayout at once when they are not
  // laid out; the latest match and insert ride along with the next one.
  bool user_missing = false;
  for (NodeId id : {selected, located, located_partial})
    if (id != kNoNode && model.find(id) && !layout_.find(id)) user_missing = true;
  const bool folding = lod.enabled && model.size() > lod.max_visible;
  sync_in_flight_only();
  const bool options = layout_lod_version_ != lod_version_;
  // Under `off` a lock or unlock changes what is drawn.
  bool stale = options || user_missing || layout_structure_ != model.structure_version() ||
               (lod.only_in_flight && layout_version_ != model.version()) ||
               (folding && (layout_version_ != model.version() || keep != layout_keep_) &&
                now - layout_at_ > 0.5);
  // Held at most two seconds: steady evictions must not freeze the tree.
  if (stale && !options && !user_missing && holding_for_ghosts(now) && now - layout_at_ < 2.0)
    stale = false;
  // A big tree growing every frame is laid out at most ten times a second:
  // new boxes appear a few frames late instead of every frame costing a
  // full layout.
  if (stale && !options && !user_missing && model.size() > 2000 && now - layout_at_ < 0.1)
    stale = false;
  if (stale) {
    lod.keep = keep;
    layout_ = panel::layout_tree(model, lod, metrics);
    layout_structure_ = model.structure_version();
    layout_version_ = model.version();
    layout_lod_version_ = lod_version_;
    layout_keep_ = keep;
    layout_at_ = now;
    ++layouts_computed;
  }
  return layout_;
}

const panel::TreeModel::Pages& CachePanelState::pages() {
  if (pages_version_ != model.version() || pages_model_ != &model) {
    pages_ = model.pages_by_state();
    pages_version_ = model.version();
    pages_model_ = &model;
  }
  return pages_;
}

panel::NodeLabel& CachePanelState::label(const panel::TreeNode& n) {
  panel::NodeLabel& l = labels_[n.id];
  const Token first = n.tokens.empty() ? -1 : n.tokens.front();
  if (l.n_tokens != n.tokens.size() || l.first != first || (l.full.empty() && !n.tokens.empty())) {
    l.n_tokens = n.tokens.size();
    l.first = first;
    l.full = feed_ ? feed_->detokenize(n.tokens) : std::string();
    l.ends.clear();
    l.fitted_for = -1;
  }
  return l;
}

void CachePanelState::toggle_fold(NodeId id) {
  const panel::LaidNode* ln = layout_.find(id);
  if (ln && ln->folded) {
    lod.collapsed.erase(id);
    lod.expanded.insert(id);
  } else {
    lod.expanded.erase(id);
    lod.collapsed.insert(id);
  }
  ++lod_version_;
}

void CachePanelState::expand_children(NodeId id) {
  lod.collapsed.erase(id);
  lod.expanded.insert(id);
  ++lod_version_;
}

void CachePanelState::locate(const std::vector<Token>& tokens, double now,
                             const panel::LocatedRequest& request) {
  located_tokens = tokens;
  located_request = request;
  if (tokens.empty()) {
    located = located_partial = kNoNode;
    explain_located();  // clears it
    return;
  }
  located = model.locate(tokens, &located_partial);
  located_structure_ = model.structure_version();
  const NodeId target = located_partial != kNoNode ? located_partial : located;
  select(target);
  // The explanation is on the Node tab: the Cache button opens it there.
  select_tab = "Node";
  view.focus(target);
  view.follow = false;
  log.note("located a message: " + std::to_string(model.path_tokens(located).size()) + " of its " +
               std::to_string(tokens.size()) + " tokens are cached",
           now);
  explain_located();
}

void CachePanelState::select(NodeId id) {
  selected = id;
  if (conversations_for != id) {
    conversations_for = kNoNode;
    conversation_titles.clear();
    conversations_pending = false;
  }
}

}  // namespace rc::ui
