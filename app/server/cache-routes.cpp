#include "cache-routes.h"

#include "cache-json.h"
#include "http-util.h"

namespace rc::server {

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kPoll{250};

TokenDecoder decoder(ServerContext& ctx) {
  Engine* engine = &ctx.engine;
  return [engine](const std::vector<Token>& tokens) { return engine->detokenize(tokens); };
}

bool flag(const httplib::Request& req, const char* name) {
  if (!req.has_param(name)) return true;
  const std::string v = req.get_param_value(name);
  return !(v == "0" || v == "false" || v == "no");
}

struct ViewerState {
  ServerContext* ctx = nullptr;
  std::shared_ptr<EventSubscription> sub;
  bool need_snapshot = true;
  std::string resync_reason;  // empty for the first snapshot
  bool done = false;
  Clock::time_point last_write = Clock::now();
};

std::string snapshot_message(ViewerState& v) {
  v.sub->begin_snapshot();
  const CacheSnapshot snap = v.ctx->engine.cache_snapshot();
  v.sub->set_floor(snap.next_seq);
  nlohmann::json j = cache_snapshot_json(snap, decoder(*v.ctx));
  j["type"] = "snapshot";
  j["seq"] = static_cast<int64_t>(snap.next_seq) - 1;
  if (!v.resync_reason.empty()) {
    j["resync"] = true;
    j["reason"] = v.resync_reason;
  }
  return sse_data(j);
}

bool provide_events(ViewerState& v, httplib::DataSink& sink) {
  std::string out;
  if (v.need_snapshot) {
    out = snapshot_message(v);
    v.need_snapshot = false;
  } else {
    std::vector<CacheEvent> events;
    switch (v.sub->wait(events, kPoll)) {
      case EventSubscription::Wake::closed:
        out = sse_data({{"type", "shutdown"}});
        v.done = true;
        break;
      case EventSubscription::Wake::resync:
        v.need_snapshot = true;
        v.resync_reason =
            "events were lost (this viewer fell behind or the engine's queue "
            "overflowed); replace the tree with this snapshot";
        return true;
      case EventSubscription::Wake::events: {
        const TokenDecoder decode = decoder(*v.ctx);
        for (const CacheEvent& e : events) out += sse_data(cache_event_json(e, decode));
        break;
      }
      case EventSubscription::Wake::timeout:
        break;
    }
  }
  const Clock::time_point now = Clock::now();
  if (out.empty()) {
    if (now - v.last_write < v.ctx->options.heartbeat) return true;
    out = ": keep-alive\n\n";  // notices a viewer that went away
  }
  if (!sink.write(out.data(), out.size())) return false;
  v.last_write = now;
  if (v.done) sink.done();
  return true;
}

}  // namespace

void handle_cache_snapshot(ServerContext& ctx, const httplib::Request& req,
                           httplib::Response& res) {
  CacheJsonOptions o;
  o.tokens = flag(req, "tokens");
  o.text = flag(req, "text");
  o.pages = flag(req, "pages");
  write_json(res, cache_snapshot_json(ctx.engine.cache_snapshot(), decoder(ctx), o));
}

void handle_cache_events(ServerContext& ctx, httplib::Response& res) {
  if (ctx.draining) return write_error(res, unavailable("the server is shutting down"));
  auto v = std::make_shared<ViewerState>();
  v->ctx = &ctx;
  v->sub = ctx.hub.subscribe();
  if (!v->sub) {
    return write_error(res, unavailable("too many cache viewers attached (at most " +
                                        std::to_string(ctx.options.max_event_subscribers) +
                                        "); close one or raise --max-viewers"));
  }
  set_sse_headers(res);
  res.status = 200;
  res.set_chunked_content_provider(
      kEventStream, [v](size_t, httplib::DataSink& sink) { return provide_events(*v, sink); },
      [v](bool) { v->ctx->hub.unsubscribe(v->sub); });
}

}  // namespace rc::server
