// Subscriber (kv-subscriber.h) on cppzmq. Replay speaks vLLM's protocol: the
// subscriber sends the first missing sequence as 8 big-endian bytes; the
// publisher's ROUTER answers with (sequence, batch) pairs for every buffered
// message from there on, then a sequence of -1 with an empty batch. A DEALER
// is used rather than REQ so all those replies can be read; it sends the
// empty delimiter frame a REQ would, so the publisher sees the same frames.
#include "kv-subscriber.h"

#include "kv-security.h"

#include <cerrno>
#include <chrono>
#include <optional>

#include <zmq.hpp>
#include <zmq_addon.hpp>

namespace rc::kv_events {

struct Source {
  Endpoint endpoint;
  // With several endpoints (one per data-parallel rank), the rank of a
  // batch that does not name one: the endpoint's place in the list.
  // -1 with one endpoint (the batch's rank, 0 when omitted, stands).
  int rank = -1;
  zmq::socket_t sub;
  zmq::socket_t replay;  // unconnected when endpoint.replay is ""
  SequenceTracker seq;
  bool history_done = false;  // the attach replay has been read (or given up on)
  // Sequences the attach replay applied: live copies of them are skipped.
  std::optional<std::pair<uint64_t, uint64_t>> history;
  bool resync_pending = false;
};

struct Subscriber::Impl {
  zmq::context_t ctx{1};
  std::vector<std::unique_ptr<Source>> sources;
  std::string topic;
  SubscriberStats stats;
};

Subscriber::Subscriber() : impl_(std::make_unique<Impl>()) {}
Subscriber::~Subscriber() = default;

Result<std::unique_ptr<Subscriber>> Subscriber::connect(const std::vector<Endpoint>& endpoints,
                                                        const std::string& topic) {
  std::unique_ptr<Subscriber> s(new Subscriber());
  s->impl_->topic = topic;
  for (const Endpoint& e : endpoints) {
    auto src = std::make_unique<Source>();
    src->endpoint = e;
    try {
      src->sub = zmq::socket_t(s->impl_->ctx, zmq::socket_type::sub);
      src->sub.set(zmq::sockopt::linger, 0);
      src->sub.set(zmq::sockopt::subscribe, topic);
      if (!e.curve_server_key.empty()) {
        if (Status st = make_curve_client(src->sub.handle(), e.curve_server_key); !st.ok())
          return st;
      }
      src->sub.connect(e.pub);
      if (!e.replay.empty()) {
        src->replay = zmq::socket_t(s->impl_->ctx, zmq::socket_type::dealer);
        src->replay.set(zmq::sockopt::linger, 0);
        if (!e.curve_server_key.empty()) {
          if (Status st = make_curve_client(src->replay.handle(), e.curve_server_key); !st.ok())
            return st;
        }
        src->replay.connect(e.replay);
      }
    } catch (const zmq::error_t& err) {
      const std::string& bad = src->replay || e.replay.empty() ? e.pub : e.replay;
      return Status(StatusCode::invalid_argument,
                    "cannot connect to KV-events endpoint '" + bad + "': " + err.what());
    }
    if (endpoints.size() > 1) src->rank = static_cast<int>(s->impl_->sources.size());
    s->impl_->sources.push_back(std::move(src));
  }
  return s;
}

namespace {

std::string be64(uint64_t v) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[7 - i] = static_cast<char>((v >> (8 * i)) & 0xff);
  return out;
}

bool apply_payload(std::string_view payload, BlockTree& tree, SubscriberStats& st,
                   const BlockFeed::BatchObserver& observer, int endpoint_rank,
                   bool* resync_pending = nullptr) {
  auto batch = decode_batch(payload);
  if (!batch.ok()) {
    ++st.malformed_messages;
    st.last_error = batch.status().message();
    return false;
  }
  if (!batch->rank_sent && endpoint_rank >= 0) batch->rank = endpoint_rank;
  // A batch that begins by clearing the rank is a snapshot: the view is
  // whole again from here.
  if (resync_pending && *resync_pending && !batch->events.empty() &&
      batch->events.front().kind == EventKind::cleared) {
    *resync_pending = false;
    ++st.resyncs;
  }
  tree.apply(*batch);
  if (observer) observer(*batch);
  ++st.messages;
  return true;
}

// Asks src's replay socket for [gap.first_missing, gap.next) and applies what
// comes back in that range, counting it in recovered.
void replay_range(Source& src, const SequenceTracker::Gap& gap, int timeout_ms, BlockTree& tree,
                  SubscriberStats& st, const BlockFeed::BatchObserver& observer,
                  uint64_t& recovered) {
  const std::string start = be64(gap.first_missing);
  std::vector<zmq::const_buffer> req = {zmq::const_buffer(nullptr, 0), zmq::buffer(start)};
  if (!zmq::send_multipart(src.replay, req, zmq::send_flags::dontwait)) return;
  uint64_t expect = gap.first_missing;
  // A publisher that never sends the end marker (or floods) must not hold
  // the subscriber: the whole replay gets a bounded time.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(8 * timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    zmq::pollitem_t item{static_cast<void*>(src.replay), 0, ZMQ_POLLIN, 0};
    if (zmq::poll(&item, 1, std::chrono::milliseconds(timeout_ms)) <= 0) break;
    std::vector<zmq::message_t> frames;
    if (!zmq::recv_multipart(src.replay, std::back_inserter(frames), zmq::recv_flags::dontwait))
      break;
    // [empty delimiter] seq payload
    size_t at = (frames.size() == 3 && frames[0].size() == 0) ? 1 : 0;
    if (frames.size() - at != 2) {
      ++st.malformed_messages;
      st.last_error = "replay reply with " + std::to_string(frames.size()) + " frames";
      continue;
    }
    const auto seq = decode_sequence(frames[at].to_string_view());
    if (frames[at + 1].size() == 0) break;  // end of replay
    if (!seq) {
      ++st.malformed_messages;
      st.last_error = "replay reply with a bad sequence frame";
      continue;
    }
    // Buffered messages from before the gap or after it are not needed.
    if (*seq != expect || *seq >= gap.next) continue;
    if (apply_payload(frames[at + 1].to_string_view(), tree, st, observer, src.rank)) {
      ++recovered;
      ++st.replayed_messages;
    }
    ++expect;
  }
}

