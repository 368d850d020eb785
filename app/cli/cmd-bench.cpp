// `radixchat-cli bench`: replays a workload through the engine with a fixed
// number of concurrent clients and prints what the cache bought: hit rate,
// TTFT percentiles, throughput, KV peak. `--compare` runs all four cache
// settings on the same requests and prints them side by side with the
// speed-up the measured prefix/suffix lengths predict. `--tiers` runs the
// same requests with each set of cache tiers below the pool (bench-tiers.h);
// the reopen workload restarts the engine between its two turns.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <future>
#include <mutex>

#include <nlohmann/json.hpp>

#include "bench-planted-span.h"
#include "bench-rag.h"
#include "bench-tiers.h"
#include "bench-workloads.h"
#include "commands.h"
#include "engine-options.h"
#include "recording/event-tap.h"
#include "recording/miss-analysis.h"
#include "recording/recorder.h"

namespace rc::cli {

namespace {

struct BenchOptions {
  EngineOptions engine;
  std::string workload = "multi-turn";
  int requests = 32;
  int concurrency = 4;
  int max_tokens = 0;  // 0: 32, or 128 where replies follow a schema (room to close it)
  uint64_t seed = 1;
  float temperature = 0;  // > 0: each request samples with its own seed
  bool json = false;
  bool compare = false;
  std::string record;  // a recording of the run (recording/recorder.h)
  int record_max_mb = 1024;
  std::string planted_span;                 // system | user (bench-planted-span.h)
  recording::Recorder* recorder = nullptr;  // set while recording
  // Token ids hashed in the recording (recording/redaction.h).
  bool record_redact = false;
  std::vector<std::string> tiers;  // tier settings to compare (bench-tiers.h)
  WorkloadShape shape;             // document length, turns per conversation
  bool round_robin = false;        // one request at a time, conversations taking turns
  RagShape rag;                    // --docs, --retrieve, --doc-order (bench-rag.h)
};

struct BenchResult {
  std::string workload, cache;
  std::string tiers = "";  // the tier setting, when --tiers was given
  int requests = 0;
  double temperature = 0;
  int64_t prompt_tokens = 0, cached_tokens = 0, output_tokens = 0;
  int64_t document_tokens = 0, cached_document_tokens = 0;
  double wall_s = 0;
  std::vector<double> ttft_ms;
  std::vector<double> later_ttft_ms;  // turns after a conversation's first
  int64_t kv_peak_bytes = 0;
  uint64_t evictions = 0;
  std::string speculate;
  uint64_t drafted_tokens = 0, accepted_tokens = 0, draft_steps = 0;
  double decode_s = 0;  // summed over requests: first token -> finished
  // The same for turns after a conversation's first (a regeneration, the
  // next agent step): what drafts from the tree can speed up.
  int later_requests = 0;
  int64_t later_output_tokens = 0;
  double later_decode_s = 0;
  std::vector<std::string> replies;                // in request order, to check settings agree
  std::vector<std::vector<int32_t>> reply_tokens;  // the same, as generated ids
  TierStats tier_stats;
  double before_restart_ttft_ms_p50 = -1;  // reopen: the first turns, before the restart

