// Where every HTTP connection waits until its request head (request line
// and headers) has arrived, so that a client sending slowly, or not at all,
// holds no worker (docs/architecture.md section 17). One thread polls the
// waiting connections and reads what they send; a complete head is handed
// to `dispatch` with the lane that should serve it:
//  - health: "GET /health" has workers of its own, so it answers whatever
//    the other workers are doing;
//  - overflow: the client already holds `max_per_client` workers, so the
//    request is answered 503 with Retry-After (connection-queue.h);
//  - main: everything else.
// A head not complete within `head_timeout` is answered 408 and closed
// (a kept-alive connection that sent nothing is closed quietly); a head
// larger than kMaxHeadBytes is answered 431 and closed.
//
// Threading: admit() from the accept thread; resume() and close() from
// the worker that served a request; stop() from the queue's shutdown.
// After stop() every connection given back is closed.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "socket-stream.h"

namespace rc::server {

enum class Lane { main, overflow, health };

struct ReceptionOptions {
  std::chrono::milliseconds head_timeout{10000};
  int max_per_client = 32;  // workers one client address may hold at once
};

class Reception {
 public:
  static constexpr size_t kMaxHeadBytes = 16 * 1024;
  using Dispatch = std::function<void(Connection, Lane)>;

  Reception(ReceptionOptions options, Dispatch dispatch);
  ~Reception();

  // A freshly accepted socket; the reception owns it from here.
  void admit(int sock);
  // A connection whose request was answered and which stays open: waits
  // here for its next request.
  void resume(Connection conn);
  // A connection done with: closed, and no longer counted for its client.
  void close(Connection conn);
  // Closes every waiting connection and stops the thread. Idempotent.
  void stop();

 private:
  void run();
  void wake();
  // Reads what `c` sent; true when the connection is finished with (the
  // head was dispatched, or it was answered and closed).
  bool read_head(Connection& c, std::vector<std::pair<Connection, Lane>>& ready);
  void release(Connection& c);  // under mu_

  const ReceptionOptions options_;
  const Dispatch dispatch_;
  std::mutex mu_;
  std::vector<Connection> waiting_;        // polled by the thread
  std::vector<Connection> arrivals_;       // handed in, not yet polled
  std::map<std::string, int> in_workers_;  // by client address
  int wake_pipe_[2] = {-1, -1};
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace rc::server
