// CachePanelState: the feed -> tree pipeline, pause/step, which tree is in
// front, and the user's marks. The ImGui composition of the panel is in
// panel-frame.cpp.
#include "panel/cache-panel-state.h"

#include <algorithm>

#include "radixchat/engine.h"

namespace rc::ui {

namespace {
constexpr double kGhostKeep = 3.5;  // seconds; the view fades them over 3
}  // namespace

CachePanelState::CachePanelState() {
  lesson.demo.note = [this](const std::string& s) { log.note(s, now_); };
}

CachePanelState::~CachePanelState() {
  // The lesson feed reads the lesson engine: it goes first.
  source.feed.reset();
  lesson.demo.stop(lesson.host.engine());
  lesson.host.release();
}

bool CachePanelState::wants_frames(double now) const {
  return now - last_activity < 7.0 || lesson.demo.running() || tree.view.busy() ||
         !source.pending.empty() || lesson.host.state() == panel::LessonEngine::State::building ||
         replay.playing;
}

void CachePanelState::set_feed(std::unique_ptr<panel::CacheFeed> feed, double now) {
  // The owner's engine changed (a new model or new cache settings): a lesson
  // built for the old one ends, and the panel follows the new engine.
  if (lesson_active() || lesson_shown()) {
    lesson.demo.stop(lesson.host.engine());
    lesson.scenario = -1;
    const bool was_shown = lesson_shown();
    lesson.user_feed.reset();
    source.paused = false;
    show_feed(std::move(feed), now, true);
    lesson.host.release();
    if (was_shown && on_lesson_shown) on_lesson_shown(false);
    return;
  }
  show_feed(std::move(feed), now, true);
}

void CachePanelState::park_user_tree() {
  user_tree_ = ParkedTree{std::move(tree), frame.bottom_frac, tree_engine_};
  tree = user_tree_->tree.fresh();
}

void CachePanelState::restore_user_tree(panel::CacheFeed* feed) {
  ParkedTree p = std::move(*user_tree_);
  user_tree_.reset();
  frame.bottom_frac = p.bottom_frac;
  // Node ids, folds, camera and marks of one engine's tree mean nothing in
  // another's.
  if (feed && feed->engine() == p.engine)
    tree = std::move(p.tree);
  else
    tree = p.tree.fresh();
  tree.set_text_scale(frame.text_scale, panel::FrameState::kBaseFontPx);
}

void CachePanelState::show_feed(std::unique_ptr<panel::CacheFeed> feed, double now, bool users) {
  now_ = now;
  // Which tree is in front: the user's own (an engine's or a bare cache's)
  // or another (a lesson's, a remote cache's, a recording's).
  const bool own = users && (!feed || (!feed->remote() && feed.get() != replay.feed()));
  const void* engine = feed ? feed->engine() : nullptr;
  bool kept_view = false;
  if (own) {
    if (user_tree_) {
      restore_user_tree(feed.get());
      kept_view = true;
    } else if (engine != tree_engine_) {
      tree = tree.fresh();
    }
    tree_engine_ = engine;
  } else if (!user_tree_) {
    park_user_tree();
  } else {
    tree = tree.fresh();
  }
  if (!kept_view) {
    tree.view.request_fit();
    tree.view.follow = true;
  }

  source.feed = std::move(feed);
  source.forget();
  tree.reshow();
  panel::CacheFeed* f = source.feed.get();
  tree.span_text =
      f ? panel::TreeState::SpanText([f](const std::vector<Token>& t) { return f->detokenize(t); })
        : panel::TreeState::SpanText();
  // The plots go on across engines (another policy or pool): a marker says
  // where the source changed.
  history.restart(f ? f->cache_setting() + ", " + std::to_string(f->pool_tokens()) + " tok"
                    : std::string("no model"),
                  now);
  held_refreshed_at_ = -1e9;
  if (!f) {
    tree.model = panel::TreeModel();
    log.note("no model: the panel is idle", now);
    return;
  }
  const std::string setting = f->cache_setting();
  for (int i = 0; i < 4; ++i)
    if (setting == kCachePolicies[i]) settings_policy = i;
  // The Cache tab edits the user's engine: a lesson's small pool never
  // becomes its value.
  if (users) settings_pool_tokens = f->pool_tokens();
  resync(now, "following " + f->describe() + ", cache " + setting + ", " +
                  std::to_string(f->pool_tokens()) + "-token pool");
}

void CachePanelState::resync(double now, const std::string& why) {
  if (!source.feed) return;
  tree.reset(source.feed->snapshot(), now);
  last_activity = now;
  ++source.resyncs;
  log.note("snapshot: " + why, now);
}

void CachePanelState::apply_event(const CacheEvent& e, double now) {
  panel::TreeModel& model = tree.model;
  auto span_text = [this](const std::vector<Token>& t) {
    return tree.span_text ? tree.span_text(t) : std::string();
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
  if (e.kind == CacheEventKind::evict || e.kind == CacheEventKind::reset) tree.place_new_ghosts();
}

void CachePanelState::sync(double now) {
  now_ = now;
  if (!source.feed) return;
  bool overflowed = false;
  replay.tick(now);
  std::vector<CacheEvent> events = source.feed->drain(&overflowed);
  tee_recording(events, overflowed);
  if (source.paused) {
    source.hold(std::move(events), overflowed);
  } else {
    if (overflowed)
      resync(now, remote_shown() ? "the remote cache changed (" + feed()->describe() + ")"
                  : replay_shown()
                      ? "the recording at event " + std::to_string(replay.cursor().target)
                      : "the event queue overflowed");
    for (const CacheEvent& e : events) apply_event(e, now);
  }
  source.read_stats();
  refresh_tiers(now);
  history.observe(source.has_requests ? &source.requests : nullptr, source.cache_stats, now);
  tree.model.expire_ghosts(now, kGhostKeep);
  tree.relocate();
  tree.refresh_marks(source.feed.get(), now);
  tree.set_in_flight_only(policy_off());
  poll_lesson(now);
  if (replay_shown()) replay_after_sync();
}

void CachePanelState::set_paused(bool on, double now) {
  if (on == source.paused) return;
  source.paused = on;
  if (on) {
    log.note("paused: new events wait in a queue; Step applies one", now);
    return;
  }
  while (!source.pending.empty()) {
    CacheEvent e = std::move(source.pending.front());
    source.pending.pop_front();
    apply_event(e, now);
  }
  if (source.pending_lost) {
    source.pending_lost = false;
    resync(now, "events were dropped while paused");
  }
  log.note("resumed", now);
}

bool CachePanelState::step_one(double now) {
  if (source.pending.empty()) {
    if (source.pending_lost) {
      source.pending_lost = false;
      resync(now, "events were dropped while paused");
      return true;
    }
    return false;
  }
  CacheEvent e = std::move(source.pending.front());
  source.pending.pop_front();
  apply_event(e, now);
  return true;
}

void CachePanelState::locate(const std::vector<Token>& tokens, double now,
                             const panel::LocatedRequest& request) {
  if (user_tree_) {
    // Another tree is in front: the message is found on the user's own
    // when it comes back (TreeState::reshow finds marks again).
    user_tree_->tree.located_tokens = tokens;
    user_tree_->tree.located_request = request;
    return;
  }
  tree.locate(tokens, request);
  if (!tokens.empty()) {
    // The explanation is on the Node tab: the Cache button opens it there.
    frame.select_tab = "Node";
    log.note("located a message: " + std::to_string(tree.model.path_tokens(tree.located).size()) +
                 " of its " + std::to_string(tokens.size()) + " tokens are cached",
             now);
  }
  explain_located();  // without tokens: clears it
}

}  // namespace rc::ui
