// Copyright 2026 The neardup Authors.
//
// What `neardup serve` does with a request before a handler sees it: the
// limits on its head (request line and headers) and body, the memory budget
// shared by the requests in flight, reading the body whatever its framing,
// and parsing it as JSON with bounded depth and memory. Split out of
// cmd_serve.cc so that a fuzz target (fuzz/serve_request_fuzz.cc) can drive
// it without an index. Thread-safe: RequestBudget is shared by the workers;
// the rest is functions of their arguments.

#ifndef NEARDUP_TOOLS_NEARDUP_SERVE_REQUEST_H_
#define NEARDUP_TOOLS_NEARDUP_SERVE_REQUEST_H_

#include <httplib.h>

#include <atomic>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace neardup::cli {

using ServeJson = nlohmann::ordered_json;

// The limits on one request. Defaults are serve's.
struct RequestLimits {
  // Largest body, Content-Length or chunked (--max-body-bytes).
  size_t max_body_bytes = size_t{16} << 20;
  // Most items per request (--max-batch).
  size_t max_batch = 10000;
  // Deepest nesting of JSON arrays and objects in a body: serve's bodies
  // need 3 ({"documents": [{...}]}); a deeper one is 400 before it is built.
  int max_json_depth = 32;
  // Largest request head (request line, headers, the blank line), and most
  // header lines in it: beyond either, 431 before any of it is parsed.
  size_t max_head_bytes = size_t{64} << 10;
  size_t max_headers = 100;

  // Most JSON values (objects, arrays, keys, scalars) in one body: 16 per
  // item and 64 more, far above what serve's items take (at most 9: an
  // object and four keys with their strings). It bounds what a body costs
  // to parse (kJsonValueBytes each) whatever its shape.
  size_t MaxJsonValues() const { return 64 + 16 * max_batch; }
};

// What one parsed JSON value is charged against the budget (a basic_json,
// its share of a container's storage and the allocator's overhead).
constexpr size_t kJsonValueBytes = 64;

// The memory held by the requests in flight: their bodies and the parsed
// JSON of each (--max-request-memory). A request that would take it past
// its limit is refused (503) instead of waiting for memory.
class RequestBudget {
 public:
  explicit RequestBudget(size_t limit) : limit_(limit) {}
  RequestBudget(const RequestBudget&) = delete;
  RequestBudget& operator=(const RequestBudget&) = delete;

  size_t limit() const { return limit_; }
  size_t held() const { return held_.load(std::memory_order_relaxed); }

  // What one request holds of the budget; all of it is given back when the
  // lease ends.
  class Lease {
   public:
    explicit Lease(RequestBudget* budget) : budget_(budget) {}
    ~Lease() { budget_->held_.fetch_sub(bytes_, std::memory_order_relaxed); }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    // Takes `n` more bytes; false (and nothing taken) when the budget has
    // not that much left.
    bool Take(size_t n);
    size_t bytes() const { return bytes_; }

   private:
    RequestBudget* budget_;
    size_t bytes_ = 0;
  };

 private:
  const size_t limit_;
  std::atomic<size_t> held_{0};
};

// An error answer: the HTTP status and the message of its JSON body.
struct RequestError {
  int status;
  std::string message;
};

// Sets `res` to {"error": {"status": N, "message": "..."}}.
void SetError(httplib::Response& res, int status, const std::string& message);

// Whether the request says Transfer-Encoding: chunked.
bool IsChunked(const httplib::Request& req);

// Where a request's head ends in the bytes read so far from a connection.
struct HeadScan {
  enum Kind {
    kIncomplete,      // no blank line yet, within the limits: read on
    kComplete,        // the head is bytes [0, head_bytes)
    kTooLarge,        // more than max_head_bytes without its end: 431
    kTooManyHeaders,  // more than max_headers header lines: 431
  };
  Kind kind = kIncomplete;
  size_t head_bytes = 0;
};
// Looks for the blank line (CRLF CRLF) that ends the head at the start of
// `bytes`, within `limits`.
HeadScan ScanRequestHead(std::string_view bytes, const RequestLimits& limits);

// The message of a 431 answer for a refused head.
std::string HeadErrorMessage(HeadScan::Kind kind, const RequestLimits& limits);

// Reads the request body into *body through `reader` (httplib's framing:
// Content-Length or chunked), at most limits.max_body_bytes of it, each
// byte charged to `lease` as it is held (a null lease: no budget). On failure, sets the error
// answer (413 too large, 503 over the budget, 400 malformed framing or a timeout, 415 multipart),
// with "Connection: close" as the rest is never read.
bool ReadRequestBody(const httplib::Request& req, const httplib::ContentReader& reader,
                     const RequestLimits& limits, RequestBudget::Lease* lease,
                     httplib::Response& res, std::string* body);

// Parses `text` as JSON into *out, refusing (400) nesting deeper than
// limits.max_json_depth or more than limits.MaxJsonValues() values before
// they are built, and charging what it builds to `lease` (503 when the
// budget is spent; a null lease: no budget). nullopt on success.
std::optional<RequestError> ParseJsonBody(std::string_view text, const RequestLimits& limits,
                                          RequestBudget::Lease* lease, ServeJson* out);

// A fast path for the common batch body of /v1/check, /v1/query and /v1/add,
// without building nlohmann's tree (its lexer took ~8 % of the server's CPU
// with 32 ~2 KB documents a request): exactly one object
//   {"documents" or "fingerprints": [{"id": S, "text" or "fingerprint": S,
//    "title": S (documents)}, ...], "k": N, "replace": true|false}
// with every key unescaped and at most once, every string valid UTF-8
// without raw control characters, no surrogate escape, "k" plain digits (at
// most 9), and both items and values within `limits`. It accepts a subset
// of what ParseJsonBody accepts, with the same values: anything else
// (including every error) is left to ParseJsonBody, so that every answer
// and message stays its.
struct FastBatchBody {
  struct Item {
    std::string_view id;     // a string's JSON text, quotes included; empty: absent
    std::string_view value;  // "text" or "fingerprint", the same
    std::string_view title;  // documents only; empty: absent
  };
  bool documents = false;  // "documents", else "fingerprints"
  std::vector<Item> items;
  std::optional<long> k;
  std::optional<bool> replace;
  // What ParseJsonBody would charge to the budget for the same body: 64
  // bytes a value (kJsonValueBytes) and the decoded bytes of its strings
  // and keys.
  size_t charge = 0;
};
// True (and *out filled) when `text` is such a body.
bool ParseFastBatchBody(std::string_view text, const RequestLimits& limits, FastBatchBody* out);

// The value of a string's JSON text accepted by ParseFastBatchBody.
std::string DecodeFastString(std::string_view raw);

// One line of the access log (JSON, with its newline): {"ts", "remote",
// "method", "path", "status", "bytes_in", "bytes_out"}, plus "error" when
// `error` is not null. Built without a JSON tree (once a request): a string
// of printable ASCII is copied as it is, any other escaped as nlohmann's
// dump does (invalid UTF-8 replaced by U+FFFD).
std::string AccessLogLine(double ts, std::string_view remote, std::string_view method,
                          std::string_view path, int status, size_t bytes_in, size_t bytes_out,
                          const char* error = nullptr);

// The message of a 503 for a request the memory budget cannot hold.
extern const char kBudgetSpentMessage[];

}  // namespace neardup::cli

#endif  // NEARDUP_TOOLS_NEARDUP_SERVE_REQUEST_H_