  double percentile(double p) const { return percentile_of(ttft_ms, p); }
  static double percentile_of(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<size_t>(p * (v.size() - 1) + 0.5))];
  }
  double hit_rate() const { return prompt_tokens ? double(cached_tokens) / prompt_tokens : 0; }
  double output_tok_s() const { return wall_s > 0 ? output_tokens / wall_s : 0; }
  double total_tok_s() const { return wall_s > 0 ? (prompt_tokens + output_tokens) / wall_s : 0; }
  // Tokens after the first over the time spent producing them, per request
  // summed: what drafted decoding speeds up.
  double decode_tok_s() const {
    return decode_s > 0 ? double(output_tokens - requests) / decode_s : 0;
  }
  double later_decode_tok_s() const {
    return later_decode_s > 0 ? double(later_output_tokens - later_requests) / later_decode_s : 0;
  }
  // Adds a finished request of turn `turn` of its conversation, whose
  // documents (if any) went where `docs` says.
  void add_finished(const RequestMetrics& m, size_t turn, const PlacedDocuments& docs) {
    const double decode = (m.total_ms - m.ttft_ms) / 1000.0;
    prompt_tokens += m.prompt_tokens;
    cached_tokens += m.cached_tokens;
    output_tokens += m.output_tokens;
    document_tokens += docs.tokens;
    cached_document_tokens += docs.cached(m.cached_tokens);
    ttft_ms.push_back(m.ttft_ms);
    decode_s += decode;
    if (turn == 0) return;
    later_ttft_ms.push_back(m.ttft_ms);
    ++later_requests;
    later_output_tokens += m.output_tokens;
    later_decode_s += decode;
  }
  double mean_accepted_len() const {
    return draft_steps ? double(accepted_tokens) / draft_steps : 0;
  }
  // FNV-1a over the replies in request order, so runs can be compared by
  // their JSON alone.
  std::string replies_digest() const {
    uint64_t h = 0xcbf29ce484222325ull;
    for (const std::string& r : replies) {
      for (unsigned char c : r + '\0') h = (h ^ c) * 0x100000001b3ull;
    }
    char hex[17];
    std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(h));
    return hex;
  }
};

// A result for `w` on `engine`, sized for its requests, before any runs.
BenchResult empty_result(Engine& engine, const Workload& w, const BenchOptions& o) {
  BenchResult res;
  res.workload = w.name;
  res.cache = engine.model_info().cache;
  res.temperature = o.temperature;
  res.replies.resize(w.requests());
  res.reply_tokens.resize(w.requests());
  return res;
}

// The engine's figures after a run: KV peak, evictions, drafts, tiers.
void add_engine_figures(BenchResult& res, Engine& engine, const BenchOptions& o) {
  const EngineStats st = engine.stats();
  res.requests = static_cast<int>(res.ttft_ms.size());
  res.kv_peak_bytes = st.kv_bytes_used_peak;
  res.evictions = st.cache.evictions;
  res.speculate = o.engine.config.speculate;
  res.drafted_tokens = st.drafted_tokens;
  res.accepted_tokens = st.accepted_tokens;
  res.draft_steps = st.draft_steps;
  res.tier_stats = st.tiers;
}

// The messages a conversation starts from: its history, else its system prompt.
std::vector<ChatMessage> opening(const Conversation& c) {
  if (!c.history.empty()) return c.history;
  if (c.system.empty()) return {};
  return {{"system", c.system}};
}

