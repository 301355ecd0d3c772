// Copyright 2026 The neardup Authors.

#include "serve_front.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <system_error>

namespace neardup::cli {
namespace {

using Clock = std::chrono::steady_clock;

// How often a waiting worker or the poller looks at whether the server is
// stopping, and the poller at deadlines.
constexpr int kSliceMs = 100;

// How long a worker waits on a keep-alive connection for its next request
// before handing it back to the poller.
constexpr int kLingerMs = 2;

// How long a refused connection's input is drained (so that the client
// reads the answer instead of a reset) before it is closed.
constexpr auto kDrainTime = std::chrono::seconds(1);

// A worker's answer said "Connection: close" (set by the logger, which
// httplib calls after each answer, read by Work after process_request).
thread_local bool answer_closes = false;

// httplib's accept loop hands each socket to a task queue; this one runs the
// task on the accept thread: FrontServer::process_and_close_socket only
// registers the socket with the poller.
class InlineQueue : public httplib::TaskQueue {
 public:
  void enqueue(std::function<void()> fn) override { fn(); }
  void shutdown() override {}
};

// The address and port of a socket's peer (`peer`) or its own end, as
// text; "" and 0 when unknown.
std::string AddressOf(int fd, bool peer, int* port) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  *port = 0;
  const int r = peer ? getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len)
                     : getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  if (r != 0) return "";
  char text[INET6_ADDRSTRLEN] = "";
  if (addr.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&addr);
    inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text));
    *port = ntohs(in->sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&addr);
    inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof(text));
    *port = ntohs(in6->sin6_port);
  }
  return text;
}

// A complete answer with a JSON error body, for a connection refused before
// httplib sees it.
std::string ErrorAnswer(int status, const std::string& message) {
  httplib::Response res;
  SetError(res, status, message);
  const char* reason = status == 431   ? "Request Header Fields Too Large"
                       : status == 503 ? "Service Unavailable"
                                       : "Bad Request";
  return "HTTP/1.1 " + std::to_string(status) + " " + reason +
         "\r\nContent-Type: application/json\r\nContent-Length: " +
         std::to_string(res.body.size()) + "\r\nConnection: close\r\n" +
         (status == 503 ? "Retry-After: 1\r\n" : "") + "\r\n" + res.body;
}

// Sends what the socket takes now (non-blocking; an error answer is short).
void SendNow(int fd, const std::string& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      return;
    }
  }
}

}  // namespace

// ---- ServePool

ServePool::ServePool(int threads) {
  workers_.reserve(static_cast<size_t>(threads));
  for (int w = 0; w < threads; ++w) {
    try {
      workers_.emplace_back([this, w] { Work(w); });
    } catch (const std::system_error& e) {
      start_error_ = e.what();
      const size_t keep = workers_.size() / 2;
      {
        std::lock_guard lock(mu_);
        max_worker_ = static_cast<int>(keep);
      }
      wake_.notify_all();
      while (workers_.size() > keep) {
        workers_.back().join();
        workers_.pop_back();
      }
      break;
    }
  }
}

void ServePool::Enqueue(std::function<void()> fn) {
  {
    std::lock_guard lock(mu_);
    jobs_.push_back(std::move(fn));
  }
  wake_.notify_one();
}

void ServePool::Shutdown() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
  workers_.clear();
}

void ServePool::Work(int w) {
  for (;;) {
    std::function<void()> fn;
    {
      std::unique_lock lock(mu_);
      wake_.wait(lock, [&] { return stop_ || w >= max_worker_ || !jobs_.empty(); });
      if (w >= max_worker_ || (stop_ && jobs_.empty())) return;
      fn = std::move(jobs_.front());
      jobs_.pop_front();
    }
    fn();
  }
}

// ---- FrontServer

struct FrontServer::Conn {
  int fd = -1;
  std::string remote;
  int remote_port = 0;
  std::string local;  // this end's address and port, asked once (httplib asks each request)
  int local_port = 0;
  std::string buf;  // bytes read, not yet consumed, from `pos` on
  size_t pos = 0;
  Clock::time_point deadline;          // the poller's: head, idle or drain time
  Clock::time_point request_deadline;  // the whole request: --read-timeout from its first byte
  bool draining = false;               // refused: input discarded until closed
  size_t served = 0;                   // requests answered

  std::string_view pending() const { return std::string_view(buf).substr(pos); }
  void Compact() {
    buf.erase(0, pos);
    pos = 0;
  }
};

