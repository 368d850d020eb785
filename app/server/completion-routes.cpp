#include "completion-routes.h"

#include <algorithm>
#include <filesystem>

#include "document-routes.h"
#include "http-util.h"
#include "openai-response.h"
#include "radixchat/context-fit.h"
#include "socket-stream.h"

namespace rc::server {

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kPoll{200};

void answer_whole(Generation& gen, const ResponseMeta& meta, httplib::Response& res) {
  std::string text;
  StreamEvent last;
  for (bool done = false; !done;) {
    std::vector<StreamEvent> events;
    gen.wait(events, kPoll);
    for (StreamEvent& ev : events) {
      text += ev.text;
      if (ev.finished) {
        last = std::move(ev);
        done = true;
      }
    }
  }
  if (last.reason == FinishReason::error) return write_error(res, error_from_status(last.error));
  if (last.reason == FinishReason::cancelled) {
    return write_error(res, unavailable("the request was cancelled: the server is shutting down"));
  }
  write_json(res, full_response(meta, text, last.reason, last.metrics));
}

// The SSE writer's state, shared by the content provider (called again and
// again on the worker thread) and the releaser (called once at the end,
// whether the stream completed, failed or the server stopped).
struct StreamState {
  ServerContext* ctx = nullptr;
  std::shared_ptr<Generation> gen;
  ResponseMeta meta;
  bool opened = false;
  bool done = false;  // [DONE] written
  Clock::time_point last_write = Clock::now();
};

// The SSE text for what the engine sent since the last call.
std::string render_events(StreamState& st, std::vector<StreamEvent>& events) {
  std::string out;
  if (!st.opened) {
    out += first_chunk(st.meta);
    st.opened = true;
  }
  for (const StreamEvent& ev : events) {
    if (!ev.text.empty()) out += delta_chunk(st.meta, ev.text);
    if (!ev.finished) continue;
    if (ev.reason == FinishReason::error) {
      out += error_chunk(ev.error.to_string(), "server_error");
    } else if (ev.reason == FinishReason::cancelled) {
      out += error_chunk("the request was cancelled: the server is shutting down", "server_error");
    } else {
      out += finish_chunk(st.meta, ev.reason);
      if (st.meta.include_usage) out += usage_chunk(st.meta, ev.metrics);
    }
    out += kDoneChunk;
    st.done = true;
  }
  return out;
}

bool provide(StreamState& st, httplib::DataSink& sink) {
  std::vector<StreamEvent> events;
  if (st.opened) st.gen->wait(events, kPoll);
  std::string out = render_events(st, events);
  const Clock::time_point now = Clock::now();
  if (out.empty()) {
    if (now - st.last_write < st.ctx->options.heartbeat) return true;
    out = ": keep-alive\n\n";
  }
  // An empty write would end httplib's chunked loop; `out` is never empty.
  if (!sink.write(out.data(), out.size())) return false;  // the releaser cancels
  st.last_write = now;
  if (st.done) sink.done();
  return true;
}

void answer_stream(ServerContext& ctx, std::shared_ptr<Generation> gen, ResponseMeta meta,
                   httplib::Response& res) {
  auto st = std::make_shared<StreamState>();
  st->ctx = &ctx;
  st->gen = std::move(gen);
  st->meta = std::move(meta);
  ctx.streams_open++;
  set_sse_headers(res);
  res.status = 200;
  res.set_chunked_content_provider(
      kEventStream, [st](size_t, httplib::DataSink& sink) { return provide(*st, sink); },
      [st](bool) {
        // `success` is also true when the server stopped mid-stream, so the
        // state decides: no [DONE] written means the client did not get it.
        if (!st->done) {
          if (!st->ctx->draining) st->ctx->generations->note_client_disconnect();
          st->gen->abandon();
        }
        st->ctx->streams_open--;
      });
}

int64_t file_mtime(const std::string& path) {
  std::error_code ec;
  auto t = std::filesystem::last_write_time(path, ec);
  if (ec) return 0;
  // file_clock's epoch is not the Unix epoch; shift through "now" on both.
  const auto sys = std::chrono::system_clock::now() +
                   std::chrono::duration_cast<std::chrono::system_clock::duration>(
                       t - std::filesystem::file_time_type::clock::now());
  return std::chrono::duration_cast<std::chrono::seconds>(sys.time_since_epoch()).count();
}

// The tiers below the KV pool and whether each answers (a Redis that went
// away says "down" here, with why).
nlohmann::json tiers_json(const TierStats& t) {
  nlohmann::json out = nlohmann::json::array();
  for (const TierInfo& i : t.tiers) {
    out.push_back({{"name", i.name},
                   {"where", i.where},
                   {"state", i.state},
                   {"error", i.error},
                   {"bytes", i.bytes},
                   {"budget_bytes", i.budget_bytes},
                   {"block_tokens", t.block_tokens}});
  }
  return out;
}

// The model's recommended sampling under the request's field names: what a
// request that leaves those fields out samples with.
nlohmann::json recommended_sampling_json(const RecommendedSampling& s) {
  nlohmann::json out = nlohmann::json::object();
  if (s.temperature) out["temperature"] = *s.temperature;
  if (s.top_k) out["top_k"] = *s.top_k;
  if (s.top_p) out["top_p"] = *s.top_p;
  if (s.min_p) out["min_p"] = *s.min_p;
  if (s.repetition_penalty) out["repetition_penalty"] = *s.repetition_penalty;
  if (s.repeat_last_n) out["repeat_last_n"] = *s.repeat_last_n;
  return out;
}

nlohmann::json model_json(ServerContext& ctx) {
  const ModelInfo& m = ctx.engine.model_info();
  return {{"id", m.name},
          {"object", "model"},
          {"created", file_mtime(m.path)},
          {"owned_by", "radixchat"},
          {"architecture", m.architecture},
          {"context_length", m.context_length},
          {"n_vocab", m.n_vocab},
          {"chat_template", m.chat_template},
          {"chat_template_detail", m.chat_template_detail},
          {"chat_template_notice", m.chat_template_notice},
          {"reasoning", m.reasoning},
          {"recommended_sampling", recommended_sampling_json(m.sampling)},
          {"context_overflow", ctx.options.context_overflow},
          {"backend", m.backend},
          {"device", m.device},
          {"backend_reason", m.backend_reason},
          {"cache", m.cache},
          {"kv_pool_tokens", m.kv_pool_tokens},
          {"cache_tiers", tiers_json(ctx.engine.stats().tiers)}};
}

// Chat requests longer than the context: cut by the server's policy. Sets
// the X-RadixChat-Dropped-Messages header (and X-RadixChat-Context-Cut when
// the kept history changed at this turn) so clients can tell their users.
Status fit_chat(ServerContext& ctx, GenerateRequest& g, httplib::Response& res) {
  if (g.messages.empty()) return Status();
  const int context = ctx.engine.model_info().context_length;
  const int reserve = std::max(1, std::min(g.max_tokens, context / 4));
  Result<ContextFit> fit = fit_context(
      g.messages, context - reserve,
      parse_context_policy(ctx.options.context_overflow).value_or(ContextPolicy::rolling_window),
      chat_token_counter(ctx.engine));
  if (!fit.ok()) return fit.status();
  if (fit->dropped > 0) {
    res.set_header("X-RadixChat-Dropped-Messages", std::to_string(fit->dropped));
    if (fit->prefix_changed) res.set_header("X-RadixChat-Context-Cut", "1");
  }
  g.messages = std::move(fit->messages);
  return Status();
}

}  // namespace

