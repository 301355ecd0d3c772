// Copyright 2026 The neardup Authors.
//
// neardup serve --index IDX: a resident near-duplicate index behind an
// HTTP/1.1 JSON API (doc/serve.md). The command's parts, one concern a file:
//   cmd_serve.cc           the subcommand's options and its start and stop
//                          (token, signals, opening the index, eviction)
//   cmd_serve_server.cc    the Server: routing, authorization, the access
//                          log, listening
//   cmd_serve_handlers.cc  the endpoints: request bodies to index calls, the
//                          answers' JSON
//   cmd_serve_metrics.cc   GET /metrics
// Below them: serve_front.h (connections) and serve_request.h (limits, the
// memory budget, reading and parsing bodies).

#ifndef NEARDUP_TOOLS_NEARDUP_CMD_SERVE_H_
#define NEARDUP_TOOLS_NEARDUP_CMD_SERVE_H_

#include <httplib.h>

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cmd_serve_metrics.h"
#include "neardup/document_index.h"
#include "neardup/text_index.h"
#include "serve_front.h"
#include "serve_request.h"

namespace neardup::cli::serve_internal {

using Json = nlohmann::ordered_json;

struct ServeFlags {
  std::string index_path;
  std::string host = "127.0.0.1";
  int port = 8080;
  std::string token_file;
  size_t max_body_bytes = size_t{16} << 20;
  size_t max_batch = 10000;
  // cpp-httplib serves a keep-alive connection on one worker for its whole
  // life: with fewer workers than clients, the rest wait in the queue.
  int threads = 64;
  bool no_sync = false;
  bool preload = false;
  double compact_fraction = 0.5;
  int read_timeout_s = 10;
  int keep_alive_timeout_s = 30;
  size_t max_request_memory = size_t{512} << 20;
  size_t max_client_connections = 256;
  double lock_wait = -1;  // --wait SECONDS for the index's lock; < 0 none
  std::string jieba_dir;
  std::string snapshot_dir;  // POST /v1/snapshot writes there; empty: off
  EvictionOptions evict;     // --max-age, --max-count
  double evict_every = 60;   // --evict-every SECONDS
};

// A request's documents, fingerprinted, with its options.
struct Batch {
  std::vector<std::string> ids;          // every item, in order
  std::vector<DocumentFingerprint> fps;  // every item (empty: no features)
  int k = -1;
  bool replace = false;
};

// The HTTP server over one TextIndex: Run once; the handlers run on the
// worker threads at once (TextIndex, RequestBudget and Metrics are
// thread-safe).
class Server {
 public:
  Server(const ServeFlags& flags, std::unique_ptr<TextIndex> index, std::string token)
      : flags_(flags),
        limits_(LimitsOf(flags)),
        index_(std::move(index)),
        token_(std::move(token)),
        budget_(flags.max_request_memory),
        http_(FrontOptionsOf(flags)) {}

  // Binds, prints the address, serves until Stop. False when it cannot bind.
  bool Run();
  void Stop() { http_.stop(); }
  TextIndex& index() { return *index_; }

 private:
  void Route();
  // Reads the request body into *body, at most --max-body-bytes of it
  // whatever its framing (Content-Length or chunked); false (and an error
  // answer, 413 when it is larger) when it cannot.
  bool ReadBody(const httplib::Request& req, const httplib::ContentReader& reader,
                httplib::Response& res, std::string* body) const;
  // Parses the request body into *batch; false (and an error answer) when
  // it is not what the endpoint takes. `need_ids`: every item needs an id.
  bool ParseBatch(const std::string& text, httplib::Response& res, bool need_ids,
                  Batch* batch) const;
  // ParseBatch's fast path for the common body (ParseFastBatchBody): true
  // when it answered (*batch filled, or a 503 when the memory budget cannot
  // hold the body's parse), nullopt when the body is for the general path
  // (anything else, every error included).
  std::optional<bool> ParseBatchFast(std::string_view text, httplib::Response& res, bool need_ids,
                                     Batch* batch) const;
  void HandleQuery(const std::string& body, httplib::Response& res);
  void HandleAdd(const std::string& body, httplib::Response& res);
  void HandleCheck(const std::string& body, httplib::Response& res);
  void HandleRemove(const std::string& body, httplib::Response& res);
  void HandleSnapshot(const std::string& body, httplib::Response& res);
  void HandleStats(httplib::Response& res);
  bool Authorized(const httplib::Request& req) const;

  static RequestLimits LimitsOf(const ServeFlags& flags);
  static FrontOptions FrontOptionsOf(const ServeFlags& flags);

  const ServeFlags flags_;
  const RequestLimits limits_;
  // The index with its method, pipeline and line counts (text_index.h).
  std::unique_ptr<TextIndex> index_;
  const std::string token_;
  // What the requests in flight hold: bodies and their parsed JSON.
  RequestBudget budget_;
  FrontServer http_;
  std::mutex log_mu_;  // one access log line at a time
  Metrics metrics_;
  // The budget lease of the request this worker thread answers (its body and
  // parsed JSON), held by the POST handler's wrapper (Route).
  static thread_local RequestBudget::Lease* request_lease_;
  // The listening socket, recorded when httplib creates it (ListenBacklog).
  std::atomic<int> listen_fd_{-1};
};

// Answers `j` with status 200.
void SetJson(httplib::Response& res, const Json& j);

}  // namespace neardup::cli::serve_internal

#endif  // NEARDUP_TOOLS_NEARDUP_CMD_SERVE_H_
