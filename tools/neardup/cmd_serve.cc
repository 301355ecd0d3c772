// Copyright 2026 The neardup Authors.
//
// neardup serve --index IDX: a resident near-duplicate index behind an
// HTTP/1.1 JSON API (cpp-httplib), for crawlers asking "have I seen
// something like this page?". The index is opened read-write with the
// write-ahead log (document_index.h), so every acknowledged change survives
// a crash; the requests are wired to DocumentIndex::Query, AddBatch, Check
// and Remove. The API is in doc/serve.md.

#include <httplib.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <deque>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <system_error>
#include <thread>

#include "common.h"
#include "index_open.h"
#include "neardup/document_index.h"
#include "neardup/text_index.h"
#include "serve_front.h"
#include "serve_request.h"

namespace neardup::cli {
namespace {

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

// Pending connections the kernel keeps for the accept loop (capped by
// net.core.somaxconn, 4096 by default).
constexpr int kListenBacklog = 1024;

void SetJson(httplib::Response& res, const Json& j) {
  res.status = 200;
  res.set_content(j.dump(-1, ' ', false, Json::error_handler_t::replace), "application/json");
}

// The HTTP status for a library error.
int StatusCodeOf(const Status& s) {
  if (s.IsInvalidArgument()) {
    return s.message().find("is already in") != std::string::npos ? 409 : 400;
  }
  if (s.IsNotFound()) return 404;
  return 500;
}

// What GET /metrics reports of the requests served: a count by endpoint and
// status, and each endpoint's latency as a histogram. The endpoint label is
// one of the server's paths or "other" (a client cannot grow the label set).
class Metrics {
 public:
  // Upper bounds in seconds, as Prometheus' `le`: 100 us to 10 s.
  static constexpr double kBuckets[] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                        0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,    10};
  static constexpr size_t kNumBuckets = std::size(kBuckets);

  // One answered request; `seconds` < 0 when its start is unknown (an
  // error httplib answered before routing): counted, not timed.
  void Record(const std::string& endpoint, int status, double seconds) {
    std::lock_guard lock(mu_);
    ++requests_[{endpoint, status}];
    if (seconds < 0) return;
    Histogram& h = latency_[endpoint];
    // Counts per bucket, not cumulative (made cumulative when rendered).
    const size_t b = static_cast<size_t>(
        std::lower_bound(std::begin(kBuckets), std::end(kBuckets), seconds) - std::begin(kBuckets));
    ++h.counts[b];
    h.sum += seconds;
  }

  // The Prometheus text exposition format (version 0.0.4).
  std::string Render(const DocumentIndexStats& stats) const {
    std::string out;
    const auto line = [&out](const char* fmt, auto... args) {
      char buf[256];
      std::snprintf(buf, sizeof buf, fmt, args...);
      out += buf;
    };
    std::lock_guard lock(mu_);
    out +=
        "# HELP neardup_http_requests_total HTTP requests answered, by endpoint and status.\n"
        "# TYPE neardup_http_requests_total counter\n";
    for (const auto& [key, n] : requests_) {
      line("neardup_http_requests_total{endpoint=\"%s\",status=\"%d\"} %llu\n", key.first.c_str(),
           key.second, static_cast<unsigned long long>(n));
    }
    out +=
        "# HELP neardup_http_request_duration_seconds Time from a request's headers read to its "
        "answer, by endpoint.\n"
        "# TYPE neardup_http_request_duration_seconds histogram\n";
    for (const auto& [endpoint, h] : latency_) {
      uint64_t cumulative = 0;
      for (size_t b = 0; b < kNumBuckets; ++b) {
        cumulative += h.counts[b];
        line("neardup_http_request_duration_seconds_bucket{endpoint=\"%s\",le=\"%g\"} %llu\n",
             endpoint.c_str(), kBuckets[b], static_cast<unsigned long long>(cumulative));
      }
      cumulative += h.counts[kNumBuckets];
      line("neardup_http_request_duration_seconds_bucket{endpoint=\"%s\",le=\"+Inf\"} %llu\n",
           endpoint.c_str(), static_cast<unsigned long long>(cumulative));
      line("neardup_http_request_duration_seconds_sum{endpoint=\"%s\"} %.9g\n", endpoint.c_str(),
           h.sum);
      line("neardup_http_request_duration_seconds_count{endpoint=\"%s\"} %llu\n", endpoint.c_str(),
           static_cast<unsigned long long>(cumulative));
    }
    line(
        "# HELP neardup_index_documents Documents in the index.\n"
        "# TYPE neardup_index_documents gauge\n"
        "neardup_index_documents %llu\n",
        static_cast<unsigned long long>(stats.documents));
    line(
        "# HELP neardup_index_log_bytes Size of the index's write-ahead log (IDX.log).\n"
        "# TYPE neardup_index_log_bytes gauge\n"
        "neardup_index_log_bytes %llu\n",
        static_cast<unsigned long long>(stats.log_bytes));
    line(
        "# HELP neardup_index_file_bytes Size of the index file as last committed.\n"
        "# TYPE neardup_index_file_bytes gauge\n"
        "neardup_index_file_bytes %lld\n",
        static_cast<long long>(std::max<int64_t>(stats.file_bytes, 0)));
    line(
        "# HELP neardup_index_compactions_total Compactions that published a new index file "
        "since the server started.\n"
        "# TYPE neardup_index_compactions_total counter\n"
        "neardup_index_compactions_total %llu\n",
        static_cast<unsigned long long>(stats.compactions));
    line(
        "# HELP neardup_index_evictions_total Documents evicted (--max-age, --max-count) since "
        "the server started.\n"
        "# TYPE neardup_index_evictions_total counter\n"
        "neardup_index_evictions_total %llu\n",
        static_cast<unsigned long long>(stats.evicted));
    return out;
  }