void handle_completion(ServerContext& ctx, Endpoint endpoint, const std::string& body,
                       httplib::Response& res) {
  if (ctx.draining) return write_error(res, unavailable("the server is shutting down"));
  // A schema that compiles slowly stops when its client leaves or the
  // server stops (docs/server.md, "Limits").
  CompileLimits limits;
  limits.cancelled = [&ctx] { return ctx.draining.load() || client_gone(); };
  ApiResult<CompletionRequest> parsed =
      parse_completion_request(endpoint, body, limits, ctx.engine.model_info().sampling);
  if (!parsed.ok()) return write_error(res, parsed.error());
  CompletionRequest& r = parsed.value();
  if (!r.model.empty() && !ctx.serves_model(r.model)) {
    return write_error(res, model_not_found(r.model, ctx.engine.model_info().name));
  }
  int document_tokens = 0;
  if (auto e =
          attach_documents(ctx, body, endpoint == Endpoint::chat, r.generate, document_tokens)) {
    return write_error(res, *e);
  }
  if (Status st = fit_chat(ctx, r.generate, res); !st.ok()) {
    return write_error(res, error_from_status(st));
  }
  Result<std::shared_ptr<Generation>> gen =
      Generation::start(ctx.engine, std::move(r.generate), ctx.generations);
  if (!gen.ok()) {
    ApiError e = error_from_status(gen.status());
    if (endpoint == Endpoint::completions && e.param == "messages") e.param = "prompt";
    return write_error(res, e);
  }
  ResponseMeta meta = new_response_meta(endpoint, ctx.engine.model_info().name, ctx.fingerprint(),
                                        r.stream && r.include_usage);
  meta.document_tokens = document_tokens;
  if (r.stream) {
    answer_stream(ctx, std::move(gen.value()), std::move(meta), res);
  } else {
    answer_whole(*gen.value(), meta, res);
  }
}

void handle_models(ServerContext& ctx, httplib::Response& res) {
  write_json(res, {{"object", "list"}, {"data", nlohmann::json::array({model_json(ctx)})}});
}

void handle_model(ServerContext& ctx, const std::string& id, httplib::Response& res) {
  if (!ctx.serves_model(id)) {
    return write_error(res, model_not_found(id, ctx.engine.model_info().name));
  }
  write_json(res, model_json(ctx));
}

}  // namespace rc::server
