// httplib's server with this server's own connection handling
// (connection-queue.h, reception.h): httplib still parses requests and
// routes them, but sockets are read, timed and recycled here, so slow
// clients hold no worker and a handler can tell when its client has gone
// (client_gone() in socket-stream.h).
//
// Threads: as httplib::Server. Route handlers run on the lanes' workers.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>

#include "connection-queue.h"

namespace rc::server {

struct ListenerOptions {
  QueueOptions queue;
  // A request's body must arrive within this time of its head; a response
  // write may wait `write_timeout` for a client that stops reading.
  std::chrono::milliseconds read_timeout{30000};
  std::chrono::milliseconds write_timeout{10000};
};

class HttpListener final : public httplib::Server {
 public:
  explicit HttpListener(ListenerOptions options);

 private:
  // httplib's accept loop calls this for each new socket.
  bool process_and_close_socket(socket_t sock) override;
  // One request of `c` (a worker); true when the connection stays open.
  bool serve(Connection& c);

  const ListenerOptions options_;
  std::atomic<ConnectionQueue*> queue_{nullptr};  // the queue of the listen() running now
};

}  // namespace rc::server