 private:
  struct Histogram {
    std::array<uint64_t, kNumBuckets + 1> counts{};  // the last: above every bound
    double sum = 0;
  };
  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;  // guarded by mu_
  std::map<std::string, Histogram> latency_;                  // guarded by mu_
};

// A request's documents, fingerprinted, with its options.
struct Batch {
  std::vector<std::string> ids;          // every item, in order
  std::vector<DocumentFingerprint> fps;  // every item (empty: no features)
  int k = -1;
  bool replace = false;
};

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
  // The listening socket, recorded when httplib creates it (ListenBacklog).
  std::atomic<int> listen_fd_{-1};
};

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

// The endpoints that take a body.
constexpr const char* kPostPaths[] = {"/v1/query", "/v1/add", "/v1/check", "/v1/remove",
                                      "/v1/snapshot"};
// The endpoints that take none.
constexpr const char* kGetPaths[] = {"/v1/stats", "/healthz", "/metrics"};

// The size of the body the last request on this worker thread read, for the
// access log (a body read by a content reader is not in Request::body).
thread_local size_t last_body_bytes = 0;
// The budget lease of the request this worker thread answers (its body and
// parsed JSON), held by the POST handler's wrapper (Route).
thread_local RequestBudget::Lease* request_lease = nullptr;
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

bool Server::ReadBody(const httplib::Request& req, const httplib::ContentReader& reader,
                      httplib::Response& res, std::string* body) const {
  const bool read = ReadRequestBody(req, reader, limits_, request_lease, res, body);
  last_body_bytes = body->size();
  return read;
}