// Closed loop: `concurrency` conversations in flight; a conversation's next
// turn is sent when its previous reply is complete, with that reply added.
Result<BenchResult> run_workload(Engine& engine, const Workload& w, const BenchOptions& o) {
  struct Client {
    size_t conv = 0;
    size_t turn = 0;
    std::vector<ChatMessage> messages;
    std::string reply;
    std::vector<int32_t> reply_tokens;
  };
  std::mutex mu;
  std::condition_variable cv;
  std::vector<Client> clients;
  size_t next_conv = 0;
  int in_flight = 0;
  Status error;
  BenchResult res = empty_result(engine, w, o);
  std::vector<size_t> first_request(w.conversations.size(), 0);
  for (size_t c = 1; c < w.conversations.size(); ++c) {
    first_request[c] = first_request[c - 1] + w.conversations[c - 1].users.size();
  }

  std::function<void(size_t)> send;  // sends client i's current turn; mu held
  send = [&](size_t i) {
    Client& cl = clients[i];
    const Conversation& conv = w.conversations[cl.conv];
    if (conv.regenerate && cl.turn > 0) {
      cl.messages.pop_back();  // the reply being regenerated
    } else {
      cl.messages.push_back({"user", conv.users[cl.turn]});
    }
    cl.reply.clear();
    cl.reply_tokens.clear();
    GenerateRequest req;
    req.messages = cl.messages;
    req.max_tokens = o.max_tokens > 0                               ? o.max_tokens
                     : w.response_format.type == OutputFormat::text ? 32
                                                                    : 128;
    req.ignore_eos = true;                    // equal output lengths under every cache setting
    req.response_format = w.response_format;  // structured: ends when the JSON does
    // Seeded per request, so every cache setting samples the same replies.
    req.sampling.temperature = o.temperature;
    req.sampling.seed = o.seed * 1000003 + first_request[cl.conv] + cl.turn;
    Result<PlacedDocuments> placed = place_conversation_documents(engine, req, conv);
    if (!placed.ok()) {
      error = placed.status();
      return;
    }
    ++in_flight;
    Result<RequestId> id = engine.submit(req, [&, i, docs = placed.value()](const StreamEvent& ev) {
      std::lock_guard<std::mutex> lock(mu);
      Client& c = clients[i];
      c.reply += ev.text;
      if (ev.token >= 0) c.reply_tokens.push_back(ev.token);
      if (!ev.finished) return true;
      res.reply_tokens[first_request[c.conv] + c.turn] = c.reply_tokens;
      if (o.recorder)
        o.recorder->request_finished(ev.id, ev.metrics, ev.reason, std::move(c.reply_tokens));
      --in_flight;
      if (ev.reason == FinishReason::error) error = ev.error;
      res.add_finished(ev.metrics, c.turn, docs);
      res.replies[first_request[c.conv] + c.turn] = c.reply;
      c.messages.push_back({"assistant", c.reply});
      if (++c.turn < w.conversations[c.conv].users.size()) {
        send(i);
      } else if (next_conv < w.conversations.size()) {
        const size_t conv = next_conv++;
        c = Client{conv, 0, opening(w.conversations[conv]), {}, {}};
        send(i);
      }
      cv.notify_all();
      return true;
    });
    if (!id.ok()) {
      --in_flight;
      error = id.status();
    } else if (o.recorder) {
      // mu is held: this request's finished callback cannot run before.
      o.recorder->request_arrived(id.value(), req.messages);
    }
  };

  const auto start = std::chrono::steady_clock::now();
  {
    std::unique_lock<std::mutex> lock(mu);
    const size_t n = std::min<size_t>(o.concurrency, w.conversations.size());
    clients.resize(n);
    for (size_t i = 0; i < n; ++i) {
      clients[i] = Client{next_conv++, 0, opening(w.conversations[i]), {}, {}};
      send(i);
    }
    cv.wait(lock, [&] { return in_flight == 0; });
  }
  res.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!error.ok()) return error;
  add_engine_figures(res, engine, o);
  return res;
}

// --round-robin: one request at a time, turn t of every conversation before
// turn t + 1 of any, so each conversation's history has to survive all the
// others' between two of its turns (the pool-pressure case of the tiers).
Result<BenchResult> run_round_robin(Engine& engine, const Workload& w, const BenchOptions& o) {
  BenchResult res = empty_result(engine, w, o);
  std::vector<std::vector<ChatMessage>> history;
  std::vector<size_t> first_request(w.conversations.size(), 0);
  for (size_t c = 0; c < w.conversations.size(); ++c) {
    history.push_back(opening(w.conversations[c]));
    if (c > 0) first_request[c] = first_request[c - 1] + w.conversations[c - 1].users.size();
  }
  const auto start = std::chrono::steady_clock::now();
  for (size_t turn = 0;; ++turn) {
    bool any = false;
    for (size_t c = 0; c < w.conversations.size(); ++c) {
      if (turn >= w.conversations[c].users.size()) continue;
      any = true;
      history[c].push_back({"user", w.conversations[c].users[turn]});
      GenerateRequest req;
      req.messages = history[c];
      req.max_tokens = o.max_tokens > 0 ? o.max_tokens : 32;
      req.ignore_eos = true;
      req.response_format = w.response_format;
      req.sampling.temperature = o.temperature;
      req.sampling.seed = o.seed * 1000003 + first_request[c] + turn;
      Result<PlacedDocuments> docs = place_conversation_documents(engine, req, w.conversations[c]);
      if (!docs.ok()) return docs.status();
      std::string reply;
      std::vector<int32_t> tokens;
      std::promise<StreamEvent> done;
      Result<RequestId> id = engine.submit(req, [&](const StreamEvent& ev) {
        reply += ev.text;
        if (ev.token >= 0) tokens.push_back(ev.token);
        if (ev.finished) done.set_value(ev);
        return true;
      });
      if (!id.ok()) return id.status();
      const StreamEvent end = done.get_future().get();
      if (end.reason == FinishReason::error) return end.error;
      res.add_finished(end.metrics, turn, docs.value());
      res.replies[first_request[c] + turn] = reply;
      res.reply_tokens[first_request[c] + turn] = tokens;
      history[c].push_back({"assistant", reply, tokens});
    }
    if (!any) break;
  }
  res.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  add_engine_figures(res, engine, o);
  return res;
}

