// The cache panel without Qt or GL, in parts that own their data
// (docs/architecture.md section 16):
//   source  the feed shown, its paused events, its latest figures (panel-source.h)
//   tree    the tree shown: model, layout, camera, selection, and the marks
//           and counters made in it (tree-state.h); the user's own is parked
//           while a lesson, a remote cache or a recording is in front
//   lesson  the lesson's engine and demo (lesson-state.h)
//   replay  a recording and its timeline (recording-view.h)
//   frame   text scale, tabs and how the height is shared (frame-state.h)
//   log, history  the event log and the plots' series
// CachePanel (Qt) owns one and calls sync() and draw() from paintGL; tests
// and the benchmark drive it directly with an ImGui context and no window.
//
// GUI thread only. The owner of the feed's engine or cache keeps it alive
// while it is set.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "panel/cache-feed.h"
#include "panel/event-log.h"
#include "panel/frame-state.h"
#include "panel/lesson-state.h"
#include "panel/miss-view.h"
#include "panel/panel-source.h"
#include "panel/recording-view.h"
#include "panel/remote-attach.h"
#include "panel/stats-history.h"
#include "panel/tree-state.h"

namespace rc::ui {

struct CachePanelState {
  CachePanelState();
  ~CachePanelState();

  panel::PanelSource source;
  panel::TreeState tree;
  panel::LessonState lesson;
  panel::RecordingView replay;
  panel::FrameState frame;
  panel::EventLog log;
  panel::StatsHistory history;
  panel::RemoteAttach remote;  // "Attach to a cache..." / "Detach"

  // --- Source --------------------------------------------------------------
  // Replaces the feed (null: nothing to show) and resyncs from a snapshot.
  // The user's own tree (an engine's, not a remote cache's or a
  // recording's) is parked while another is shown and comes back with its
  // view and marks; another engine's tree starts fresh.
  void set_feed(std::unique_ptr<panel::CacheFeed> feed, double now);
  panel::CacheFeed* feed() const { return source.feed.get(); }
  // Drains the feed, applies (or, paused, queues) its events, resyncs on
  // overflow or a seq gap, updates plots and the demo. Once per frame.
  void sync(double now);
  // Takes a fresh snapshot and resets the model (log says why).
  void resync(double now, const std::string& why);
  // When the tree last changed (caller seconds). Highlights fade for a few
  // seconds after; an idle panel needs only a few frames a second.
  double last_activity = -1e9;
  bool wants_frames(double now) const;
  // Pause and step (teaching): paused, new events wait in source.pending.
  void set_paused(bool on, double now);
  bool step_one(double now);  // applies the next queued event; false if none
  // Whether the user's own tree is parked now (tests).
  bool user_tree_parked() const { return user_tree_.has_value(); }

  // --- The user's chat on the user's tree ------------------------------------
  // `request`: what the app knows of the request behind the message (its
  // prompt's length within `tokens`, its cached tokens), for "Why it
  // missed". While another tree is shown, the mark waits on the user's.
  void locate(const std::vector<Token>& tokens, double now,
              const panel::LocatedRequest& request = {});
  // The app reports a cut: `prompt` was sent after it and its first
  // `reused` tokens came from the cache (an empty prompt: unknown, no
  // badge). Logs it, shows the banner and badges the branch point of the
  // user's tree.
  void mark_context_cut(int dropped, const std::vector<Token>& prompt, int64_t reused, double now);
  // Why it missed, for a located chat message (live-miss.cpp). Set by the
  // app (recording/miss-analysis behind it); without it the Node tab has no
  // "Why it missed" section. The located request's prompt is compared with
  // the feed's snapshot when the user asks and on Recheck; with its cached
  // count known, less its own path (panel::without_own_path). Only for the
  // user's own live feed.
  panel::MissExplainer miss_explainer;
  bool can_explain_located() const;
  void explain_located();

  bool remote_shown() const { return feed() && feed()->remote(); }

  // --- Recordings (recording-panel.cpp): Record/Stop, Open, the timeline -----
  // The recording's feed is the one shown (not a lesson's in front of it).
  bool replay_shown() const { return feed() && replay.shown() && feed() == replay.feed(); }
  // Recording starts only from the local engine's own feed.
  bool can_record() const;
  // Timeline actions that also highlight the request's prompt on the tree.
  void replay_jump(size_t request_index, double now);
  bool replay_step_request(int dir, double now);
  // Selects the next node of the shown tree whose text holds `text`, else
  // jumps to the next request whose prompt does; find_result says which.
  bool replay_find(const std::string& text, double now);
  std::string find_result;
  // The tree as the panel shows it now (live, remote, or the recording at
  // its cursor), as a snapshot: for exporting pictures.
  CacheSnapshot shown_tree() const;