bool Server::ParseBatch(const std::string& text, httplib::Response& res, bool need_ids,
                        Batch* batch) const {
  Json body;
  if (auto error = ParseJsonBody(text, limits_, request_lease, &body)) {
    SetError(res, error->status, error->message);
    return false;
  }
  if (!body.is_object()) {
    SetError(res, 400, "the body must be a JSON object");
    return false;
  }
  if (auto k = body.find("k"); k != body.end()) {
    if (!k->is_number_integer() || *k < 0 || *k > index_->max_k()) {
      SetError(
          res, 400,
          "k must be an integer from 0 to the index's max k " + std::to_string(index_->max_k()));
      return false;
    }
    batch->k = k->get<int>();
  }
  if (auto r = body.find("replace"); r != body.end()) {
    if (!r->is_boolean()) {
      SetError(res, 400, "replace must be true or false");
      return false;
    }
    batch->replace = r->get<bool>();
  }
  const auto docs = body.find("documents");
  const auto fps = body.find("fingerprints");
  if ((docs == body.end()) == (fps == body.end())) {
    SetError(res, 400, "the body needs exactly one of \"documents\" and \"fingerprints\"");
    return false;
  }
  const bool texts = docs != body.end();
  const Json& items = texts ? *docs : *fps;
  const char* name = texts ? "documents" : "fingerprints";
  if (!items.is_array()) {
    SetError(res, 400, std::string(name) + " must be an array");
    return false;
  }
  if (items.size() > flags_.max_batch) {
    SetError(res, 413,
             std::to_string(items.size()) + " items; at most " + std::to_string(flags_.max_batch) +
                 " per request (--max-batch)");
    return false;
  }
  for (size_t i = 0; i < items.size(); ++i) {
    const Json& item = items[i];
    const std::string where = std::string(name) + "[" + std::to_string(i) + "]";
    if (!item.is_object()) {
      SetError(res, 400, where + " must be an object");
      return false;
    }
    std::string id;
    if (auto it = item.find("id"); it != item.end()) {
      if (!it->is_string()) {
        SetError(res, 400, where + ".id must be a string");
        return false;
      }
      id = it->get<std::string>();
    } else if (need_ids) {
      SetError(res, 400, where + " needs an \"id\"");
      return false;
    }
    const char* field = texts ? "text" : "fingerprint";
    auto value = item.find(field);
    if (value == item.end() || !value->is_string()) {
      SetError(res, 400, where + "." + field + " must be a string");
      return false;
    }
    if (texts) {
      std::string title;
      if (auto t = item.find("title"); t != item.end()) {
        if (!t->is_string()) {
          SetError(res, 400, where + ".title must be a string");
          return false;
        }
        title = t->get<std::string>();
      }
      const std::string& text = value->get_ref<const std::string&>();
      batch->fps.push_back(index_->Fingerprint(text, title));
    } else {
      auto fp = Fingerprint::FromHex(value->get_ref<const std::string&>());
      if (!fp.ok() || fp->bits() != index_->bits()) {
        SetError(res, 400,
                 where + ".fingerprint: " +
                     (fp.ok() ? "a " + std::to_string(fp->bits()) + "-bit fingerprint in a " +
                                    std::to_string(index_->bits()) + "-bit index"
                              : fp.status().message()));
        return false;
      }
      batch->fps.push_back(DocumentFingerprint{*fp, 1});
    }
    batch->ids.push_back(std::move(id));
  }
  return true;
}

Json MatchesJson(const std::vector<DocumentMatch>& matches) {
  Json a = Json::array();
  for (const DocumentMatch& m : matches) a.push_back({{"id", m.id}, {"distance", m.distance}});
  return a;
}

// One item's answer: {"id", "matches"}, then "added" (add, check), and
// "exists" or "empty" when they hold (the text index's policy: an empty
// document has no matches and is never added).
Json ResultJson(const std::string& id, const TextIndexResult& r, bool with_added) {
  Json j = {{"id", id}, {"matches", MatchesJson(r.matches)}};
  if (with_added) j["added"] = r.added;
  if (r.exists) j["exists"] = true;  // left as it is, not added
  if (r.empty) j["empty"] = true;    // no features: never a near duplicate, never added
  return j;
}

Json ResultsJson(const Batch& batch, const std::vector<TextIndexResult>& results, bool with_added,
                 const TextIndex& index) {
  Json out = Json::array();
  for (size_t i = 0; i < results.size(); ++i) {
    out.push_back(ResultJson(batch.ids[i], results[i], with_added));
  }
  return Json{{"results", std::move(out)},
              {"recall_at_max_k", index.documents().Stats().tables.recall_at_k}};
}

// Runs Check with `policy` and answers {"results": [{"id", "matches",
// "added"}...]} in request order.
void CheckAndAnswer(TextIndex& index, const Batch& batch, CheckPolicy policy,
                    httplib::Response& res) {
  CheckOptions options;
  options.k = batch.k;
  options.policy = policy;
  options.replace = batch.replace;
  // An id already indexed is that item's answer ("exists"), not the batch's.
  options.skip_existing = true;
  std::vector<TextIndexResult> results;
  const Status s = index.Check(batch.ids, batch.fps, options, &results);
  if (!s.ok()) return SetError(res, StatusCodeOf(s), s.message());
  SetJson(res, ResultsJson(batch, results, policy != CheckPolicy::kQueryOnly, index));
}

