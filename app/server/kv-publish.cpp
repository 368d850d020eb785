// KvEventsPublisher (kv-publish.h).
#include "kv-publish.h"

#include <chrono>

#include "tier-medium.h"

namespace rc::server {

Result<std::unique_ptr<KvEventsPublisher>> KvEventsPublisher::start(
    Engine& engine, EventHub& hub, const kv_events::PublisherOptions& o) {
  std::unique_ptr<KvEventsPublisher> p(new KvEventsPublisher());
  auto pub = kv_events::Publisher::bind(o);
  if (!pub.ok()) return pub.status();
  p->pub_ = std::move(pub.value());
  p->engine_ = &engine;
  p->hub_ = &hub;
  p->sub_ = hub.subscribe();
  if (!p->sub_)
    return Status(StatusCode::invalid_argument, "no cache-viewer slot left for --kv-events");
  // ZeroMQ sockets may move between threads before first use only with a
  // full barrier; the thread start is one.
  p->thread_ = std::thread([raw = p.get()] { raw->run(); });
  return p;
}

KvEventsPublisher::~KvEventsPublisher() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  if (sub_) hub_->unsubscribe(sub_);
}

namespace {

double now_seconds() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

}  // namespace

void KvEventsPublisher::run() {
  const std::string pool = kv_events::pool_medium(engine_->model_info());
  kv_events::TieredBlockMapper mapper(pool, kv_events::tier_medium(engine_->stats().tiers, pool));
  bool need_snapshot = true;
  std::vector<CacheEvent> events;
  while (!stop_) {
    kv_events::Batch batch;
    if (need_snapshot) {
      sub_->begin_snapshot();
      const CacheSnapshot snap = engine_->cache_snapshot();
      sub_->set_floor(snap.next_seq);
      // A tier that went down (Redis) or came back changes where blocks sink.
      mapper.set_lower_medium(kv_events::tier_medium(engine_->stats().tiers, pool));
      batch.events = mapper.reset(snap);
      need_snapshot = false;
    } else {
      events.clear();
      const auto wake = sub_->wait(events, std::chrono::milliseconds(20));
      if (wake == EventSubscription::Wake::closed) break;
      if (wake == EventSubscription::Wake::resync) need_snapshot = true;
      for (const CacheEvent& e : events) {
        if (mapper.apply(e, batch.events)) continue;
        need_snapshot = true;  // the mirror lost track: start over from a snapshot
        break;
      }
    }
    if (!batch.events.empty()) {
      batch.ts = now_seconds();
      pub_->publish(batch);
    }
    pub_->serve_replay();
    // A subscriber that joined (or lost messages and subscribed again)
    // gets the whole tree, as an SSE viewer does.
    if (pub_->take_subscriptions()) need_snapshot = true;
  }
}

}  // namespace rc::server