// reopen: the first turn of every conversation on one engine, then a
// restart (the engine is destroyed, its tiers flushed and closed), then the
// second turns, each conversation sent with its history as generated. The
// result is the second phase's, with the first phase's TTFT beside it.
Result<BenchResult> run_reopen(const EngineConfig& cfg, const Workload& w, const BenchOptions& o) {
  Workload first{w.name, {}, w.response_format};
  for (const Conversation& c : w.conversations)
    first.conversations.push_back({c.system, {c.users.front()}});
  Result<BenchResult> before = Status(StatusCode::internal, "");
  {
    std::unique_ptr<Engine> engine = open_engine(cfg);
    if (!engine) return Status(StatusCode::internal, "the engine did not open");
    before = run_workload(*engine, first, o);
    if (!before.ok()) return before.status();
  }
  Workload second{w.name, {}, w.response_format};
  for (size_t i = 0; i < w.conversations.size(); ++i) {
    const Conversation& c = w.conversations[i];
    if (c.users.size() < 2) continue;
    Conversation next{c.system, {c.users[1]}};
    next.history = opening(c);
    next.history.push_back({"user", c.users[0]});
    next.history.push_back({"assistant", before->replies[i], before->reply_tokens[i]});
    second.conversations.push_back(std::move(next));
  }
  if (second.conversations.empty())
    return Status(StatusCode::invalid_argument, "reopen needs --requests of at least 2");
  std::unique_ptr<Engine> engine = open_engine(cfg);
  if (!engine) return Status(StatusCode::internal, "the engine did not open");
  Result<BenchResult> after = run_workload(*engine, second, o);
  if (!after.ok()) return after.status();
  after->before_restart_ttft_ms_p50 = before->percentile(0.5);
  return after;
}

nlohmann::json to_json(const BenchResult& r) {
  return {{"workload", r.workload},
          {"cache", r.cache},
          {"requests", r.requests},
          {"temperature", r.temperature},
          {"prompt_tokens", r.prompt_tokens},
          {"cached_tokens", r.cached_tokens},
          {"computed_tokens", r.prompt_tokens - r.cached_tokens},
          {"output_tokens", r.output_tokens},
          {"document_tokens", r.document_tokens},
          {"cached_document_tokens", r.cached_document_tokens},
          {"hit_rate", r.hit_rate()},
          {"avg_match_len", r.requests ? double(r.cached_tokens) / r.requests : 0.0},
          {"ttft_ms_p50", r.percentile(0.5)},
          {"ttft_ms_p99", r.percentile(0.99)},
          {"later_turns_ttft_ms_p50", BenchResult::percentile_of(r.later_ttft_ms, 0.5)},
          {"output_tok_s", r.output_tok_s()},
          {"total_tok_s", r.total_tok_s()},
          {"wall_s", r.wall_s},
          {"kv_peak_bytes", r.kv_peak_bytes},
          {"evictions", r.evictions},
          {"replies_digest", r.replies_digest()},
          {"speculate", r.speculate},
          {"decode_tok_s", r.decode_tok_s()},
          {"later_turns_decode_tok_s", r.later_decode_tok_s()},
          {"drafted_tokens", r.drafted_tokens},
          {"accepted_tokens", r.accepted_tokens},
          {"mean_accepted_len", r.mean_accepted_len()},
          {"draft_overhead",
           r.drafted_tokens ? double(r.drafted_tokens - r.accepted_tokens) / double(r.output_tokens)
                            : 0.0},
          {"tiers", r.tiers},
          {"tier_stats", tier_json(r.tier_stats)},
          {"before_restart_ttft_ms_p50", r.before_restart_ttft_ms_p50}};
}

