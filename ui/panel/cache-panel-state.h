// Everything the cache panel knows, without Qt or GL: the feed it reads, the
// replayed tree, its layout, the camera, selection, log, plots, demo runner
// and the pause/step queue. CachePanel (Qt) owns one and calls frame() from
// paintGL; tests and the benchmark drive it directly with an ImGui context
// and no window.
//
// GUI thread only. The owner of the feed's engine or cache keeps it alive
// while it is set.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "panel/cache-feed.h"
#include "panel/demo-scenarios.h"
#include "panel/event-log.h"
#include "panel/lesson-engine.h"
#include "panel/miss-view.h"
#include "panel/node-marks.h"
#include "panel/panel-fit.h"
#include "panel/recording-view.h"
#include "panel/remote-attach.h"
#include "panel/stats-history.h"
#include "panel/tree-lod.h"
#include "panel/tree-model.h"
#include "panel/tree-view.h"

namespace rc::ui {

struct CachePanelState {
  CachePanelState();
  ~CachePanelState();

  // --- Source --------------------------------------------------------------
  // Replaces the feed (null: nothing to show) and resyncs from a snapshot.
  void set_feed(std::unique_ptr<panel::CacheFeed> feed, double now);
  panel::CacheFeed* feed() const { return feed_.get(); }

  // Drains the feed, applies (or, paused, queues) its events, resyncs on
  // overflow or a seq gap, updates plots and the demo. Once per frame.
  void sync(double now);
  // Takes a fresh snapshot and resets the model (log says why).
  void resync(double now, const std::string& why);
  uint64_t resyncs = 0;  // how many times the model was rebuilt
  // When the tree last changed (caller seconds). Highlights fade for a few
  // seconds after; an idle panel needs only a few frames a second.
  double last_activity = -1e9;
  bool wants_frames(double now) const {
    return now - last_activity < 7.0 || demo.running() || view.busy() || !pending.empty() ||
           lesson.state() == panel::LessonEngine::State::building || replay.playing;
  }

  // --- Pause and step (teaching) --------------------------------------------
  bool paused = false;
  std::deque<CacheEvent> pending;  // drained while paused, not applied yet
  bool pending_lost = false;       // the queue overflowed while paused
  void set_paused(bool on, double now);
  bool step_one(double now);  // applies the next queued event; false if none

  // --- Tree ------------------------------------------------------------------
  panel::TreeModel model;
  panel::LodOptions lod;
  panel::NodeMetrics metrics;
  panel::TreeView view;
  int orientation = 0;  // 0: by the canvas' shape, 1: left to right, 2: top to bottom
  // The layout for the current model and options; recomputed when the tree's
  // shape, the LOD options or the kept nodes change (and, with LOD folding
  // active, at most twice a second when only recency changed).
  const panel::TreeLayout& layout(double now);
  uint64_t layouts_computed = 0;  // also the layout generation the view sees
  // Pages of the tree by state (TreeModel::pages_by_state), per model version.
  const panel::TreeModel::Pages& pages();

  // Decoded text of a node's span (and the one-line fit the view caches).
  panel::NodeLabel& label(const panel::TreeNode& n);
  // Fold or unfold a node by hand; show all children of a capped parent.
  void toggle_fold(NodeId id);
  void expand_children(NodeId id);
  void lod_changed() { ++lod_version_; }

  NodeId selected = kNoNode;
  NodeId located = kNoNode;  // deepest node of the located message
  NodeId located_partial = kNoNode;
  std::vector<Token> located_tokens;
  // `request`: what the app knows of the request behind the message (its
  // prompt's length within `tokens`, its cached tokens), for "Why it missed".
  void locate(const std::vector<Token>& tokens, double now,
              const panel::LocatedRequest& request = {});
  panel::LocatedRequest located_request;
  void select(NodeId id);

  // --- Explanations (node-marks.h, panel-marks.cpp) ------------------------
  // Siblings that read the same with other token ids; recomputed in sync()
  // when the tree's shape changes.
  panel::SiblingDiffs look_alikes;
  // The latest context cut and where its prompt leaves the cached path.
  panel::ContextCut context_cut;
  // The app reports a cut: `prompt` was sent after it and its first
  // `reused` tokens came from the cache (an empty prompt: unknown, no
  // badge). Logs it, shows the banner and badges the branch point.
  void mark_context_cut(int dropped, const std::vector<Token>& prompt, int64_t reused, double now);

