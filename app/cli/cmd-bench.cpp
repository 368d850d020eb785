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
#include "bench-print.h"
#include "bench-result.h"
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
  res.speculate = setting_name(o.engine.config.speculate);
  res.eviction = setting_name(o.engine.config.eviction);
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
  std::vector<CacheSetting> caches = {o.engine.config.cache};
  if (o.compare) {
    caches = {CacheSetting::radix, CacheSetting::radix_page16, CacheSetting::hash16,
              CacheSetting::off};
  }
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
    for (const CacheSetting cache : caches) {
      EngineConfig cfg = o.tiers.empty() ? o.engine.config : run.config();
      cfg.cache = cache;
      if (!o.json) {
        std::fprintf(stderr, "running %s with cache %s%s ...\n", o.workload.c_str(),
                     setting_name(cache),
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
                  "rag: the retrieved documents and chunks in canonical order (whole documents, "
                  "then excerpts, each in library order; default) or in the order retrieval "
                  "ranked them")
      ->check(CLI::IsMember({"canonical", "retrieved"}));
  app->add_option("--planted-span", o->planted_span,
                  "a span varying per conversation, in the system prompt or the user message "
                  "(system|user; shared-system)");
  return {app, [o] { return run_bench(*o); }};
}

}  // namespace rc::cli
