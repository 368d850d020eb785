// The panel's view of a recording file (recording-source.h): a
// panel::RecordingSource over recording::Recording. Record/Stop is in
// recording-sink.cpp.
#include "recording-source.h"

#include <QFileInfo>
#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "radixchat/model-tools.h"
#include "radixchat/private-files.h"
#include "radixchat/vocabulary.h"
#include "recording/cache-report.h"
#include "recording/miss-analysis.h"
#include "recording/recording-reader.h"
#include "recording/redaction.h"
#include "recording/replay-tree.h"
#include "recording/tree-png.h"
#include "recording/tree-svg.h"

namespace rc::gui {

namespace {

using rc::ui::panel::MissView;
using rc::ui::panel::RecordedRequest;
using rc::ui::panel::RecordingSource;
using rc::ui::panel::TimelineSample;

// Points on the timeline's plots, at most.
constexpr uint64_t kMaxSamples = 600;
// tree_at() continues from the tree it built last when the new seq is at
// most this far ahead (a play or a small step); else the reader seeks.
constexpr uint64_t kForwardReplay = 8192;

std::string meta_of(const recording::RecordingSummary& s, const char* key) {
  auto it = s.meta.find(key);
  return it == s.meta.end() ? std::string() : it->second;
}

std::unique_ptr<Vocabulary> pick_vocabulary(const recording::RecordingSummary& s,
                                            const std::function<LoadedModel()>& current) {
  std::vector<std::string> paths;
  const std::string model = meta_of(s, "model"), path = meta_of(s, "model_path");
  if (!path.empty()) paths.push_back(path);
  if (current) {
    const LoadedModel m = current();
    if (!m.path.empty() && !model.empty() && m.name == model) paths.push_back(m.path);
  }
  if (model == "radixchat-demo") paths.push_back(bundled_model_path());
  for (const std::string& p : paths) {
    std::error_code ec;
    if (!std::filesystem::exists(p, ec)) continue;
    auto v = Vocabulary::load(p);
    if (v.ok()) return std::move(v.value());
  }
  return nullptr;
}

// The loaded template's closing tokens when the loaded model made the
// recording; else 0 (unknown).
int loaded_closing_tokens(const recording::RecordingSummary& s,
                          const std::function<LoadedModel()>& current) {
  if (!current) return 0;
  const LoadedModel m = current();
  const std::string model = meta_of(s, "model");
  return !model.empty() && m.name == model ? m.closing_tokens : 0;
}

class FileSource : public RecordingSource {
 public:
  FileSource(std::string path, std::unique_ptr<recording::Recording> rec)
      : path_(std::move(path)), rec_(std::move(rec)) {}

  Status load(const std::function<LoadedModel()>& current) {
    const recording::RecordingSummary& s = rec_->summary();
    redacted_ = recording::is_redacted(s.meta);
    if (!redacted_) vocab_ = pick_vocabulary(s, current);
    closing_ = recording::recorded_closing_tokens(s.meta, loaded_closing_tokens(s, current));
    auto snaps = rec_->snapshots();
    if (!snaps.ok()) return snaps.status();
    if (snaps->empty())
      return Status(StatusCode::not_found, path_ + " holds no snapshot: no tree can be rebuilt");
    first_ = UINT64_MAX;
    for (const recording::SnapshotRecord& r : snaps.value()) first_ = std::min(first_, r.next_seq);
    end_ = std::max<uint64_t>(first_, uint64_t(s.last_seq + 1));
    auto reqs = rec_->requests();
    if (!reqs.ok()) return reqs.status();
    records_ = std::move(reqs.value());
    auto where = [](const recording::RequestRecord& r) {
      return r.match_seq >= 0 ? uint64_t(r.match_seq) : r.arrival_seq;
    };
    std::stable_sort(records_.begin(), records_.end(),
                     [&](const auto& a, const auto& b) { return where(a) < where(b); });
    for (const recording::RequestRecord& r : records_) {
      RecordedRequest q;
      q.id = r.id;
      q.seq = where(r);
      q.matched = r.match_seq >= 0;
      q.prompt_tokens = int64_t(r.prompt.size());
      q.matched_tokens = r.matched_tokens;
      q.ttft_ms = r.ttft_ms;
      q.finish = r.finish;
      q.prompt.assign(r.prompt.begin(), r.prompt.end());
      requests_.push_back(std::move(q));
    }
    make_samples();
    return {};
  }