void print_table(const std::vector<BenchResult>& rs) {
  std::printf("%-14s %-13s %5s %8s %8s %6s %9s %9s %9s %9s %11s %9s\n", "workload", "cache", "reqs",
              "prompt", "cached", "hit%", "TTFT p50", "TTFT p99", "out tok/s", "tot tok/s",
              "KV peak MB", "evictions");
  for (const BenchResult& r : rs) {
    std::printf("%-14s %-13s %5d %8lld %8lld %5.1f%% %7.1fms %7.1fms %9.1f %9.1f %11.2f %9llu\n",
                r.workload.c_str(), r.cache.c_str(), r.requests, (long long)r.prompt_tokens,
                (long long)r.cached_tokens, 100 * r.hit_rate(), r.percentile(0.5),
                r.percentile(0.99), r.output_tok_s(), r.total_tok_s(), r.kv_peak_bytes / 1048576.0,
                (unsigned long long)r.evictions);
  }
}

const BenchResult* find_off(const std::vector<BenchResult>& rs) {
  for (const BenchResult& r : rs)
    if (r.cache == "off") return &r;
  return nullptr;
}

// Every cache setting must generate what "off" generated (greedy, fixed
// length): a cache hit must never change a reply.
std::vector<std::string> settings_with_other_replies(const std::vector<BenchResult>& rs) {
  std::vector<std::string> differ;
  const BenchResult* off = find_off(rs);
  for (const BenchResult& r : rs)
    if (off && &r != off && r.replies != off->replies) differ.push_back(r.cache);
  return differ;
}

// Radix vs off: measured TTFT and throughput gains. "TTFT ratio" is off's
// TTFT p50 over this setting's (first-token latency, queueing and decode
// steps of batched requests included); "bound" is the prefill speed-up the
// hit rate alone predicts (prompt tokens / computed tokens).
void print_comparison(const std::vector<BenchResult>& rs) {
  const BenchResult* off = find_off(rs);
  if (!off) return;
  std::printf("\n%-13s %14s %17s %12s %16s %12s\n", "vs off", "TTFT p50 cut", "TTFT p50 ratio",
              "(hit bound)", "throughput gain", "same replies");
  for (const BenchResult& r : rs) {
    if (&r == off) continue;
    const double computed = double(r.prompt_tokens - r.cached_tokens);
    const double bound = computed > 0 ? r.prompt_tokens / computed : 0;
    const double p50 = r.percentile(0.5), off_p50 = off->percentile(0.5);
    std::printf("%-13s %13.1f%% %16.2fx %11.2fx %15.2fx %12s\n", r.cache.c_str(),
                off_p50 > 0 ? 100 * (1 - p50 / off_p50) : 0.0, p50 > 0 ? off_p50 / p50 : 0.0, bound,
                off->total_tok_s() > 0 ? r.total_tok_s() / off->total_tok_s() : 0.0,
                r.replies == off->replies ? "yes" : "NO");
  }
}

// run_workload with a recording of the cache events, snapshots and
// requests written on threads of their own (recording/recorder.h).
Result<BenchResult> run_recorded(Engine& engine, const Workload& w, const BenchOptions& o) {
  recording::RecorderOptions ro;
  ro.source = "bench";
  ro.max_bytes = int64_t(o.record_max_mb) << 20;
  ro.redact = o.record_redact;
  ro.render = [&engine](const std::vector<ChatMessage>& m) { return engine.render_chat(m); };
  ro.on_stop = [](const std::string& why) {
    std::fprintf(stderr, "radixchat-cli: %s\n", why.c_str());
  };
  auto rec = recording::Recorder::create(o.record, ro);
  if (!rec.ok()) return rec.status();
  (*rec)->set_meta("model", engine.model_info().name);
  (*rec)->set_meta("workload", w.name);
  (*rec)->set_meta(recording::kClosingTokensMeta,
                   std::to_string(recording::template_closing_tokens(engine)));
  BenchOptions with = o;
  with.recorder = rec->get();
  auto tap = std::make_unique<recording::EventTap>(**rec, recording::engine_source(engine));
  Result<BenchResult> r = run_workload(engine, w, with);
  tap.reset();  // its last pass drains the final events and snapshots the tree
  Status closed = (*rec)->close();
  if (!closed.ok()) return closed;
  return r;
}

