// Copyright 2026 The neardup Authors.
//
// Fuzzes `neardup serve`'s request path below its handlers: the input is
// the bytes a client sends on one connection (one or more requests). Each
// head is found as the front end finds it (ScanRequestHead, with its
// limits), then cpp-httplib's request processing runs on it (request line,
// headers, Content-Length or chunked framing) with serve's body reader
// (ReadRequestBody: limit and memory budget) and bounded JSON parser
// (ParseJsonBody) behind a POST route. Any bytes must be answered without a
// crash; a body held is within the limit, the budget is given back after
// every request, a head found complete ends with its blank line, and a body
// the batch bodies' fast path takes (ParseFastBatchBody) parses, at the
// charge the fast path computed.
//
// Debian's cpp-httplib is a compiled library, not instrumented: coverage
// guides the fuzzer through serve's code, not httplib's framing parser
// (which is still run on every input, under the sanitizers' allocator).

#include <httplib.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "tools/neardup/serve_request.h"

namespace {

using neardup::cli::HeadScan;
using neardup::cli::RequestBudget;
using neardup::cli::RequestLimits;
using neardup::cli::ServeJson;

RequestLimits Limits() {
  RequestLimits limits;
  limits.max_body_bytes = 1 << 14;
  limits.max_batch = 16;
  limits.max_head_bytes = 1 << 12;
  limits.max_headers = 20;
  return limits;
}

// One connection's bytes, read as httplib reads a socket; answers are
// dropped.
class MemoryStream : public httplib::Stream {
 public:
  explicit MemoryStream(std::string_view bytes) : bytes_(bytes) {}
  bool is_readable() const override { return pos_ < bytes_.size(); }
  bool is_writable() const override { return true; }
  ssize_t read(char* ptr, size_t size) override {
    const size_t n = std::min(size, bytes_.size() - pos_);
    std::copy(bytes_.data() + pos_, bytes_.data() + pos_ + n, ptr);
    pos_ += n;
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char*, size_t size) override { return static_cast<ssize_t>(size); }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = "127.0.0.1";
    port = 1;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    ip = "127.0.0.1";
    port = 2;
  }
  socket_t socket() const override { return INVALID_SOCKET; }
  size_t pos() const { return pos_; }

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
};

class FuzzServer : public httplib::Server {
 public:
  FuzzServer() : budget_(size_t{1} << 16) {
    set_payload_max_length(Limits().max_body_bytes);
    Post("/v1/check", [this](const httplib::Request& req, httplib::Response& res,
                             const httplib::ContentReader& reader) {
      const RequestLimits limits = Limits();
      RequestBudget::Lease lease(&budget_);
      std::string body;
      if (!neardup::cli::ReadRequestBody(req, reader, limits, &lease, res, &body)) return;
      if (body.size() > limits.max_body_bytes) std::abort();
      // The batch bodies' fast path takes a subset of what the parser
      // takes, charging the same: a body it takes is never a 400, and when
      // parsed costs the budget what the fast path says.
      neardup::cli::FastBatchBody fast;
      const bool fast_taken = neardup::cli::ParseFastBatchBody(body, limits, &fast);
      const size_t held_before = lease.bytes();
      ServeJson json;
      const auto parsed = neardup::cli::ParseJsonBody(body, limits, &lease, &json);
      if (fast_taken &&
          (parsed ? parsed->status == 400 : lease.bytes() - held_before != fast.charge)) {
        std::abort();
      }
      if (auto error = parsed) {
        if (error->status != 400 && error->status != 503) std::abort();
        neardup::cli::SetError(res, error->status, error->message);
        return;
      }
      res.set_content(json.dump(-1, ' ', false, ServeJson::error_handler_t::replace),
                      "application/json");
    });
    Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("{\"status\":\"ok\"}", "application/json");
    });
  }

  // Runs the requests of `bytes` as the front end would: each head must be
  // complete and within the limits before httplib sees it.
  void Connection(std::string_view bytes) {
    const RequestLimits limits = Limits();
    for (int request = 0; request < 8 && !bytes.empty(); ++request) {
      const HeadScan scan = neardup::cli::ScanRequestHead(bytes, limits);
      if (scan.kind != HeadScan::kComplete) return;  // refused (431) or never complete
      if (scan.head_bytes < 4 || scan.head_bytes > bytes.size() ||
          scan.head_bytes > limits.max_head_bytes ||
          bytes.substr(scan.head_bytes - 4, 4) != "\r\n\r\n") {
        std::abort();
      }
      MemoryStream stream(bytes);
      bool closed = false;
      const bool ok = process_request(stream, /*close_connection=*/false, closed, nullptr);
      if (budget_.held() != 0) std::abort();  // every lease given back
      if (!ok || closed || stream.pos() == 0) return;
      bytes.remove_prefix(stream.pos());
    }
  }

 private:
  RequestBudget budget_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (1 << 16)) return 0;
  static FuzzServer* server = new FuzzServer;
  server->Connection(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