  std::string describe() const override {
    const recording::RecordingSummary& s = rec_->summary();
    std::string d = QFileInfo(QString::fromStdString(path_)).fileName().toStdString();
    const std::string source = meta_of(s, "source"), model = meta_of(s, "model");
    if (!source.empty()) d += ", from " + source;
    if (!model.empty()) d += ", model " + model;
    if (redacted_) d += ", redacted (token counts instead of text)";
    return d + ", cache " + policy();
  }
  uint64_t first_seq() const override { return first_; }
  uint64_t end_seq() const override { return end_; }
  int64_t total_pages() const override { return rec_->summary().total_pages; }
  int page_size() const override { return rec_->summary().page_size; }
  std::string policy() const override {
    const std::string p = meta_of(rec_->summary(), "policy");
    return p.empty() ? cache_policy_name(rec_->summary().policy) : p;
  }
  const std::vector<RecordedRequest>& requests() const override { return requests_; }
  const std::vector<TimelineSample>& samples() const override { return samples_; }

  Result<CacheSnapshot> tree_at(uint64_t seq) override {
    if (tree_.valid() && tree_.next_seq() <= seq && seq - tree_.next_seq() <= kForwardReplay) {
      auto ev = rec_->events(tree_.next_seq(), seq);
      bool ok = ev.ok();
      for (size_t i = 0; ok && i < ev->size(); ++i) ok = tree_.apply((*ev)[i]).empty();
      if (ok && tree_.next_seq() == seq) return tree_.to_snapshot(header_);
    }
    auto t = rec_->tree_at(seq);
    if (!t.ok()) {
      tree_ = recording::ReplayTree();
      return t.status();
    }
    header_ = t.value();
    header_.nodes.clear();
    tree_.reset(t.value());
    return t;
  }

  Result<std::vector<CacheEvent>> events(uint64_t from, uint64_t to) override {
    return rec_->events(from, to);
  }

  MissView explain(size_t index) override {
    MissView v;
    if (index >= records_.size()) {
      v.error = "no such request";
      return v;
    }
    const recording::RequestRecord& r = records_[index];
    if (r.prompt.empty()) {
      v.error = "The recording has no prompt for request " + std::to_string(r.id) + ".";
      return v;
    }
    v.at_seq = requests_[index].seq;
    auto tree = tree_at(v.at_seq);
    if (!tree.ok()) {
      v.error = "No tree before event " + std::to_string(v.at_seq) + ": " + tree.status().message();
      return v;
    }
    const uint64_t at = v.at_seq;
    v = miss_view(
        tree.value(), r.prompt, [this](const std::vector<int32_t>& t) { return text(t); },
        closing_);
    v.at_seq = at;
    v.matched_tokens = std::max<int64_t>(r.matched_tokens, 0);
    return v;
  }

  std::vector<std::string> advisor_report() override;

  std::string detokenize(const std::vector<Token>& tokens) override {
    return text(std::vector<int32_t>(tokens.begin(), tokens.end()));
  }

 private:
  std::string text(const std::vector<int32_t>& ids) const {
    if (redacted_) return "<" + recording::redacted_label(ids.size()) + ">";
    if (vocab_) {
      std::vector<int64_t> wide(ids.begin(), ids.end());
      return vocab_->text(wide);
    }
    std::string out;
    for (int32_t t : ids) {
      out += '<';
      out += std::to_string(t);
      out += '>';
    }
    return out;
  }

  // One pass over the recording: hit rate, cached tokens and nodes at
  // evenly spaced seqs (forward replay, re-seeking after a gap).
  void make_samples() {
    const uint64_t span = end_ - first_;
    const uint64_t step = std::max<uint64_t>(1, (span + kMaxSamples - 1) / kMaxSamples);
    size_t next_req = 0;
    int64_t prompt = 0, hit = 0;
    for (uint64_t s = first_;; s = std::min(end_, s + step)) {
      for (; next_req < requests_.size() && requests_[next_req].seq < s; ++next_req) {
        const RecordedRequest& r = requests_[next_req];
        if (r.matched_tokens < 0) continue;
        prompt += r.prompt_tokens;
        hit += r.matched_tokens;
      }
      auto t = tree_at(s);
      if (t.ok()) {
        TimelineSample p;
        p.seq = s;
        p.hit_rate = prompt ? double(hit) / double(prompt) : 0;
        for (const CacheNodeInfo& n : t->nodes)
          if (n.id != kRootNode) {
            p.cached_tokens += int64_t(n.tokens.size());
            ++p.nodes;
          }
        samples_.push_back(p);
      }
      if (s >= end_) break;
    }
  }