// Each tier setting's run must generate what the first one generated: a
// block loaded from a tier must never change a reply.
std::vector<std::string> tiers_with_other_replies(const std::vector<BenchResult>& rs) {
  std::vector<std::string> differ;
  for (const BenchResult& r : rs)
    if (r.replies != rs.front().replies) differ.push_back(r.tiers);
  return differ;
}

void print_tier_table(const std::vector<BenchResult>& rs) {
  std::printf("\n%-7s %9s %9s %11s %8s %10s %10s\n", "tiers", "TTFT p50", "TTFT p99", "loaded tok",
              "loads", "recomputes", "same reply");
  for (const BenchResult& r : rs) {
    std::printf("%-7s %7.1fms %7.1fms %11llu %8llu %10llu %10s\n", r.tiers.c_str(),
                r.percentile(0.5), r.percentile(0.99),
                (unsigned long long)r.tier_stats.loaded_tokens,
                (unsigned long long)r.tier_stats.loads, (unsigned long long)r.tier_stats.recomputes,
                r.replies == rs.front().replies ? "yes" : "NO");
  }
}

int run_bench(const BenchOptions& o) {
  if (!o.record.empty() && (o.compare || o.tiers.size() > 1))
    return fail("bench: --record records one run; leave out --compare and a --tiers list");
  if (o.compare && !o.tiers.empty()) return fail("bench: --compare and --tiers: pick one");
  Result<Workload> w =
      o.workload == "rag" ? make_rag_workload(o.engine.config.model_path, o.requests, o.seed, o.rag)
                          : make_workload(o.workload, o.requests, o.seed, o.shape);
  if (!w.ok()) return fail(w.status());
  if (!o.planted_span.empty()) {
    if (Status s = plant_span(w.value(), o.planted_span, o.seed); !s.ok()) return fail(s);
  }
  std::vector<std::string> caches = {o.engine.config.cache};
  if (o.compare) caches = {"radix", "radix-page16", "hash16", "off"};
  std::vector<TierRun> runs;
  for (const std::string& t : o.tiers.empty() ? std::vector<std::string>{""} : o.tiers) {
    if (t.empty()) {
      runs.push_back(TierRun::make("l1", o.engine.config).value());
      continue;
    }
    Result<TierRun> run = TierRun::make(t, o.engine.config);
    if (!run.ok()) return fail(run.status());
    runs.push_back(std::move(run.value()));
  }
  std::vector<BenchResult> results;
  for (const TierRun& run : runs) {
    for (const std::string& cache : caches) {
      EngineConfig cfg = o.tiers.empty() ? o.engine.config : run.config();
      cfg.cache = cache;
      if (!o.json) {
        std::fprintf(stderr, "running %s with cache %s%s ...\n", o.workload.c_str(), cache.c_str(),
                     o.tiers.empty() ? "" : (", tiers " + run.setting()).c_str());
      }
      Result<BenchResult> r = Status(StatusCode::internal, "");
      if (o.workload == "reopen") {
        r = run_reopen(cfg, w.value(), o);
      } else {
        std::unique_ptr<Engine> engine = open_engine(cfg);
        if (!engine) return 1;
        r = o.round_robin      ? run_round_robin(*engine, w.value(), o)
            : o.record.empty() ? run_workload(*engine, w.value(), o)
                               : run_recorded(*engine, w.value(), o);
      }
      if (!r.ok()) return fail(r.status());
      if (!o.tiers.empty()) r->tiers = run.setting();
      results.push_back(std::move(r.value()));
    }
  }
  const std::vector<std::string> differ = settings_with_other_replies(results);
  const std::vector<std::string> tier_differ =
      o.tiers.empty() ? std::vector<std::string>{} : tiers_with_other_replies(results);
  if (o.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const BenchResult& r : results) {
      out.push_back(to_json(r));
      if (find_off(results))
        out.back()["same_replies"] =
            std::find(differ.begin(), differ.end(), r.cache) == differ.end();
      if (!o.tiers.empty())
        out.back()["same_replies"] =
            std::find(tier_differ.begin(), tier_differ.end(), r.tiers) == tier_differ.end();
    }
    std::printf("%s\n", (results.size() == 1 ? out[0] : out).dump(2).c_str());
  } else {
    print_table(results);
    print_comparison(results);
    if (!o.tiers.empty()) print_tier_table(results);
  }
  if (!differ.empty() || !tier_differ.empty()) {
    std::string names;
    for (const std::string& c : differ) names += (names.empty() ? "" : ", ") + c;
    for (const std::string& t : tier_differ) names += (names.empty() ? "tiers " : ", tiers ") + t;
    return fail("replies differ from the " +
                std::string(differ.empty() ? "first run's" : "off cache's") + " with " + names +
                " (a cache hit changed the output)");
  }
  return 0;
}

}  // namespace

