#include "generation.h"

#include <optional>

namespace rc::server {

GenerationTracker::Counts GenerationTracker::counts() const {
  std::lock_guard<std::mutex> lock(mu_);
  Counts c = counts_;
  c.active = active_.size();
  return c;
}

bool GenerationTracker::wait_idle(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  return idle_.wait_until(lock, deadline, [&] { return active_.empty(); });
}

void GenerationTracker::cancel_all(Engine& engine) {
  std::vector<RequestId> ids;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (Generation* g : active_) {
      if (g->id() != 0) ids.push_back(g->id());
    }
  }
  for (RequestId id : ids) engine.cancel(id);
}

void GenerationTracker::note_client_disconnect() {
  std::lock_guard<std::mutex> lock(mu_);
  counts_.client_disconnects++;
}

void GenerationTracker::add(Generation* g) {
  std::lock_guard<std::mutex> lock(mu_);
  active_.insert(g);
  counts_.started++;
}

void GenerationTracker::finished(Generation* g, FinishReason reason) {
  std::lock_guard<std::mutex> lock(mu_);
  if (active_.erase(g) == 0) return;
  switch (reason) {
    case FinishReason::stop:
      counts_.stopped++;
      break;
    case FinishReason::length:
      counts_.length++;
      break;
    case FinishReason::cancelled:
      counts_.cancelled++;
      break;
    default:
      counts_.errors++;
      break;
  }
  if (active_.empty()) idle_.notify_all();
}

Result<std::shared_ptr<Generation>> Generation::start(Engine& engine, GenerateRequest request,
                                                      std::shared_ptr<GenerationTracker> tracker) {
  std::shared_ptr<Generation> g(new Generation(engine, tracker));
  // Tracked before submit: the engine may finish the request before
  // submit() even returns here.
  tracker->add(g.get());
  std::shared_ptr<RequestObserver> observer = tracker->observer_;
  std::optional<GenerateRequest> copy;
  if (observer) copy = request;
  Result<RequestId> id = engine.submit(std::move(request), [g, observer](const StreamEvent& ev) {
    if (observer) observer->event(ev);
    return g->push(ev);
  });
  if (!id.ok()) {
    tracker->finished(g.get(), FinishReason::error);
    return id.status();
  }
  g->id_ = id.value();
  if (observer) observer->submitted(id.value(), *copy);
  return g;
}

bool Generation::push(const StreamEvent& ev) {
  bool keep_going = true;
  {
    std::lock_guard<std::mutex> lock(mu_);
    keep_going = !abandoned_;
    if (!abandoned_) queue_.push_back(ev);
    if (ev.finished) finished_ = true;
  }
  cv_.notify_one();
  if (ev.finished) tracker_->finished(this, ev.reason);
  return keep_going;
}

void Generation::wait(std::vector<StreamEvent>& out, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, timeout, [&] { return !queue_.empty(); });
  for (StreamEvent& ev : queue_) out.push_back(std::move(ev));
  queue_.clear();
}

void Generation::abandon() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (abandoned_ || finished_) return;
    abandoned_ = true;
    queue_.clear();
  }
  // The callback's `false` stops it at the next token; cancel() also
  // reaches a request still waiting for a prefill slot.
  if (id_ != 0) engine_.cancel(id_);
}

bool Generation::finished() const {
  std::lock_guard<std::mutex> lock(mu_);
  return finished_;
}

}  // namespace rc::server