  // --- Lesson mode (lesson-panel.cpp) ----------------------------------------
  bool start_lesson(size_t scenario, double now);
  void end_lesson(double now, const std::string& why);
  // "Next step": applies the events still queued, then sends the next chat.
  bool lesson_next(double now);
  // Empties the cache on screen: the lesson restarts from its first step;
  // the user's engine is restarted with the same settings (on_settings).
  void clear_cache(double now);
  // Called when a lesson's tree replaces the user's (true) and when the
  // user's comes back (false): the window gives the panel room meanwhile.
  std::function<void(bool shown)> on_lesson_shown;
  bool lesson_active() const { return lesson.scenario >= 0; }
  bool lesson_shown() const { return lesson.user_feed != nullptr; }
  // The feed of the user's own engine (parked while a lesson is shown).
  panel::CacheFeed* user_feed() const {
    return lesson.user_feed ? lesson.user_feed.get() : source.feed.get();
  }

  // --- Cache tiers below the pool (panel-tiers.cpp) ---------------------------
  // Snapshots carry each node's held_below, events do not: while tiers are
  // on and the panel is not paused, sync() refreshes it at most this often.
  static constexpr double kHeldRefreshSeconds = 1.0;
  uint64_t held_refreshes = 0;
  // "host, disk" and the lowest tier's name, for the tree view's marks.
  std::string tier_names() const;
  std::string sink_tier() const;
  // "host 12 MB · 5 demoted · 2 promoted · 2 loads (576 tok) vs 1 recompute":
  // the feed's tiers, the shown tree's demotions and promotions.
  std::string tier_line() const;
  // Drafted decoding, from the shown tree's draft events (panel-marks.cpp):
  // "drafts: 110 of 120 tokens kept"; empty until a drafted token was kept
  // (a newcomer's first reply drafts from its prompt and keeps nothing).
  // Its tooltip says where the drafts came from and what was wasted.
  std::string draft_line() const;

  // --- The Cache tab: the user's engine's settings ----------------------------
  int settings_policy = 0;  // index into kCachePolicies
  int64_t settings_pool_tokens = 0;
  static constexpr const char* kCachePolicies[4] = {"radix", "radix-page16", "hash16", "off"};
  // Set by the owner (CachePanel emits its signals from these, queued).
  std::function<void(const std::string& policy, int64_t pool_tokens)> on_settings;
  std::function<void(const std::vector<Token>& prefix)> on_conversations;

  // --- Drawing ---------------------------------------------------------------
  // Builds the whole panel UI into the current ImGui frame (a full-size,
  // undecorated window). The caller owns NewFrame/Render.
  void draw(double now);
  std::string no_source_message = "No model loaded: the cache tree appears when a model runs.";
  void set_text_scale(float scale);
  // The policy is `off`: no reuse, so only sequences in flight are drawn.
  bool policy_off() const;

 private:
  // draw()'s parts, top to bottom (panel-frame.cpp).
  void draw_header(double now);
  void draw_memory_bar();
  void draw_stats_line();
  std::string tree_counts() const;  // "3 nodes · 1 eviction · 0 splits"
  void draw_canvas(double now);
  void draw_banner();
  void draw_node_tab(double now);
  void draw_plots_tab(double now);
  void draw_events_tab(double now);
  void draw_demos_tab(double now);
  void draw_cache_tab(double now);
  // panel-chrome.cpp
  void handle_text_scale_keys();
  void draw_text_scale_buttons();  // A- and A+, on the current line
  float text_scale_buttons_w() const;
  void draw_off_notice();
  void draw_split_handle(float total_h, float bottom_h);
  void ask_conversations(NodeId id);
  // panel-marks.cpp
  void draw_node_marks_tab(const panel::TreeNode& n);
  // panel-tiers.cpp
  void refresh_tiers(double now);
  void draw_node_tiers(const panel::TreeNode& n);
  double held_refreshed_at_ = -1e9;
  // live-miss.cpp: under the located node's details.
  void draw_live_miss();

  // recording-panel.cpp
  void tee_recording(const std::vector<CacheEvent>& events, bool overflowed);
  void draw_recording_buttons(double now);
  void draw_recording_status();
  void draw_timeline_section(double now);
  void draw_request_tab(double now);
  void draw_find_row(double now);
  void draw_advisor_tab(double now);
  void replay_after_sync();
  bool replay_select_located_ = false;
  uint64_t replay_seen_seq_ = UINT64_MAX;  // the seq the latest frame showed
  char find_buf_[128] = "";

  // lesson-panel.cpp
  void poll_lesson(double now);
  std::string lesson_banner();
  void draw_lesson_steps();

  // The feeds and trees shown (cache-panel-state.cpp). `users`: the feed
  // is the user's engine's (the Cache tab's settings follow it).
  void show_feed(std::unique_ptr<panel::CacheFeed> feed, double now, bool users);
  // The user's own tree, parked while another is shown, with the share of
  // height it was shown with and the engine it was made from.
  struct ParkedTree {
    panel::TreeState tree;
    float bottom_frac = 0;
    const void* engine = nullptr;
  };
  std::optional<ParkedTree> user_tree_;
  // The tree the user's chat marks: the parked one while another is shown.
  panel::TreeState& user_tree() { return user_tree_ ? user_tree_->tree : tree; }
  void park_user_tree();
  // The user's tree comes back in front; from another engine than the one
  // it was made from, only its view settings do.
  void restore_user_tree(panel::CacheFeed* feed);
  const void* tree_engine_ = nullptr;  // the engine behind the user's tree in front
  void apply_event(const CacheEvent& e, double now);

  double now_ = 0;
};

}  // namespace rc::ui
