// Copyright 2026 The neardup Authors.
//
// neardup serve's Server (cmd_serve.h): the routes, the checks before
// routing (token, chunked bodies), errors as JSON, the access log and
// /metrics counts, and listening.

#include <sys/resource.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iterator>
#include <optional>
#include <string>

#include "cmd_serve.h"

namespace neardup::cli::serve_internal {

namespace {

// Pending connections the kernel keeps for the accept loop (capped by
// net.core.somaxconn, 4096 by default).
constexpr int kListenBacklog = 1024;

// The endpoints that take a body.
constexpr const char* kPostPaths[] = {"/v1/query", "/v1/add", "/v1/check", "/v1/remove",
                                      "/v1/snapshot"};
// The endpoints that take none.
constexpr const char* kGetPaths[] = {"/v1/stats", "/healthz", "/metrics"};

// The size of the body the last request on this worker thread read, for the
// access log (a body read by a content reader is not in Request::body).
thread_local size_t last_body_bytes = 0;
// When the request this worker thread answers reached routing (its headers
// read), for its latency in /metrics; unset for one httplib answered before.
thread_local std::optional<std::chrono::steady_clock::time_point> request_start;

// The endpoint label of a request's path in /metrics.
std::string EndpointLabel(const std::string& path) {
  for (const char* p : kPostPaths) {
    if (path == p) return path;
  }
  for (const char* p : kGetPaths) {
    if (path == p) return path;
  }
  return "other";
}

}  // namespace

thread_local RequestBudget::Lease* Server::request_lease_ = nullptr;

bool Server::Authorized(const httplib::Request& req) const {
  if (token_.empty()) return true;
  const std::string header = req.get_header_value("Authorization");
  const std::string want = "Bearer " + token_;
  // Constant time in the token's content.
  if (header.size() != want.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < want.size(); ++i) diff |= static_cast<unsigned char>(header[i] ^ want[i]);
  return diff == 0;
}

bool Server::ReadBody(const httplib::Request& req, const httplib::ContentReader& reader,
                      httplib::Response& res, std::string* body) const {
  const bool read = ReadRequestBody(req, reader, limits_, request_lease_, res, body);
  last_body_bytes = body->size();
  return read;
}

void Server::Route() {
  // The POST endpoints read their bodies themselves (ReadBody): httplib's
  // own reader holds a chunked body whole whatever its size.
  using Handler = void (Server::*)(const std::string&, httplib::Response&);
  const Handler handlers[] = {&Server::HandleQuery, &Server::HandleAdd, &Server::HandleCheck,
                              &Server::HandleRemove, &Server::HandleSnapshot};
  for (size_t i = 0; i < std::size(kPostPaths); ++i) {
    const Handler handler = handlers[i];
    http_.Post(kPostPaths[i], [this, handler](const httplib::Request& req, httplib::Response& res,
                                              const httplib::ContentReader& reader) {
      RequestBudget::Lease lease(&budget_);
      request_lease_ = &lease;
      std::string body;
      if (ReadBody(req, reader, res, &body)) (this->*handler)(body, res);
      request_lease_ = nullptr;
    });
  }
  http_.Get("/v1/stats", [this](const auto&, auto& res) { HandleStats(res); });
  http_.Get("/healthz", [](const auto&, auto& res) { SetJson(res, Json{{"status", "ok"}}); });
  http_.Get("/metrics", [this](const auto&, auto& res) {
    res.status = 200;
    res.set_content(metrics_.Render(index_->documents().Stats()),
                    "text/plain; version=0.0.4; charset=utf-8");
  });

  // Before routing: the token (every path but /healthz) and the start time
  // for the access log.
  http_.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    last_body_bytes = 0;
    request_start = std::chrono::steady_clock::now();
    // Any other request with a chunked body would have it read whole by
    // httplib before it is answered: refused unread.
    const bool post_endpoint =
        req.method == "POST" &&
        std::find(std::begin(kPostPaths), std::end(kPostPaths), req.path) != std::end(kPostPaths);
    if (!post_endpoint && IsChunked(req)) {
      res.set_header("Connection", "close");
      SetError(res, 400, req.method + " " + req.path + " takes no chunked body");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (req.path != "/healthz" && !Authorized(req)) {
      res.set_header("WWW-Authenticate", "Bearer");
      SetError(res, 401, "a valid \"Authorization: Bearer TOKEN\" header is required");
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  // Errors httplib produces itself (no route, body too large): JSON too. A
  // known path asked with another method is 405.
  http_.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;  // a handler's own error answer
    if (res.status == 404) {
      for (const char* p : kPostPaths) {
        if (req.path == p) {
          res.set_header("Allow", "POST");
          return SetError(res, 405, req.method + " " + req.path + ": only POST is allowed");
        }
      }
      for (const char* p : kGetPaths) {
        if (req.path == p) {
          res.set_header("Allow", "GET");
          return SetError(res, 405, req.method + " " + req.path + ": only GET is allowed");
        }
      }
      return SetError(res, 404, "no endpoint " + req.path);
    }
    if (res.status == 413) {
      // Refused unread: the rest of the body must not be taken for the
      // next request (the front end closes an answer that says so).
      res.set_header("Connection", "close");
      return SetError(res, 413, "the body is larger than --max-body-bytes");
    }
    SetError(res, res.status, "HTTP error " + std::to_string(res.status));
  });
  http_.set_exception_handler(
      [](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
        std::string what = "internal error";
        try {
          std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          what += std::string(": ") + e.what();
        } catch (...) {
        }
        SetError(res, 500, what);
      });
  // One JSON line per request on stderr; the request in /metrics.
  http_.SetLogger([this](const httplib::Request& req, const httplib::Response& res) {
    const double seconds =
        request_start
            ? std::chrono::duration<double>(std::chrono::steady_clock::now() - *request_start)
                  .count()
            : -1;
    request_start.reset();
    metrics_.Record(EndpointLabel(req.path), res.status, seconds);
    const auto now = std::chrono::system_clock::now();
    const double t = std::chrono::duration<double>(now.time_since_epoch()).count();
    const std::string text = AccessLogLine(t, req.remote_addr, req.method, req.path, res.status,
                                           last_body_bytes, res.body.size());
    std::lock_guard lock(log_mu_);
    std::fputs(text.c_str(), stderr);
    last_body_bytes = 0;
  });
}

bool Server::Run() {
  Route();
  http_.set_payload_max_length(flags_.max_body_bytes);
  // Headers and body go out as separate writes: without TCP_NODELAY, Nagle
  // and the client's delayed ACK add ~40 ms to every answer.
  http_.set_tcp_nodelay(true);
  http_.set_read_timeout(flags_.read_timeout_s, 0);
  http_.set_write_timeout(flags_.read_timeout_s, 0);
  // The workers start here, before the address is printed; they run the
  // requests whose heads the front's poller has read (serve_front.h).
  auto pool = std::make_unique<ServePool>(flags_.threads);
  if (pool->threads() == 0) {
    std::fprintf(stderr, "neardup: error: cannot start a worker thread: %s\n",
                 pool->start_error().c_str());
    return false;
  }
  if (pool->threads() < flags_.threads) {
    std::fprintf(stderr,
                 "neardup: warning: started %d of %d worker threads (%s); serving with %d\n",
                 pool->threads(), flags_.threads, pool->start_error().c_str(), pool->threads());
  }
  // A connection refused before routing (a cap, a head limit): an access
  // log line and a count in /metrics too.
  http_.set_refused_logger([this](const std::string& remote, int status,
                                  const std::string& message) {
    metrics_.Record("other", status, -1);
    const double t =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    // The access log's fields (method and path unknown: not parsed), and why.
    const std::string text = AccessLogLine(t, remote, "", "", status, 0, 0, message.c_str());
    std::lock_guard lock(log_mu_);
    std::fputs(text.c_str(), stderr);
  });
  // A keep-alive connection serves this many requests before it is closed
  // (httplib's default, 5, made clients reconnect every fifth request).
  http_.set_keep_alive_max_count(100000);
  // cpp-httplib listens with a backlog of 5, fixed when Debian compiled
  // libcpp-httplib (CPPHTTPLIB_LISTEN_BACKLOG defined here does not reach
  // it): with more clients connecting at once than that, or an accept loop
  // that is slow to run on a loaded machine, the kernel drops handshakes, and
  // a client whose handshake completed on its side sees its first request
  // fail ("Read") after about a second. The listening socket is recorded when
  // it is created, and listen(2) is called on it again with a larger backlog
  // (Linux updates the backlog of a listening socket).
  http_.set_socket_options([this](socket_t sock) {
    httplib::default_socket_options(sock);
    int expected = -1;
    listen_fd_.compare_exchange_strong(expected, sock);
  });
  int port = flags_.port;
  if (port == 0) {
    port = http_.bind_to_any_port(flags_.host);
    if (port < 0) return false;
  } else if (!http_.bind_to_port(flags_.host, port)) {
    return false;
  }
  if (const int fd = listen_fd_.load(); fd >= 0) {
    int listening = 0;
    socklen_t len = sizeof(listening);
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || listening == 0 ||
        ::listen(fd, kListenBacklog) != 0) {
      std::fprintf(stderr, "neardup: warning: cannot raise the listen backlog to %d\n",
                   kListenBacklog);
    }
  }
  // The address on standard output (a test or script reads the port).
  std::printf("neardup: serving %s on http://%s:%d\n", flags_.index_path.c_str(),
              flags_.host.c_str(), port);
  std::fflush(stdout);
  const bool served = http_.Serve(pool.get());
  pool->Shutdown();
  return served;
}

RequestLimits Server::LimitsOf(const ServeFlags& flags) {
  RequestLimits limits;
  limits.max_body_bytes = flags.max_body_bytes;
  limits.max_batch = flags.max_batch;
  return limits;
}

FrontOptions Server::FrontOptionsOf(const ServeFlags& flags) {
  FrontOptions options;
  options.limits = LimitsOf(flags);
  options.read_timeout_s = flags.read_timeout_s;
  options.keep_alive_timeout_s = flags.keep_alive_timeout_s;
  options.max_client_connections = flags.max_client_connections;
  // Open connections in all: 4,096, or fewer where the process may open
  // fewer files (a few dozen kept for the index, the log and the rest).
  rlimit files{};
  options.max_connections = 4096;
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY) {
    options.max_connections =
        std::min<size_t>(options.max_connections,
                         files.rlim_cur > 128 ? static_cast<size_t>(files.rlim_cur) - 64 : 64);
  }
  return options;
}

}  // namespace neardup::cli::serve_internal