// httplib's view of a connection while a worker runs a request on it: the
// bytes the poller read first, then the socket, each wait bounded by the
// read (write) timeout and cut short when the server stops.
class FrontServer::ConnStream : public httplib::Stream {
 public:
  ConnStream(const FrontServer* server, Conn* conn) : server_(server), conn_(conn) {}

  bool is_readable() const override {
    if (conn_->pos < conn_->buf.size()) return true;
    // What was written is sent before waiting for the client (an answer
    // "100 Continue" that it waits for before sending its body).
    return Flush() && Wait(POLLIN, server_->read_timeout_sec_, true);
  }
  bool is_writable() const override { return Wait(POLLOUT, server_->write_timeout_sec_, false); }

  ssize_t read(char* ptr, size_t size) override {
    if (conn_->pos == conn_->buf.size()) {
      conn_->buf.clear();
      conn_->pos = 0;
      if (!Flush() || !Wait(POLLIN, server_->read_timeout_sec_, true)) return -1;
      char block[16384];
      ssize_t n;
      do {
        n = recv(conn_->fd, block, sizeof(block), 0);
      } while (n < 0 && errno == EINTR);
      if (n <= 0) return n;
      conn_->buf.assign(block, static_cast<size_t>(n));
    }
    const size_t n = std::min(size, conn_->buf.size() - conn_->pos);
    std::memcpy(ptr, conn_->buf.data() + conn_->pos, n);
    conn_->pos += n;
    return static_cast<ssize_t>(n);
  }

  // Writes are held until Flush (or kMaxHeldOutput bytes): httplib writes
  // an answer's head and body apart, and each send on loopback is a packet
  // that wakes the client (two sends cost ~2 wake-ups and ~10 us of CPU).
  ssize_t write(const char* ptr, size_t size) override {
    if (held_.size() + size <= kMaxHeldOutput) {
      held_.append(ptr, size);
      return static_cast<ssize_t>(size);
    }
    if (!Flush()) return -1;
    return Send(ptr, size);
  }

  // Sends what write held; false when the connection failed.
  bool Flush() const {
    if (held_.empty()) return true;
    const bool ok = Send(held_.data(), held_.size()) >= 0;
    held_.clear();
    return ok;
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = conn_->remote;
    port = conn_->remote_port;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    ip = conn_->local;
    port = conn_->local_port;
  }
  socket_t socket() const override { return conn_->fd; }

 private:
  static constexpr size_t kMaxHeldOutput = 64 * 1024;

  ssize_t Send(const char* ptr, size_t size) const {
    size_t sent = 0;
    while (sent < size) {
      const ssize_t n = send(conn_->fd, ptr + sent, size - sent, MSG_NOSIGNAL);
      if (n > 0) {
        sent += static_cast<size_t>(n);
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        if (!Wait(POLLOUT, server_->write_timeout_sec_, false)) return -1;
      } else {
        return -1;
      }
    }
    return static_cast<ssize_t>(size);
  }

  // Waits until the socket is ready for `events`, at most `seconds`, and
  // for a read (`reading`) not past the request's deadline: a body sent
  // slowly holds its worker at most --read-timeout in all.
  bool Wait(short events, time_t seconds, bool reading) const {
    auto end = Clock::now() + std::chrono::seconds(seconds);
    if (reading) end = std::min(end, conn_->request_deadline);
    for (;;) {
      if (server_->Stopped()) return false;
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now()).count();
      if (left <= 0) return false;
      pollfd p{conn_->fd, events, 0};
      const int r = poll(&p, 1, static_cast<int>(std::min<long long>(left, kSliceMs)));
      if (r > 0) return true;
      if (r < 0 && errno != EINTR) return false;
    }
  }

  const FrontServer* server_;
  Conn* conn_;
  mutable std::string held_;  // written, not sent yet (sent before any wait to read)
};

FrontServer::FrontServer(const FrontOptions& options) : options_(options) {
  new_task_queue = [] { return new InlineQueue; };
}

FrontServer::~FrontServer() {
  for (auto& [fd, conn] : conns_) close(fd);
  if (epoll_fd_ >= 0) close(epoll_fd_);
  if (wake_fd_ >= 0) close(wake_fd_);
}

void FrontServer::SetLogger(httplib::Logger logger) {
  set_logger(
      [logger = std::move(logger)](const httplib::Request& req, const httplib::Response& res) {
        if (res.get_header_value("Connection") == "close") answer_closes = true;
        if (logger) logger(req, res);
      });
}

