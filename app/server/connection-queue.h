// The HTTP server's connection queue (an httplib::TaskQueue): a fixed pool
// of workers serves accepted connections, one connection per worker while
// it stays open (a streaming response holds its worker). When every worker
// is busy and `max_waiting` connections already wait for one, a new
// connection goes to a small overflow pool instead, whose workers answer
// its requests with 503 and Retry-After (see serving_overflow()). So
// overload is answered, never left to time out in the kernel's accept
// queue or dropped with a reset.
//
// Threads: enqueue() is called by httplib's accept loop; shutdown() by it
// when listening ends (it joins every worker after their connections end).
#pragma once

#include <httplib.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace rc::server {

class ConnectionQueue final : public httplib::TaskQueue {
 public:
  ConnectionQueue(int workers, int max_waiting, int overflow_workers);
  ~ConnectionQueue() override;

  void enqueue(std::function<void()> fn) override;
  void shutdown() override;

  // True on an overflow worker: the request being handled on this thread
  // must be answered with 503 and Retry-After, not served.
  static bool serving_overflow();
  // True on a worker of a pool with few idle workers left: a response
  // should close its connection (Connection: close) rather than keep it
  // open. An idle keep-alive connection holds a worker here, and one the
  // server closes after its idle timeout resets a client that was just
  // sending on it (a starved client takes seconds between requests).
  static bool pool_busy();

 private:
  struct Lane {
    std::deque<std::function<void()>> jobs;
    std::condition_variable cv;
    std::vector<std::thread> threads;
    int idle = 0;
  };
  void work(Lane& lane, bool overflow);
  bool busy();

  std::mutex mu_;
  Lane main_, overflow_;
  const size_t max_waiting_;
  const int busy_idle_;  // fewer idle workers than this: pool_busy()
  bool shutdown_ = false;
};

}  // namespace rc::server