  // --- Why it missed, for a located chat message (miss-view.cpp) -----------
  // Set by the app (recording/miss-analysis behind it); without it the
  // Node tab has no "Why it missed" section.
  panel::MissExplainer miss_explainer;
  // The located request's prompt against the feed's snapshot, taken by
  // locate() (the moment the user asks) and again on Recheck; with its
  // cached count known, less its own path (panel::without_own_path). Only for the user's own
  // live feed: not a recording (its Request tab), a remote cache or a
  // lesson's engine.
  panel::MissView live_miss;
  bool live_miss_valid = false;
  bool can_explain_located() const;
  void explain_located();

  // Conversations that use the selected node (answer of the owner).
  NodeId conversations_for = kNoNode;
  std::vector<std::string> conversation_titles;
  bool conversations_pending = false;

  // --- Remote cache (remote-attach.h): "Attach to a cache..." / "Detach" ------
  panel::RemoteAttach remote;
  bool remote_shown() const { return feed_ && feed_->remote(); }

  // --- Recordings (recording-panel.cpp): Record/Stop, Open, the timeline -----
  panel::RecordingView replay;
  // The recording's feed is the one shown (not a lesson's in front of it).
  bool replay_shown() const { return feed_ && replay.shown() && feed_.get() == replay.feed(); }
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

  // --- Log, plots, demos, settings -------------------------------------------
  panel::EventLog log;
  panel::StatsHistory history;
  panel::DemoRunner demo;

  // --- Lesson mode (lesson-panel.cpp) ----------------------------------------
  // A demo runs in a lesson engine of its own (lesson-engine.h): while it is
  // shown the user's feed is parked, untouched (pool, policy, pinned
  // prompts), and it comes back when the lesson is stopped, or when the user
  // chats again after the demo finished.
  panel::LessonEngine lesson;
  int lesson_policy = 0;  // index into kCachePolicies: the demos' cache
  // A demo's pool unless it asks for less (or its prompts need more): three
  // of the longest demo requests fit, and a 7B F16 model's is 512 MiB.
  int64_t lesson_pool_tokens = 1024;
  std::string lesson_error;  // why the latest lesson could not start
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
  bool lesson_active() const { return lesson_scenario_ >= 0; }
  bool lesson_shown() const { return parked_feed_ != nullptr; }
  // The feed of the user's own engine (parked while a lesson is shown).
  panel::CacheFeed* user_feed() const { return parked_feed_ ? parked_feed_.get() : feed_.get(); }
  CacheStats cache_stats;  // latest from the feed
  // --- Cache tiers below the pool (panel-tiers.cpp) ---------------------------
  TierStats tiers;         // latest from the feed
  bool has_tiers = false;  // the feed reports tiers (an engine made with them)
  // Snapshots carry each node's held_below, events do not: while tiers are
  // on and the panel is not paused, sync() refreshes it at most this often.
  static constexpr double kHeldRefreshSeconds = 1.0;
  uint64_t held_refreshes = 0;
  // "host, disk" and the lowest tier's name, for the tree view's marks.
  std::string tier_names() const;
  std::string sink_tier() const;
  // "host 12 MB · 5 demoted · 2 promoted · 2 loads (576 tok) vs 1 recompute".
  std::string tier_line() const;
  // Drafted decoding, from the draft events (panel-marks.cpp): "drafts: 120
  // drafted · 110 accepted · 10 wasted"; empty until a draft is verified.
  std::string draft_line() const;
  panel::RequestTotals requests;  // latest from the feed (engine only)
  bool has_requests = false;
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
  double last_draw_ms = 0;  // CPU time of the latest draw() (UI build)
  // Whether the latest frame fit the display (panel-fit.h): every window
  // inside it and every item inside its window. Tests read it.
  panel::PanelFit last_fit;
  // Whether the user's view is saved now (tests).
  bool user_view_saved() const { return user_view_.has_value(); }
  // Tabs by name: the one shown in the latest frame, and one to switch to
  // in the next (tests, and controls that open a tab).
  std::string current_tab;
  std::string select_tab;
  // Where the latest frame drew things a user must be able to reach, in
  // display pixels (tests assert they are inside the panel, whole).
  struct ItemBox {
    std::string label;
    ImVec2 min{0, 0}, max{0, 0};
    float label_w = 0;  // the label's text width: a tab narrower than it is cut
    bool visible = false;
  };
  std::vector<ItemBox> tab_boxes;        // the tabs shown
  std::vector<std::string> hidden_tabs;  // the rest, under "More"
  ItemBox next_step_box;