// Stale replies (a late answer to an abandoned request) would be taken for
// this request's: drop them first.
void drain(zmq::socket_t& s) {
  std::vector<zmq::message_t> frames;
  while (zmq::recv_multipart(s, std::back_inserter(frames), zmq::recv_flags::dontwait))
    frames.clear();
}

// Replays a gap; returns how many of its messages were recovered.
uint64_t replay_gap(Source& src, const SequenceTracker::Gap& gap, int timeout_ms, BlockTree& tree,
                    SubscriberStats& st, const BlockFeed::BatchObserver& observer) {
  uint64_t recovered = 0;
  if (!src.replay) return 0;
  try {
    drain(src.replay);
    replay_range(src, gap, timeout_ms, tree, st, observer, recovered);
  } catch (const zmq::error_t& e) {
    if (e.num() != EINTR) st.last_error = std::string("ZeroMQ replay: ") + e.what();
  }
  return recovered;  // what was applied before an error stays; the rest is dropped
}

// Attaching: asks src's replay socket for every message it still buffers
// (from sequence 0; the publisher answers from its oldest) and applies them
// in order, so blocks stored before this subscriber joined are known.
void read_history(Source& src, int timeout_ms, BlockTree& tree, SubscriberStats& st,
                  const BlockFeed::BatchObserver& observer) {
  src.history_done = true;
  if (!src.replay) return;
  const std::string start = be64(0);
  std::vector<zmq::const_buffer> req = {zmq::const_buffer(nullptr, 0), zmq::buffer(start)};
  if (!zmq::send_multipart(src.replay, req, zmq::send_flags::dontwait)) return;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(8 * timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    zmq::pollitem_t item{static_cast<void*>(src.replay), 0, ZMQ_POLLIN, 0};
    if (zmq::poll(&item, 1, std::chrono::milliseconds(timeout_ms)) <= 0) {
      st.last_error = "the replay endpoint " + src.endpoint.replay + " did not answer";
      return;
    }
    std::vector<zmq::message_t> frames;
    if (!zmq::recv_multipart(src.replay, std::back_inserter(frames), zmq::recv_flags::dontwait))
      return;
    const size_t at = (frames.size() == 3 && frames[0].size() == 0) ? 1 : 0;
    if (frames.size() - at != 2) {
      ++st.malformed_messages;
      continue;
    }
    if (frames[at + 1].size() == 0) return;  // end of replay
    const auto seq = decode_sequence(frames[at].to_string_view());
    if (!seq || (src.history && *seq <= src.history->second)) {
      ++st.malformed_messages;
      continue;
    }
    if (!src.history) {
      src.history.emplace(*seq, *seq);
      st.history_unheld_messages += *seq;
    }
    src.history->second = *seq;
    src.seq.observe(*seq);
    if (apply_payload(frames[at + 1].to_string_view(), tree, st, observer, src.rank,
                      &src.resync_pending))
      ++st.history_messages;
  }
}

}  // namespace

