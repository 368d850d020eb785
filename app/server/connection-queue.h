// The HTTP server's connection handling (an httplib::TaskQueue;
// docs/architecture.md section 17). httplib's accept loop hands each new
// socket here; it waits in the reception (reception.h) until its request
// head is complete, holding no worker, and is then served on one of three
// lanes of workers, one request per job:
//  - main: a fixed pool. When every worker is busy and `max_waiting`
//    requests already wait for one, a request goes to the overflow lane.
//  - overflow: a few workers that answer 503 with Retry-After (see
//    serving_overflow()), so overload is answered, never left to time out
//    in the kernel's accept queue or dropped with a reset.
//  - health: workers of their own for GET /health, so it answers while
//    every other worker is busy.
// After a request the connection goes back to the reception if it stays
// open, so an idle kept-alive connection holds no worker either.
//
// Threads: enqueue() is called by httplib's accept loop; shutdown() by it
// when listening ends (it stops the reception, then joins every worker
// after the request it serves ends).
#pragma once

#include <httplib.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "reception.h"

namespace rc::server {

struct QueueOptions {
  int workers = 64;
  int max_waiting = 16;
  int overflow_workers = 8;
  int health_workers = 2;
  ReceptionOptions reception;
};

class ConnectionQueue final : public httplib::TaskQueue {
 public:
  // `serve` answers one request of a connection on a worker thread; true
  // when the connection stays open for another.
  using Serve = std::function<bool(Connection&)>;
  ConnectionQueue(QueueOptions options, Serve serve);
  ~ConnectionQueue() override;

  // httplib's job for a new socket; it only admits the socket to the
  // reception (admit()), so it runs at once on the accept thread.
  void enqueue(std::function<void()> fn) override;
  void shutdown() override;
  void admit(int sock) { reception_.admit(sock); }

  // True on an overflow worker: the request being handled on this thread
  // must be answered with 503 and Retry-After, not served.
  static bool serving_overflow();
  // True on a worker of a pool with few idle workers left: a response
  // should close its connection (Connection: close) rather than keep it
  // open, so clients spread over fresh connections the reception sorts.
  static bool pool_busy();

 private:
  struct Lane {
    std::deque<std::function<void()>> jobs;
    std::condition_variable cv;
    std::vector<std::thread> threads;
    int idle = 0;
  };
  void dispatch(Connection conn, server::Lane lane);
  void work(Lane& lane, bool overflow);
  bool busy();

  std::mutex mu_;
  Lane main_, overflow_, health_;
  const size_t max_waiting_;
  const int busy_idle_;  // fewer idle workers than this: pool_busy()
  const Serve serve_;
  bool shutdown_ = false;
  Reception reception_;  // last: its thread dispatches into the lanes above
};

}  // namespace rc::server
