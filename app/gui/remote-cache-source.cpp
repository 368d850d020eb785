// make_remote_connector (remote-cache-source.h): app/kv-events feeds behind
// the panel's RemoteBlockSource.
#include "remote-cache-source.h"

#include <cstdio>
#include <string>
#include <vector>

#include "kv-security.h"
#include "kv-subscriber.h"
#include "panel/label-text.h"
#include "server-cache-feed.h"

namespace rc::gui {
namespace {

class FeedSource final : public rc::ui::panel::RemoteBlockSource {
 public:
  FeedSource(std::unique_ptr<kv_events::BlockFeed> feed, std::string what)
      : feed_(std::move(feed)), what_(std::move(what)) {}
  void poll() override { feed_->poll(0); }
  const kv_events::BlockTree& tree() const override { return feed_->tree(); }
  std::string describe() const override { return what_; }
  std::string status() const override {
    const kv_events::SubscriberStats s = feed_->stats();
    std::string out = rc::ui::panel::plural(int64_t(s.messages), "message");
    if (s.dropped_messages)
      out += ", " + std::to_string(s.dropped_messages) + " lost (tree may differ)";
    if (s.malformed_messages) out += ", " + std::to_string(s.malformed_messages) + " malformed";
    if (!s.connected) out += ", disconnected: " + s.last_error;
    return out;
  }

 private:
  std::unique_ptr<kv_events::BlockFeed> feed_;
  std::string what_;
};

// "a, b c" -> {"a", "b", "c"}: endpoints separated by commas or spaces.
std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text + ",") {
    if (c == ',' || c == ' ' || c == '\t' || c == '\n') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  return out;
}

Result<std::unique_ptr<rc::ui::panel::RemoteBlockSource>> connect(
    const rc::ui::panel::AttachRequest& r) {
  using Kind = rc::ui::panel::AttachRequest::Kind;
  std::unique_ptr<kv_events::BlockFeed> feed;
  std::string what;
  if (r.kind == Kind::radixchat) {
    auto f = kv_events::ServerCacheFeed::connect(r.url, r.api_key);
    if (!f.ok()) return f.status();
    feed = std::move(f.value());
    what = "RadixChat server " + r.url;
  } else {
    // One publisher per data-parallel rank: "tcp://h:5557, tcp://h:5567".
    const std::vector<std::string> pubs = split_list(r.endpoint);
    const std::vector<std::string> replays = split_list(r.replay);
    if (pubs.empty()) return Status(StatusCode::invalid_argument, "give the publisher's endpoint");
    if (replays.size() > pubs.size())
      return Status(StatusCode::invalid_argument,
                    "more replay endpoints than publishers (give them in the same order)");
    std::string server_key;
    if (!r.curve_server_key.empty()) {
      auto k = kv_events::read_curve_public_key(r.curve_server_key);
      if (!k.ok()) return k.status();
      server_key = k.value();
    }
    std::vector<kv_events::Endpoint> eps;
    for (size_t i = 0; i < pubs.size(); ++i)
      eps.push_back({pubs[i], i < replays.size() ? replays[i] : std::string(), server_key});
    auto s = kv_events::Subscriber::connect(eps, r.topic);
    if (!s.ok()) return s.status();
    feed = std::move(s.value());
    what = "KV events " + pubs[0];
    if (pubs.size() > 1) what += " + " + std::to_string(pubs.size() - 1) + " more (one per rank)";
  }
  return std::unique_ptr<rc::ui::panel::RemoteBlockSource>(
      new FeedSource(std::move(feed), std::move(what)));
}

}  // namespace

rc::ui::panel::RemoteConnector make_remote_connector() { return connect; }

}  // namespace rc::gui