void Subscriber::poll(int timeout_ms) {
  const int replay_timeout_ms = replay_timeout_ms_;
  // A signal (SIGINT to stop cache-watch) interrupts zmq_poll: EINTR ends
  // this poll quietly; any other socket error is recorded, never thrown.
  try {
    poll_once(timeout_ms, replay_timeout_ms);
  } catch (const zmq::error_t& e) {
    if (e.num() != EINTR) impl_->stats.last_error = std::string("ZeroMQ: ") + e.what();
  }
}

void Subscriber::poll_once(int timeout_ms, int replay_timeout_ms) {
  auto& im = *impl_;
  for (auto& s : im.sources) {
    if (!s->history_done) read_history(*s, replay_timeout_ms, tree_, im.stats, observer_);
  }
  std::vector<zmq::pollitem_t> items;
  for (auto& s : im.sources) items.push_back({static_cast<void*>(s->sub), 0, ZMQ_POLLIN, 0});
  if (items.empty()) return;
  if (zmq::poll(items.data(), items.size(), std::chrono::milliseconds(timeout_ms)) <= 0) return;
  for (size_t i = 0; i < items.size(); ++i) {
    if (!(items[i].revents & ZMQ_POLLIN)) continue;
    Source& src = *im.sources[i];
    // Drain what is ready now; the next poll() picks up the rest.
    for (int n = 0; n < 1024; ++n) {
      std::vector<zmq::message_t> frames;
      if (!zmq::recv_multipart(src.sub, std::back_inserter(frames), zmq::recv_flags::dontwait))
        break;
      if (frames.size() != 3) {
        ++im.stats.malformed_messages;
        im.stats.last_error = "message with " + std::to_string(frames.size()) + " frames (want 3)";
        continue;
      }
      const auto seq = decode_sequence(frames[1].to_string_view());
      if (!seq) {
        ++im.stats.malformed_messages;
        im.stats.last_error =
            "sequence frame of " + std::to_string(frames[1].size()) + " bytes (want 8)";
        continue;
      }
      if (src.history) {
        // Already applied from the attach replay; a sequence below it means
        // the publisher restarted.
        if (*seq >= src.history->first && *seq <= src.history->second) continue;
        src.history.reset();
      }
      // The first message without a replay: the ones before it are unknown.
      if (!src.seq.last() && *seq > 0) im.stats.history_unheld_messages += *seq;
      const uint64_t restarts = src.seq.restarts();
      if (auto gap = src.seq.observe(*seq)) {
        ++im.stats.seq_gaps;
        const uint64_t got = replay_gap(src, *gap, replay_timeout_ms, tree_, im.stats, observer_);
        im.stats.dropped_messages += gap->size() - got;
        if (got < gap->size()) {
          // Subscribing again is a new subscription to an XPUB publisher,
          // which RadixChat's answers with a snapshot.
          src.sub.set(zmq::sockopt::subscribe, im.topic);
          src.resync_pending = true;
          ++im.stats.resync_requests;
        }
      }
      im.stats.publisher_restarts += src.seq.restarts() - restarts;
      apply_payload(frames[2].to_string_view(), tree_, im.stats, observer_, src.rank,
                    &src.resync_pending);
    }
  }
}

SubscriberStats Subscriber::stats() const {
  SubscriberStats st = impl_->stats;
  for (const auto& s : impl_->sources) st.resync_pending = st.resync_pending || s->resync_pending;
  return st;
}

}  // namespace rc::kv_events
