// Publisher (kv-publisher.h) on cppzmq.
#include "kv-publisher.h"

#include "kv-security.h"

#include <zmq.hpp>
#include <zmq_addon.hpp>

namespace rc::kv_events {

struct Publisher::Impl {
  zmq::context_t ctx{1};
  zmq::socket_t pub;
  zmq::socket_t replay;  // unbound when there is no replay endpoint
  PublisherOptions options;
  std::deque<std::pair<uint64_t, std::string>> ring;
};

namespace {

std::string be64(uint64_t v) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[7 - i] = static_cast<char>((v >> (8 * i)) & 0xff);
  return out;
}

}  // namespace

Publisher::Publisher() : impl_(std::make_unique<Impl>()) {}
Publisher::~Publisher() = default;

Result<std::unique_ptr<Publisher>> Publisher::bind(const PublisherOptions& o) {
  std::unique_ptr<Publisher> p(new Publisher());
  Impl& im = *p->impl_;
  im.options = o;
  if (o.buffer_messages == 0) im.options.buffer_messages = 1;
  const std::string* at = &o.endpoint;
  try {
    im.pub = zmq::socket_t(im.ctx, zmq::socket_type::xpub);
    im.pub.set(zmq::sockopt::linger, 0);
    if (!o.curve_secret_key.empty()) {
      if (Status s = make_curve_server(im.pub.handle(), o.curve_secret_key); !s.ok()) return s;
    }
    im.pub.set(zmq::sockopt::xpub_verbose, 1);
    im.pub.bind(o.endpoint);
    p->bound_ = im.pub.get(zmq::sockopt::last_endpoint);
    if (!o.replay_endpoint.empty()) {
      at = &o.replay_endpoint;
      im.replay = zmq::socket_t(im.ctx, zmq::socket_type::router);
      im.replay.set(zmq::sockopt::linger, 0);
      if (!o.curve_secret_key.empty()) {
        if (Status s = make_curve_server(im.replay.handle(), o.curve_secret_key); !s.ok()) return s;
      }
      im.replay.bind(o.replay_endpoint);
      p->replay_bound_ = im.replay.get(zmq::sockopt::last_endpoint);
    }
  } catch (const zmq::error_t& err) {
    return Status(StatusCode::invalid_argument,
                  "cannot bind KV-events endpoint '" + *at + "': " + err.what());
  }
  return p;
}

uint64_t Publisher::publish(const Batch& batch) {
  Impl& im = *impl_;
  const uint64_t seq = next_seq_++;
  std::string payload = encode_batch(batch);
  const std::string seq_frame = be64(seq);
  std::array<zmq::const_buffer, 3> frames = {zmq::buffer(im.options.topic), zmq::buffer(seq_frame),
                                             zmq::buffer(payload)};
  // PUB never blocks: with no subscriber, or a slow one at its high-water
  // mark, the message is dropped for it (replay recovers it).
  try {
    zmq::send_multipart(im.pub, frames, zmq::send_flags::dontwait);
  } catch (const zmq::error_t&) {
  }
  if (im.replay) {
    im.ring.emplace_back(seq, std::move(payload));
    while (im.ring.size() > im.options.buffer_messages) im.ring.pop_front();
  }
  return seq;
}

bool Publisher::take_subscriptions() {
  bool joined = false;
  try {
    zmq::message_t m;
    while (impl_->pub.recv(m, zmq::recv_flags::dontwait)) {
      if (m.size() > 0 && static_cast<const unsigned char*>(m.data())[0] == 1) joined = true;
    }
  } catch (const zmq::error_t&) {
  }
  return joined;
}

void Publisher::serve_replay(int limit) {
  Impl& im = *impl_;
  if (!im.replay) return;
  try {
    for (int n = 0; n < limit; ++n) {
      std::vector<zmq::message_t> req;
      if (!zmq::recv_multipart(im.replay, std::back_inserter(req), zmq::recv_flags::dontwait))
        return;
      // [client identity] [empty delimiter] [8-byte start]; anything else
      // is a confused client and gets no answer.
      if (req.size() != 3 || req[1].size() != 0) continue;
      const auto start = decode_sequence(req[2].to_string_view());
      if (!start) continue;
      ++replay_requests_;
      const std::string id = req[0].to_string();
      for (const auto& [seq, payload] : im.ring) {
        if (seq < *start) continue;
        const std::string s = be64(seq);
        std::array<zmq::const_buffer, 4> reply = {zmq::buffer(id), zmq::const_buffer(nullptr, 0),
                                                  zmq::buffer(s), zmq::buffer(payload)};
        zmq::send_multipart(im.replay, reply, zmq::send_flags::dontwait);
      }
      const std::string end(8, '\xff');  // -1: end of replay
      std::array<zmq::const_buffer, 4> done = {zmq::buffer(id), zmq::const_buffer(nullptr, 0),
                                               zmq::buffer(end), zmq::const_buffer(nullptr, 0)};
      zmq::send_multipart(im.replay, done, zmq::send_flags::dontwait);
    }
  } catch (const zmq::error_t&) {
    // A vanished client (EHOSTUNREACH) or EINTR: the next call goes on.
  }
}

}  // namespace rc::kv_events
