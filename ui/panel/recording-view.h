// The panel's recordings, without drawing: Record/Stop of the
// local engine (a RecordingSink the app makes), and an opened recording
// (a RecordingSource) shown through a CacheFeed whose tree follows a cursor
// on the recording's event seqs.
//
// Moving the cursor forward by a little hands the panel the recorded events
// in between (the tree animates and the Events tab logs them); any other
// move (back, or far) makes the feed report an overflow, so the panel
// resyncs from the feed's snapshot: the recording's nearest stored snapshot
// at or before the cursor plus forward replay (RecordingSource::tree_at).
//
// GUI thread only. The drawing is in recording-panel.cpp and
// recording-timeline.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "panel/cache-feed.h"
#include "panel/recording-access.h"

namespace rc::ui::panel {

// Where the shown tree is, shared by the view and its feed.
struct RecordingCursor {
  uint64_t target = 0;   // the seq the user asked for
  uint64_t applied = 0;  // the seq the panel's tree is at
  std::string error;     // why the tree at target could not be built
};

class RecordingView {
 public:
  // Set by the app (through CachePanel): without them the controls are hidden.
  RecordingOpener opener;
  RecordingStarter starter;
  // Set by the panel's owner: asks the app for a file name (a dialog);
  // `for_recording`: a new file to record into, else one to open.
  std::function<void(bool for_recording)> pick_file;
  // Set by the panel's owner: installs the recording's feed (null: back to
  // the local engine's), after the current frame.
  std::function<void(std::unique_ptr<CacheFeed>)> install;
  // Set by the panel's owner when it can export pictures: asks for a file
  // and writes the tree shown (live, or at the recording's cursor).
  std::function<void()> export_tree;

  // --- Record / Stop -------------------------------------------------------
  std::string start_recording(const std::string& path);  // "" or why not
  void stop_recording(const std::string& why = "");
  bool recording() const { return sink_ != nullptr; }
  RecordingSink* sink() const { return sink_.get(); }
  // The latest status line: while recording, the sink's; after Stop, what
  // was written or why it stopped (the size cap).
  std::string record_status() const;

  // --- An opened recording --------------------------------------------------
  std::string open(const std::string& path);  // "" or why not; installs the feed
  // Back to the local engine; `reinstall` false when another feed is taking
  // the recording's place anyway.
  void close(bool reinstall = true);
  bool shown() const { return source_ != nullptr; }
  // The feed open() made (compared, never used: the panel owns it).
  const CacheFeed* feed() const { return feed_; }
  RecordingSource* source() const { return source_.get(); }
  const RecordingCursor& cursor() const { return *cursor_; }
  std::string open_error;  // the latest failed open, shown in the header

  void seek(uint64_t seq);
  void step_event(int dir);    // one event either way
  bool step_request(int dir);  // to the previous / next request's match
  void jump_request(size_t index);
  // Index into source()->requests() of the request at or before the cursor
  // chosen last (jump, step, click), or -1.
  int selected_request = -1;
  const MissView& miss();  // for selected_request, cached

  // Play: the cursor advances `speed` events per second of `now`.
  bool playing = false;
  double speed = 200;
  void tick(double now);

  const std::vector<std::string>& advisor();  // computed once per recording

 private:
  std::shared_ptr<RecordingSource> source_;
  const CacheFeed* feed_ = nullptr;
  std::shared_ptr<RecordingCursor> cursor_ = std::make_shared<RecordingCursor>();
  std::unique_ptr<RecordingSink> sink_;
  std::string last_record_status_;
  double last_tick_ = -1;
  double play_carry_ = 0;
  int miss_for_ = -2;
  MissView miss_;
  bool advisor_done_ = false;
  std::vector<std::string> advisor_;
};

// The feed that shows `source` at `cursor->target`.
std::unique_ptr<CacheFeed> make_recording_feed(std::shared_ptr<RecordingSource> source,
                                               std::shared_ptr<RecordingCursor> cursor);

}  // namespace rc::ui::panel
