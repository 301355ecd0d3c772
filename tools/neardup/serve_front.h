// Copyright 2026 The neardup Authors.
//
// serve's connection handling in front of cpp-httplib's request processing,
// so that slow, idle or hostile connections cannot starve the others:
//
//  - the accept loop only registers a connection (it never reads from one),
//    after checking the per-client and total connection caps (503 beyond);
//  - one poller thread (epoll) reads every connection's request head
//    (request line and headers) without blocking, within max_head_bytes and
//    max_headers (431 beyond) and within the read timeout from its first
//    byte (closed after it): a slowloris holds a socket, never a worker;
//  - a worker thread gets a connection only once its head is complete, runs
//    httplib's request processing on it (body, routing, answer), and hands
//    it back to the poller to wait for its next request (keep-alive idle
//    time costs no worker either);
//  - what httplib writes for an answer (head, then body) is held and sent
//    in one write once the request is answered, or before any wait to read
//    (one loopback packet, one wake-up of the client).
//
// Debian's cpp-httplib 0.11.4 is a compiled library: its macros for header
// limits and its thread-per-connection loop cannot be changed from here, so
// the per-connection loop (Server::process_and_close_socket, a virtual) is
// replaced and httplib's request processing (process_request) is called on a
// stream of this file's own (ConnStream).

#ifndef NEARDUP_TOOLS_NEARDUP_SERVE_FRONT_H_
#define NEARDUP_TOOLS_NEARDUP_SERVE_FRONT_H_

#include <httplib.h>

#include <climits>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "serve_request.h"

namespace neardup::cli {

// The worker threads. Unlike httplib's own pool (which threw out of listen
// when the system refused a thread: the server printed its address, refused
// connections and hung on SIGTERM), this one keeps half of the workers
// started when one is refused (the rest of the address space is the
// requests') and runs with those.
class ServePool {
 public:
  explicit ServePool(int threads);
  ~ServePool() { Shutdown(); }
  ServePool(const ServePool&) = delete;
  ServePool& operator=(const ServePool&) = delete;

  int threads() const { return static_cast<int>(workers_.size()); }
  const std::string& start_error() const { return start_error_; }
  void Enqueue(std::function<void()> fn);
  // Runs what is queued, then joins the workers.
  void Shutdown();

 private:
  void Work(int w);

  std::vector<std::thread> workers_;
  std::string start_error_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;  // guarded by mu_
  bool stop_ = false;                       // guarded by mu_
  int max_worker_ = INT_MAX;                // workers at or above it leave; guarded by mu_
};

struct FrontOptions {
  RequestLimits limits;
  int read_timeout_s = 10;             // a head must arrive within it; a body read waits at most it
  int keep_alive_timeout_s = 30;       // an idle keep-alive connection is closed after it
  size_t max_client_connections = 32;  // open connections from one client address
  size_t max_connections = 4096;       // open connections in all
};

class FrontServer : public httplib::Server {
 public:
  explicit FrontServer(const FrontOptions& options);
  ~FrontServer() override;

  // Called on the poller thread for a connection refused before routing (a
  // cap or a head limit): the client's address, the status sent, why.
  using RefusedLogger =
      std::function<void(const std::string& remote, int status, const std::string& message)>;
  void set_refused_logger(RefusedLogger logger) { refused_ = std::move(logger); }

  // The access logger (httplib's set_logger), called after each answer
  // httplib sends; an answer that says "Connection: close" closes the
  // connection once sent (the rest of its body is never read).
  void SetLogger(httplib::Logger logger);

  // After bind_to_port: serves until stop(), the requests on `workers`
  // (which must outlive this call). Starts the poller, accepts, and on stop
  // closes every connection once the requests in progress are answered.
  bool Serve(ServePool* workers);

 private:
  struct Conn;
  class ConnStream;
  bool Stopped() const { return svr_sock_ == INVALID_SOCKET; }
  bool process_and_close_socket(socket_t sock) override;
  void Poll();
  // Reads what `conn` has sent; dispatches, refuses or closes it. The
  // poller owns conn (not in a worker).
  void OnReadable(Conn* conn);
  void Dispatch(Conn* conn);
  // Runs requests on a worker while complete heads are buffered; then back
  // to the poller or closed.
  void Work(Conn* conn);
  void Watch(Conn* conn);
  void Close(Conn* conn);
  void Refuse(Conn* conn, int status, const std::string& message);

  const FrontOptions options_;
  ServePool* workers_ = nullptr;
  RefusedLogger refused_;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;  // an eventfd that wakes the poller to stop
  std::thread poller_;
  std::mutex mu_;
  std::condition_variable idle_;                          // busy_ reached 0
  std::unordered_map<int, std::unique_ptr<Conn>> conns_;  // by socket; guarded by mu_
  std::map<std::string, size_t> per_client_;              // open connections; guarded by mu_
  size_t busy_ = 0;        // connections a worker holds; guarded by mu_
  bool stopping_ = false;  // guarded by mu_
};

}  // namespace neardup::cli

#endif  // NEARDUP_TOOLS_NEARDUP_SERVE_FRONT_H_