void Server::HandleQuery(const std::string& body, httplib::Response& res) {
  Batch batch;
  if (!ParseBatch(body, res, /*need_ids=*/false, &batch)) return;
  // A query takes the readers' side of the lock only: Query, not Check.
  std::vector<TextIndexResult> results;
  const Status s = index_->Query(batch.fps, batch.k, &results);
  if (!s.ok()) return SetError(res, StatusCodeOf(s), s.message());
  SetJson(res, ResultsJson(batch, results, /*with_added=*/false, *index_));
}

void Server::HandleAdd(const std::string& body, httplib::Response& res) {
  Batch batch;
  if (!ParseBatch(body, res, /*need_ids=*/true, &batch)) return;
  CheckAndAnswer(*index_, batch, CheckPolicy::kAddAlways, res);
}

void Server::HandleCheck(const std::string& body, httplib::Response& res) {
  Batch batch;
  if (!ParseBatch(body, res, /*need_ids=*/true, &batch)) return;
  CheckAndAnswer(*index_, batch, CheckPolicy::kAddIfNew, res);
}

void Server::HandleRemove(const std::string& text, httplib::Response& res) {
  Json body;
  if (auto error = ParseJsonBody(text, limits_, request_lease, &body)) {
    return SetError(res, error->status, error->message);
  }
  const auto ids = body.is_object() ? body.find("ids") : body.end();
  if (ids == body.end() || !ids->is_array()) {
    return SetError(res, 400, "the body must be an object with \"ids\": an array of strings");
  }
  if (ids->size() > flags_.max_batch) {
    return SetError(res, 413,
                    std::to_string(ids->size()) + " ids; at most " +
                        std::to_string(flags_.max_batch) + " per request (--max-batch)");
  }
  std::vector<std::string> list;
  for (const Json& id : *ids) {
    if (!id.is_string()) return SetError(res, 400, "ids must be strings");
    list.push_back(id.get<std::string>());
  }
  std::vector<std::string> missing;
  auto removed = index_->Remove(list, &missing);
  if (!removed.ok())
    return SetError(res, StatusCodeOf(removed.status()), removed.status().message());
  SetJson(res, Json{{"removed", *removed}, {"missing", missing}});
}

// {"name": NAME}: a consistent copy of the index, every change acknowledged
// before the request included, written as --snapshot-dir/NAME (and
// NAME.ids) while requests go on (DocumentIndex::SaveSnapshot).
void Server::HandleSnapshot(const std::string& text, httplib::Response& res) {
  if (flags_.snapshot_dir.empty()) {
    return SetError(res, 403, "snapshots are off: start the server with --snapshot-dir DIR");
  }
  Json body;
  if (auto error = ParseJsonBody(text, limits_, request_lease, &body)) {
    return SetError(res, error->status, error->message);
  }
  const auto name = body.is_object() ? body.find("name") : body.end();
  if (name == body.end() || !name->is_string()) {
    return SetError(res, 400, "the body must be an object with \"name\": a string");
  }
  const std::string n = name->get<std::string>();
  const bool plain =
      !n.empty() && n.size() <= 200 && n[0] != '.' && std::all_of(n.begin(), n.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
      });
  if (!plain) {
    return SetError(res, 400,
                    "name must be 1 to 200 letters, digits, '.', '_' or '-', not starting "
                    "with '.'");
  }
  const std::string dest = flags_.snapshot_dir + "/" + n;
  const Status s = index_->SaveSnapshot(dest);
  if (!s.ok()) {
    const bool exists = s.message().find("already exists") != std::string::npos;
    return SetError(res, exists ? 409 : StatusCodeOf(s), s.message());
  }
  SetJson(res, Json{{"path", dest}});
}

