// One accepted HTTP connection as the server's own layer sees it
// (docs/architecture.md section 17), and an httplib::Stream over it for
// one request. The reception (reception.h) reads the request head itself,
// so `buffered` holds the bytes already taken off the socket; the stream
// serves those first, then reads the socket, never past what httplib asks
// for, so what is left after a request stays for the next one.
//
// Threading: a Connection belongs to one thread at a time (the reception,
// then the worker serving its request). SocketStream: the worker only.
#pragma once

#include <httplib.h>

#include <chrono>
#include <string>

namespace rc::server {

using SteadyClock = std::chrono::steady_clock;

struct Connection {
  int sock = -1;
  std::string peer;                  // the client's address, for the per-client cap
  std::string buffered;              // read from the socket, not yet consumed
  SteadyClock::time_point deadline;  // the head must be complete by then
  bool in_worker = false;            // counted against the per-client cap
};

class SocketStream final : public httplib::Stream {
 public:
  // Reads after `read_deadline` fail, however slowly the client trickles;
  // each write may wait `write_timeout` for the socket to drain.
  SocketStream(Connection& conn, SteadyClock::time_point read_deadline,
               std::chrono::milliseconds write_timeout);

  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return conn_.sock; }

  // A read failed (the deadline passed, the client reset): the rest of
  // the request cannot be trusted, so the connection must close.
  bool read_failed() const { return read_failed_; }

  // Drops what the request consumed from conn_.buffered (call once, after
  // the request), keeping the bytes of any request pipelined behind it.
  void settle();

 private:
  bool wait(short events, std::chrono::milliseconds most) const;

  Connection& conn_;
  size_t consumed_ = 0;  // of conn_.buffered
  bool read_failed_ = false;
  SteadyClock::time_point read_deadline_;
  std::chrono::milliseconds write_timeout_;
};

// Whether the peer of `sock` has closed or reset its end (does not wait).
bool peer_gone(int sock);

// The peer's address of a connected socket ("" when it cannot be read).
std::string peer_address(int sock);

// While a worker serves a request: that request's connection, so work on
// its behalf can stop when the client goes (client_gone()).
class ServingScope {
 public:
  explicit ServingScope(int sock);
  ~ServingScope();
  ServingScope(const ServingScope&) = delete;
  ServingScope& operator=(const ServingScope&) = delete;
};

// True on a worker whose current client has closed its connection; false
// on any other thread.
bool client_gone();

}  // namespace rc::server