bool FrontServer::Serve(ServePool* workers) {
  workers_ = workers;
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (epoll_fd_ < 0 || wake_fd_ < 0) return false;
  epoll_event wake{};
  wake.events = EPOLLIN;
  wake.data.ptr = nullptr;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &wake) != 0) return false;
  poller_ = std::thread([this] { Poll(); });
  const bool ok = listen_after_bind();
  {
    std::unique_lock lock(mu_);
    stopping_ = true;
    // Workers see Stopped() within a slice and hand their connections back.
    idle_.wait(lock, [this] { return busy_ == 0; });
  }
  const uint64_t one = 1;
  [[maybe_unused]] const ssize_t w = write(wake_fd_, &one, sizeof(one));
  poller_.join();
  std::lock_guard lock(mu_);
  for (auto& [fd, conn] : conns_) close(fd);
  conns_.clear();
  per_client_.clear();
  return ok;
}

bool FrontServer::process_and_close_socket(socket_t sock) {
  auto conn = std::make_unique<Conn>();
  conn->fd = sock;
  conn->remote = AddressOf(sock, /*peer=*/true, &conn->remote_port);
  conn->local = AddressOf(sock, /*peer=*/false, &conn->local_port);
  const int on = 1;
  setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
  fcntl(sock, F_SETFL, fcntl(sock, F_GETFL) | O_NONBLOCK);
  std::string refused;
  {
    std::lock_guard lock(mu_);
    size_t& mine = per_client_[conn->remote];
    if (stopping_) {
      refused = "the server is stopping";
    } else if (conns_.size() >= options_.max_connections) {
      refused = "the server holds its most connections (" +
                std::to_string(options_.max_connections) + "); retry later";
    } else if (mine >= options_.max_client_connections) {
      refused = "this client holds its most connections (" +
                std::to_string(options_.max_client_connections) +
                ", --max-client-connections); retry later";
    }
    if (refused.empty()) {
      ++mine;
      conn->deadline = Clock::now() + std::chrono::seconds(options_.read_timeout_s);
      Conn* c = conn.get();
      conns_.emplace(sock, std::move(conn));
      epoll_event ev{};
      ev.events = EPOLLIN | EPOLLRDHUP;
      ev.data.ptr = c;
      epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, sock, &ev);
      return true;
    }
    if (mine == 0) per_client_.erase(conn->remote);
  }
  SendNow(sock, ErrorAnswer(503, refused));
  if (refused_) refused_(conn->remote, 503, refused);
  shutdown(sock, SHUT_RDWR);
  close(sock);
  return false;
}

void FrontServer::Poll() {
  epoll_event events[64];
  auto next_sweep = Clock::now();
  for (;;) {
    const int n = epoll_wait(epoll_fd_, events, 64, kSliceMs);
    {
      std::lock_guard lock(mu_);
      if (stopping_ && busy_ == 0) return;
    }
    for (int i = 0; i < n; ++i) {
      if (events[i].data.ptr == nullptr) continue;  // the wake-up
      OnReadable(static_cast<Conn*>(events[i].data.ptr));
    }
    const auto now = Clock::now();
    if (now < next_sweep) continue;
    next_sweep = now + std::chrono::milliseconds(kSliceMs);
    // Past their deadline: an idle keep-alive connection, a head not sent
    // in time, a refused one drained long enough. A connection a worker
    // holds is not in the poller's hands (its reads time out themselves).
    std::vector<Conn*> expired;
    {
      std::lock_guard lock(mu_);
      for (auto& [fd, conn] : conns_) {
        if (conn->deadline < now && conn->fd >= 0) expired.push_back(conn.get());
      }
    }
    for (Conn* c : expired) Close(c);
  }
}

void FrontServer::OnReadable(Conn* conn) {
  const bool was_idle = conn->pending().empty();
  bool ended = false;  // the client closed its side (or an error)
  for (;;) {
    char block[16384];
    const ssize_t n = recv(conn->fd, block, sizeof(block), 0);
    if (n > 0) {
      if (conn->draining) continue;
      conn->buf.append(block, static_cast<size_t>(n));
      if (conn->pending().size() >= options_.limits.max_head_bytes) break;
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      break;
    } else {
      ended = true;
      break;
    }
  }
  if (conn->draining) {
    if (ended) Close(conn);
    return;
  }
  // A request's head must come within the read timeout of its first byte.
  if (was_idle && !conn->pending().empty()) {
    conn->deadline = Clock::now() + std::chrono::seconds(options_.read_timeout_s);
    conn->request_deadline = conn->deadline;
  }
  const HeadScan scan = ScanRequestHead(conn->pending(), options_.limits);
  // A client that sent its request and closed its side is still answered.
  if (ended && scan.kind != HeadScan::kComplete) return Close(conn);
  switch (scan.kind) {
    case HeadScan::kIncomplete:
      return;
    case HeadScan::kComplete:
      return Dispatch(conn);
    case HeadScan::kTooLarge:
    case HeadScan::kTooManyHeaders:
      return Refuse(conn, 431, HeadErrorMessage(scan.kind, options_.limits));
  }
}