  const std::string path_;
  std::unique_ptr<recording::Recording> rec_;
  std::unique_ptr<Vocabulary> vocab_;
  bool redacted_ = false;  // hashed ids (recording/redaction.h): lengths, never a vocabulary
  int closing_ = 0;        // the template's closing tokens (MissOptions::closing_tokens)
  uint64_t first_ = 0, end_ = 0;
  std::vector<recording::RequestRecord> records_;  // sorted like requests_
  std::vector<RecordedRequest> requests_;
  std::vector<TimelineSample> samples_;
  recording::ReplayTree tree_;  // the latest tree_at(), to continue from
  CacheSnapshot header_;
};

std::vector<std::string> FileSource::advisor_report() {
  std::vector<std::string> out;
  recording::ReportOptions ro;
  ro.miss.closing_tokens = closing_;
  auto rep = recording::make_cache_report(*rec_, ro);
  if (!rep.ok()) return {"The advisor could not read the recording: " + rep.status().message()};
  const recording::CacheReport& r = rep.value();
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "Hit rate %.1f%%: %lld of %lld prompt tokens came from the cache over %lld "
                "finished requests; %zu matched less than their prompt.",
                100 * r.hit_rate, (long long)r.matched_tokens, (long long)r.prompt_tokens,
                (long long)r.finished, r.misses.size());
  out.push_back(buf);
  if (r.findings.empty()) {
    out.push_back(
        "No span that varies in front of a shared part was found: moving parts of "
        "these prompts would not make more of them cached.");
    return out;
  }
  for (size_t i = 0; i < r.findings.size(); ++i) {
    const recording::SpanFinding& f = r.findings[i];
    out.push_back("");
    std::snprintf(buf, sizeof buf,
                  "%zu. From token %lld, %lld prompts differ in a span of %.1f tokens on "
                  "average, then share the next %zu tokens.",
                  i + 1, (long long)f.position, (long long)f.misses, f.mean_span_tokens,
                  f.shared_after.size());
    out.push_back(buf);
    out.push_back("   After \"..." + text(f.before) + "\" one has \"" + text(f.example_span) +
                  "\" where another had \"" + text(f.other_span) + "\".");
    std::snprintf(buf, sizeof buf,
                  "   Moving that span after the shared part: +%lld cached tokens, hit rate "
                  "%.1f%% -> %.1f%% (a what-if over %lld rewritten requests).",
                  (long long)f.tokens_saved, 100 * f.hit_rate_before, 100 * f.hit_rate_after,
                  (long long)f.requests_moved);
    out.push_back(buf);
  }
  return out;
}

}  // namespace

MissView miss_view(const CacheSnapshot& tree, const std::vector<int32_t>& prompt,
                   const std::function<std::string(const std::vector<int32_t>&)>& text,
                   int closing_tokens) {
  // Prompt tokens shown before a divergence.
  constexpr int64_t kBeforeTokens = 16;
  recording::MissOptions o;
  o.closing_tokens = closing_tokens;
  const recording::MissExplanation m = recording::explain_miss(tree, prompt, o);
  MissView v;
  v.ok = true;
  v.prompt_tokens = m.prompt_tokens;
  v.matched_tokens = -1;
  v.divergence = m.divergence;
  v.realigned = m.realigned;
  v.would_reuse = m.would_reuse;
  v.run_after = m.run_after;
  const auto d = prompt.begin() + m.divergence;
  v.before = text(std::vector<int32_t>(d - std::min(m.divergence, kBeforeTokens), d));
  v.prompt_span = text(m.realigned ? m.prompt_span : std::vector<int32_t>(d, prompt.end()));
  v.cached_span = text(m.cached_span);
  v.cached_next = text(m.cached_next);
  return v;
}

rc::ui::panel::MissExplainer make_miss_explainer(std::function<int()> closing_tokens) {
  return [closing_tokens](const CacheSnapshot& tree, const std::vector<int32_t>& prompt,
                          const std::function<std::string(const std::vector<int32_t>&)>& text) {
    MissView v = miss_view(tree, prompt, text, closing_tokens ? closing_tokens() : 0);
    v.at_seq = tree.next_seq;
    return v;
  };
}

rc::ui::panel::RecordingOpener make_recording_opener(std::function<LoadedModel()> current) {
  return [current](const std::string& path) -> Result<std::unique_ptr<RecordingSource>> {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
      return Status(StatusCode::not_found, path + ": no such file");
    auto rec = recording::Recording::open(path);
    if (!rec.ok()) return rec.status();
    auto src = std::make_unique<FileSource>(path, std::move(rec.value()));
    if (Status s = src->load(current); !s.ok()) return s;
    return std::unique_ptr<RecordingSource>(std::move(src));
  };
}

rc::ui::panel::TreeExporter make_tree_exporter(std::function<int32_t()> bos) {
  return [bos](const CacheSnapshot& tree,
               const std::function<std::string(const std::vector<Token>&)>& label,
               const std::string& title, const std::string& path) -> std::string {
    recording::SvgOptions so;
    so.title = title;
    so.bos = bos ? bos() : -1;
    const std::string doc = recording::tree_svg(tree, label, so);
    const QString p = QString::fromStdString(path);
    if (p.endsWith(QLatin1String(".png"), Qt::CaseInsensitive)) {
      const Status s = recording::svg_to_png(doc, path);
      return s.ok() ? std::string() : s.message();
    }
    const Status s = write_private_file(path, doc);
    return s.ok() ? std::string() : s.message();
  };
}

}  // namespace rc::gui
