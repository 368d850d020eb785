#include "http-listener.h"

#include <unistd.h>

namespace rc::server {

HttpListener::HttpListener(ListenerOptions options) : options_(options) {
  new_task_queue = [this] {
    auto* q = new ConnectionQueue(options_.queue, [this](Connection& c) { return serve(c); });
    queue_ = q;
    return q;
  };
}

bool HttpListener::process_and_close_socket(socket_t sock) {
  ConnectionQueue* q = queue_.load();
  if (!q) {
    ::close(sock);
    return false;
  }
  q->admit(sock);
  return true;
}

bool HttpListener::serve(Connection& c) {
  ServingScope scope(c.sock);
  SocketStream strm(c, SteadyClock::now() + options_.read_timeout, options_.write_timeout);
  bool closed = false;
  const bool ok = process_request(strm, !is_running(), closed, nullptr);
  strm.settle();
  return ok && !closed && !strm.read_failed() && is_running();
}

}  // namespace rc::server