void FrontServer::Dispatch(Conn* conn) {
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, conn->fd, nullptr);
  {
    std::unique_lock lock(mu_);
    if (stopping_) {
      lock.unlock();
      return Close(conn);
    }
    ++busy_;
    conn->deadline = Clock::time_point::max();
  }
  workers_->Enqueue([this, conn] { Work(conn); });
}

void FrontServer::Work(Conn* conn) {
  for (;;) {
    conn->Compact();
    answer_closes = false;
    ConnStream stream(this, conn);
    bool closed = false;
    const bool last = ++conn->served >= keep_alive_max_count_;
    bool ok = false;
    try {
      ok = process_request(stream, last, closed, nullptr);
    } catch (const std::exception&) {
      ok = false;  // out of memory in httplib's own code: this connection ends
    }
    if (!stream.Flush()) ok = false;  // the answer, in one send
    if (!ok || closed || last || answer_closes || Stopped()) break;
    // The next request: on at once when its head is here already
    // (pipelined) or arrives within kLingerMs (a busy keep-alive client
    // sends its next request right after reading the answer: handing it to
    // the poller and back cost ~50 us of CPU per request), else back to the
    // poller.
    HeadScan scan = ScanRequestHead(conn->pending(), options_.limits);
    if (scan.kind == HeadScan::kIncomplete && conn->pending().empty()) {
      pollfd p{conn->fd, POLLIN, 0};
      if (poll(&p, 1, kLingerMs) == 1) {
        char block[16384];
        const ssize_t n = recv(conn->fd, block, sizeof(block), 0);
        if (n == 0) break;  // closed by the client
        if (n > 0) {
          conn->Compact();
          conn->buf.append(block, static_cast<size_t>(n));
          scan = ScanRequestHead(conn->pending(), options_.limits);
        }
      }
    }
    if (scan.kind == HeadScan::kComplete) {
      conn->request_deadline = Clock::now() + std::chrono::seconds(options_.read_timeout_s);
      continue;
    }
    if (scan.kind != HeadScan::kIncomplete) {
      {
        std::lock_guard lock(mu_);
        --busy_;
      }
      Refuse(conn, 431, HeadErrorMessage(scan.kind, options_.limits));
      idle_.notify_all();
      return;
    }
    Watch(conn);
    return;
  }
  {
    std::lock_guard lock(mu_);
    --busy_;
  }
  Close(conn);
  idle_.notify_all();
}

void FrontServer::Watch(Conn* conn) {
  std::lock_guard lock(mu_);
  --busy_;
  conn->deadline =
      Clock::now() + std::chrono::seconds(conn->pending().empty() ? options_.keep_alive_timeout_s
                                                                  : options_.read_timeout_s);
  conn->request_deadline = conn->deadline;  // a partial head: its request has begun
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP;
  ev.data.ptr = conn;
  epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, conn->fd, &ev);
  idle_.notify_all();
}

void FrontServer::Refuse(Conn* conn, int status, const std::string& message) {
  SendNow(conn->fd, ErrorAnswer(status, message));
  if (refused_) refused_(conn->remote, status, message);
  // No more is read from it: what the client still sends is drained for a
  // moment so that it reads the answer (closing with unread input resets
  // the connection), then it is closed.
  shutdown(conn->fd, SHUT_WR);
  std::lock_guard lock(mu_);
  conn->draining = true;
  conn->buf.clear();
  conn->pos = 0;
  conn->deadline = Clock::now() + kDrainTime;
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP;
  ev.data.ptr = conn;
  // Re-armed when a worker refused it (it was not in the poller).
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, conn->fd, &ev) != 0) {
    epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, conn->fd, &ev);
  }
}

void FrontServer::Close(Conn* conn) {
  std::lock_guard lock(mu_);
  const int fd = conn->fd;
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  auto it = per_client_.find(conn->remote);
  if (it != per_client_.end() && --it->second == 0) per_client_.erase(it);
  conns_.erase(fd);  // deletes conn
  close(fd);
}

}  // namespace neardup::cli
