#include "panel/stats-history.h"

namespace rc::ui::panel {

void StatsHistory::push(std::vector<float>& v, float x) {
  if (v.size() >= capacity_) v.erase(v.begin());
  v.push_back(x);
}

void StatsHistory::stamp(double now) {
  if (times_.size() >= capacity_) times_.erase(times_.begin());
  times_.push_back(now);
  // A marker older than every kept point has nothing left to its left.
  while (!markers_.empty() && !times_.empty() && markers_.front().at < times_.front() &&
         (markers_.size() < 2 || markers_[1].at <= times_.front()))
    markers_.erase(markers_.begin());
}

void StatsHistory::clear() {
  primed_ = false;
  hit_rate_.clear();
  matched_.clear();
  ttft_.clear();
  times_.clear();
  markers_.clear();
}

void StatsHistory::restart(const std::string& label, double now) {
  primed_ = false;
  prev_req_ = RequestTotals{};
  prev_calls_ = prev_prompt_ = prev_hit_ = 0;
  markers_.push_back(Marker{now, label});
}

void StatsHistory::observe(const RequestTotals* req, const CacheStats& cs, double now,
                           double min_interval) {
  if (!primed_) {
    primed_ = true;
    last_at_ = now;
    if (req) prev_req_ = *req;
    prev_calls_ = cs.match_calls;
    prev_prompt_ = cs.prompt_tokens;
    prev_hit_ = cs.hit_tokens;
    return;
  }
  if (now - last_at_ < min_interval) return;
  if (req) {
    // Counters restart with a new engine: start over from there.
    if (req->finished < prev_req_.finished) prev_req_ = RequestTotals{};
    const uint64_t dn = req->finished - prev_req_.finished;
    if (dn == 0) return;
    const double dprompt = double(req->prompt_tokens - prev_req_.prompt_tokens);
    const double dcached = double(req->cached_tokens - prev_req_.cached_tokens);
    const double ttft_sum = req->ttft_ms_mean * double(req->finished) -
                            prev_req_.ttft_ms_mean * double(prev_req_.finished);
    push(hit_rate_, dprompt > 0 ? float(dcached / dprompt) : 0.0f);
    push(matched_, float(dcached / double(dn)));
    push(ttft_, float(ttft_sum > 0 ? ttft_sum / double(dn) : 0.0));
    stamp(now);
    prev_req_ = *req;
  } else {
    if (cs.match_calls < prev_calls_) prev_calls_ = prev_prompt_ = prev_hit_ = 0;
    const uint64_t dn = cs.match_calls - prev_calls_;
    if (dn == 0) return;
    const double dprompt = double(cs.prompt_tokens - prev_prompt_);
    const double dhit = double(cs.hit_tokens - prev_hit_);
    push(hit_rate_, dprompt > 0 ? float(dhit / dprompt) : 0.0f);
    push(matched_, float(dhit / double(dn)));
    stamp(now);
    prev_calls_ = cs.match_calls;
    prev_prompt_ = cs.prompt_tokens;
    prev_hit_ = cs.hit_tokens;
  }
  last_at_ = now;
}

}  // namespace rc::ui::panel