Command add_bench_command(CLI::App& root) {
  auto o = std::make_shared<BenchOptions>();
  auto* app = root.add_subcommand("bench", "Measure a workload with and without prefix reuse");
  o->engine.add_to(*app);
  app->add_option("--workload", o->workload, workload_names())
      ->check(CLI::IsMember(workload_list()));
  app->add_option("--requests", o->requests, "requests (turns) in all")->check(CLI::PositiveNumber);
  app->add_option("--concurrency", o->concurrency, "clients in flight")->check(CLI::PositiveNumber);
  app->add_option("--max-tokens", o->max_tokens,
                  "tokens generated per request (default 32; 128 for the structured workload)")
      ->check(CLI::PositiveNumber);
  app->add_option("--seed", o->seed, "workload seed");
  app->add_option("--temperature", o->temperature,
                  "sampling temperature (0: greedy); replies are seeded per request")
      ->check(CLI::Range(0.0, 2.0));
  app->add_flag("--json", o->json, "one JSON object (an array with --compare)");
  app->add_flag("--compare", o->compare, "run radix, radix-page16, hash16 and off side by side");
  app->add_option("--record", o->record,
                  "write a recording of the cache events, snapshots and requests (SQLite)");
  app->add_option("--record-max-mb", o->record_max_mb, "stop recording at this file size")
      ->check(CLI::PositiveNumber);
  app->add_flag("--redact", o->record_redact,
                "record token ids as salted hashes and no text, for bug reports")
      ->needs("--record");
  app->add_option("--tiers", o->tiers,
                  std::string("cache tiers below the pool, one run each on the same requests "
                              "(comma-separated: ") +
                      tier_setting_names() + ")")
      ->delimiter(',')
      ->check(CLI::IsMember(tier_setting_list()));
  app->add_flag("--round-robin", o->round_robin,
                "one request at a time, conversations taking turns (turn 1 of each, then turn 2 "
                "of each, ...)");
  app->add_option("--doc-sentences", o->shape.doc_sentences,
                  "document length of long-context-qa, notes and reopen, in sentences")
      ->check(CLI::PositiveNumber);
  app->add_option("--turns", o->shape.turns,
                  "multi-turn and notes: turns per conversation (default 4 and 2)")
      ->check(CLI::PositiveNumber);
  app->add_option("--docs", o->rag.docs, "rag: documents in the corpus (default 40)")
      ->check(CLI::Range(1, 10000));
  app->add_option("--retrieve", o->rag.retrieve, "rag: chunks retrieved per question (default 4)")
      ->check(CLI::Range(1, 64));
  app->add_option("--doc-order", o->rag.doc_order,
                  "rag: chunks in canonical (document, position) order (default) or in the "
                  "order retrieval ranked them")
      ->check(CLI::IsMember({"canonical", "retrieved"}));
  app->add_option("--planted-span", o->planted_span,
                  "a span varying per conversation, in the system prompt or the user message "
                  "(system|user; shared-system)");
  return {app, [o] { return run_bench(*o); }};
}

}  // namespace rc::cli