  // Text scale for projectors: every ImGui text, the tree's labels and its
  // boxes grow together. The GL host rebuilds the font atlas at
  // kBaseFontPx * text_scale and records that in font_atlas_scale; without
  // it (tests) ImGui scales the base atlas.
  static constexpr float kBaseFontPx = 15.0f;
  static constexpr float kMinTextScale = 0.75f, kMaxTextScale = 2.5f, kTextScaleStep = 1.15f;
  float text_scale = 1.0f;
  float font_atlas_scale = 1.0f;
  void set_text_scale(float scale);
  // Share of the panel's height below the tree (the tabs); the bar between
  // them drags it.
  float bottom_frac = 0.4f;
  float events_frac = 0.55f;  // the Events tab's share: a log needs lines
  float bottom_share() const { return current_tab == "Events" ? events_frac : bottom_frac; }
  static constexpr float kSplitHandlePx = 7.0f;
  // The policy is `off`: no reuse, so only sequences in flight are drawn.
  bool policy_off() const;
  // Seconds an eviction's ghost is shown over the old layout before the
  // tree reflows (panel-chrome.cpp).
  static constexpr double kGhostHoldSeconds = 0.9;
  bool holding_for_ghosts(double now) const;
  bool sync_in_flight_only();

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
  // Set by draw_header: the panel is too narrow for the actions' full names.
  bool narrow_toolbar = false;
  void draw_off_notice();
  void draw_split_handle(float total_h);
  void ask_conversations(NodeId id);
  // panel-marks.cpp
  void refresh_marks(double now);
  void draw_node_marks_tab(const panel::TreeNode& n);
  // panel-tiers.cpp
  void refresh_tiers(double now);
  void draw_node_tiers(const panel::TreeNode& n);
  double held_refreshed_at_ = -1e9;
  // miss-view.cpp: under the located node's details.
  void draw_live_miss();
  NodeId live_miss_node_ = kNoNode;  // selected when it was explained

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
  void show_feed(std::unique_ptr<panel::CacheFeed> feed, double now, bool users);
  std::string lesson_banner();
  void draw_lesson_steps();
  std::unique_ptr<panel::CacheFeed> parked_feed_;
  int lesson_scenario_ = -1;
  uint64_t user_requests_seen_ = 0;
  size_t lesson_fitted_ = 0;  // finished steps the view was fitted to
  // The user's own tree's view (layout direction, tabs' share, camera,
  // folds), saved while a lesson, a remote cache or a recording is shown and
  // put back when the user's tree returns.
  struct UserView {
    int orientation = 0;
    float bottom_frac = 0;
    panel::Camera cam;
    ImVec2 canvas{0, 0};  // the canvas the camera was on
    bool follow = true;
    bool vertical = false;
    std::unordered_set<NodeId> collapsed, expanded;
  };
  std::optional<UserView> user_view_;
  void save_user_view();
  void restore_user_view();

  void apply_event(const CacheEvent& e, double now);
  void place_new_ghosts(NodeId id);

  std::unique_ptr<panel::CacheFeed> feed_;
  std::unordered_map<NodeId, panel::NodeLabel> labels_;
  panel::TreeLayout layout_;
  uint64_t layout_structure_ = UINT64_MAX;
  uint64_t layout_version_ = UINT64_MAX;
  uint64_t layout_lod_version_ = UINT64_MAX;
  std::vector<NodeId> layout_keep_;
  double layout_at_ = -1e9;
  uint64_t lod_version_ = 0;
  uint64_t located_structure_ = 0;
  uint64_t ghosts_placed_ = 0;  // serial of the latest ghost given a place
  double now_ = 0;
  panel::TreeModel::Pages pages_;
  uint64_t pages_version_ = UINT64_MAX;
  const panel::TreeModel* pages_model_ = nullptr;
};

}  // namespace rc::ui