void Server::HandleStats(httplib::Response& res) {
  // The same object as `neardup index stats --json` (text_index.h).
  res.status = 200;
  res.set_content(TextIndexStatsJson(index_->Stats()), "application/json");
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
      request_lease = &lease;
      std::string body;
      if (ReadBody(req, reader, res, &body)) (this->*handler)(body, res);
      request_lease = nullptr;
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
    Json line = {{"ts", t},
                 {"remote", req.remote_addr},
                 {"method", req.method},
                 {"path", req.path},
                 {"status", res.status},
                 {"bytes_in", last_body_bytes},
                 {"bytes_out", res.body.size()}};
    const std::string text = line.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
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
    const Json line = {{"ts", t},        {"remote", remote}, {"method", ""},
                       {"path", ""},     {"status", status}, {"bytes_in", 0},
                       {"bytes_out", 0}, {"error", message}};
    const std::string text = line.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
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

// Eviction on a schedule: DocumentIndex::Evict with --max-age/--max-count
// when the server starts and every --evict-every seconds (the removals are
// logged; a compaction folds them into the files).
class Evictor {
 public:
  Evictor(DocumentIndex* index, const EvictionOptions& limits, double every_s) {
    if (!limits.max_age_seconds && !limits.max_count) return;
    thread_ = std::thread([this, index, limits, every_s] {
      std::unique_lock lock(mu_);
      do {
        lock.unlock();
        auto evicted = index->Evict(limits);
        if (!evicted.ok()) {
          std::fprintf(stderr, "neardup: eviction failed: %s\n",
                       evicted.status().ToString().c_str());
        } else if (*evicted > 0) {
          std::fprintf(stderr, "neardup: evicted %zu documents; the index holds %zu\n", *evicted,
                       index->size());
        }
        lock.lock();
      } while (
          !wake_.wait_for(lock, std::chrono::duration<double>(every_s), [this] { return stop_; }));
    });
  }
  ~Evictor() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;  // guarded by mu_
  std::thread thread_;
};

int RunServe(const ServeFlags& flags) {
  if (flags.max_batch == 0 || flags.max_body_bytes == 0 || flags.threads <= 0 ||
      flags.max_request_memory == 0 || flags.max_client_connections == 0) {
    return Fail(Status::InvalidArgument(
        "--max-batch, --max-body-bytes, --threads, --max-request-memory and "
        "--max-client-connections must be > 0"));
  }
  if (flags.max_request_memory < flags.max_body_bytes) {
    return Fail(Status::InvalidArgument(
        "--max-request-memory must be at least --max-body-bytes (a body is held whole)"));
  }
  std::string token;
  if (!flags.token_file.empty()) {
    std::ifstream in(flags.token_file, std::ios::binary);
    if (!in) return Fail(Status::NotFound(flags.token_file + ": cannot be read"));
    token.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (in.bad()) return Fail(Status::IOError(flags.token_file + ": read error"));
    while (!token.empty() &&
           (token.back() == '\n' || token.back() == '\r' || token.back() == ' ')) {
      token.pop_back();
    }
    if (token.empty()) return Fail(Status::InvalidArgument(flags.token_file + ": empty token"));
  }
  // SIGTERM and SIGINT are taken by a thread of their own (sigwait), so the
  // server stops between requests; blocked before any thread starts so that
  // every thread inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  // Blocks of 1 MiB and more (request bodies, their parsed arrays) are
  // mapped for themselves and unmapped when freed. glibc's default raises
  // this threshold to the largest block freed (up to 32 MiB), after which
  // 16 MiB bodies came from the threads' arenas and stayed resident when
  // freed: eight hostile bodies at once left ~250 MB behind.
  mallopt(M_MMAP_THRESHOLD, 1 << 20);

  DocumentIndexOptions options;
  options.log = true;
  options.sync = !flags.no_sync;
  options.preload = flags.preload;
  options.compact_fraction = flags.compact_fraction;
  SetLockWait(flags.index_path, flags.lock_wait, &options);
  TextIndexOpenOptions open;
  open.mode = DocumentIndex::Mode::kReadWrite;
  open.index = options;
  open.jieba_dir = flags.jieba_dir;
  auto index = TextIndex::Open(flags.index_path, open);
  if (!index.ok()) return Fail(index.status());
  Server server(flags, std::move(*index), std::move(token));
  std::optional<Evictor> evictor;
  evictor.emplace(&server.index().documents(), flags.evict, flags.evict_every);

  // A signal that arrives before the server listens must still stop it:
  // Stop is repeated until Run has returned.
  std::atomic<bool> done{false};
  std::thread waiter([&server, &done, signals] {
    int sig = 0;
    sigwait(&signals, &sig);
    while (!done.load()) {
      server.Stop();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  const bool served = server.Run();
  done = true;
  if (!served) {
    // Bind failed: wake the waiter, then report.
    pthread_kill(waiter.native_handle(), SIGTERM);
  }
  waiter.join();
  evictor.reset();  // no eviction after the final Sync
  if (!served) {
    return Fail(
        Status::IOError("cannot listen on " + flags.host + ":" + std::to_string(flags.port)));
  }
  // Graceful shutdown: every acknowledged change is in the log; make it
  // durable when it was not synced per request.
  NEARDUP_RETURN_IF_ERROR_CLI(server.index().documents().Sync());
  std::fprintf(stderr, "neardup: stopped; %zu documents in %s\n", server.index().size(),
               flags.index_path.c_str());
  return kExitOk;
}

}  // namespace

void AddServeCommand(CLI::App& app, ExitCode* exit_code) {
  auto flags = std::make_shared<ServeFlags>();
  CLI::App* s = app.add_subcommand(
      "serve",
      "Serve an index over HTTP/1.1 JSON: POST /v1/query, /v1/add, /v1/check (query-or-add), "
      "/v1/remove, /v1/snapshot; GET /v1/stats, /healthz, /metrics (Prometheus) "
      "(doc/serve.md)");
  s->add_option("--index", flags->index_path, "The index (IDX; changes go to IDX.log)")->required();
  s->add_option("--host", flags->host, "Address to listen on (default 127.0.0.1)");
  s->add_option("--port", flags->port,
                "Port (default 8080; 0 = any free port, printed on standard output)")
      ->check(CLI::Range(0, 65535));
  s->add_option("--token-file", flags->token_file,
                "Require \"Authorization: Bearer TOKEN\" with the token in this file "
                "(every endpoint but /healthz)");
  s->add_option("--max-body-bytes", flags->max_body_bytes,
                "Largest request body, chunked or not; larger is 413 (default 16 MiB)")
      ->check(CLI::PositiveNumber);
  s->add_option("--max-batch", flags->max_batch,
                "Most documents, fingerprints or ids per request; more is 413 (default 10000)")
      ->check(CLI::PositiveNumber);
  s->add_option("--threads", flags->threads,
                "Worker threads: requests served at once (a connection holds one only while "
                "its request is read and answered) (default 64)")
      ->check(CLI::PositiveNumber);
  s->add_option("--read-timeout", flags->read_timeout_s,
                "Seconds a client may take to send a request, head and body, from its first "
                "byte (default 10)")
      ->check(CLI::Range(1, 3600));
  s->add_option("--keep-alive-timeout", flags->keep_alive_timeout_s,
                "Seconds an idle keep-alive connection is kept open (default 30)")
      ->check(CLI::Range(1, 3600));
  s->add_option("--max-request-memory", flags->max_request_memory,
                "Memory the requests in flight may hold in all (bodies and their parsed JSON); "
                "a request beyond it is 503 (default 512 MiB)")
      ->check(CLI::PositiveNumber);
  s->add_option("--max-client-connections", flags->max_client_connections,
                "Open connections from one client address; more are 503 (default 256)")
      ->check(CLI::PositiveNumber);
  s->add_flag("--no-sync", flags->no_sync,
              "Do not fsync the log per request (faster; a power loss may lose acknowledged "
              "changes, a killed process does not); synced on shutdown");
  s->add_flag("--preload", flags->preload,
              "Read the index file into memory backed by huge pages instead of mapping it: "
              "starts as slowly as reading the file and holds all of it in memory; queries "
              "are faster (fewer TLB misses)");
  s->add_option("--compact-fraction", flags->compact_fraction,
                "Fold the log into the index once it exceeds this fraction of the index file "
                "(default 0.5; 0 = only by `neardup index compact`)")
      ->check(CLI::Range(0.0, 1000.0));
  s->add_option("--jieba-dir", flags->jieba_dir, "python3-jieba's data directory");
  AddLockWaitOption(s, &flags->lock_wait);
  s->add_option("--snapshot-dir", flags->snapshot_dir,
                "Directory where POST /v1/snapshot {\"name\": NAME} writes a consistent copy "
                "of the index (NAME, NAME.ids); without it the endpoint answers 403")
      ->check(CLI::ExistingDirectory);
  AddEvictionOptions(s, &flags->evict);
  s->add_option("--evict-every", flags->evict_every,
                "Seconds between evictions by --max-age/--max-count (default 60; the first "
                "when the server starts)")
      ->check(CLI::Range(0.001, 1e9));
  s->callback([flags, exit_code] { exit_code->value = RunServe(*flags); });
}

}  // namespace neardup::cli
