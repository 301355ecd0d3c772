// Copyright 2026 The neardup Authors.

#include "serve_request.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace neardup::cli {

namespace {
// Takes `n` bytes from `lease`; no lease: no budget.
bool TakeFrom(RequestBudget::Lease* lease, size_t n) { return lease == nullptr || lease->Take(n); }
size_t HeldBy(const RequestBudget::Lease* lease) { return lease == nullptr ? 0 : lease->bytes(); }
}  // namespace

bool RequestBudget::Lease::Take(size_t n) {
  size_t held = budget_->held_.load(std::memory_order_relaxed);
  do {
    if (n > budget_->limit_ || held > budget_->limit_ - n) return false;
  } while (!budget_->held_.compare_exchange_weak(held, held + n, std::memory_order_relaxed));
  bytes_ += n;
  return true;
}

void SetError(httplib::Response& res, int status, const std::string& message) {
  res.status = status;
  // Every 503 is a refusal for now (memory budget, connection caps): tell
  // the client when to retry, whichever check refused it.
  if (status == 503 && !res.has_header("Retry-After")) res.set_header("Retry-After", "1");
  const ServeJson j = {{"error", {{"status", status}, {"message", message}}}};
  res.set_content(j.dump(-1, ' ', false, ServeJson::error_handler_t::replace), "application/json");
}

bool IsChunked(const httplib::Request& req) {
  std::string te = req.get_header_value("Transfer-Encoding");
  for (char& c : te) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return te.find("chunked") != std::string::npos;
}

HeadScan ScanRequestHead(std::string_view bytes, const RequestLimits& limits) {
  HeadScan scan;
  // Line ends seen; the first ends the request line, each further one a
  // header line, until the blank line.
  size_t lines = 0;
  const size_t window = std::min(bytes.size(), limits.max_head_bytes);
  for (size_t i = 0; i + 1 < window; ++i) {
    if (bytes[i] != '\r' || bytes[i + 1] != '\n') continue;
    if (i >= 2 && bytes[i - 2] == '\r' && bytes[i - 1] == '\n') {
      scan.kind = HeadScan::kComplete;
      scan.head_bytes = i + 2;
      return scan;
    }
    if (++lines > limits.max_headers + 1) {
      scan.kind = HeadScan::kTooManyHeaders;
      return scan;
    }
  }
  if (bytes.size() >= limits.max_head_bytes) scan.kind = HeadScan::kTooLarge;
  return scan;
}

std::string HeadErrorMessage(HeadScan::Kind kind, const RequestLimits& limits) {
  if (kind == HeadScan::kTooManyHeaders) {
    return "more than " + std::to_string(limits.max_headers) + " header lines";
  }
  return "the request line and headers are larger than " + std::to_string(limits.max_head_bytes) +
         " bytes";
}

bool ReadRequestBody(const httplib::Request& req, const httplib::ContentReader& reader,
                     const RequestLimits& limits, RequestBudget::Lease* lease,
                     httplib::Response& res, std::string* body) {
  if (req.is_multipart_form_data()) {
    res.set_header("Connection", "close");
    SetError(res, 415, "the body must be JSON, not multipart/form-data");
    return false;
  }
  // A Content-Length is charged whole before a byte is read (httplib
  // refuses one above max_body_bytes itself: 413); a chunked body as it
  // grows, by the string's capacity.
  bool over_budget = false;
  if (req.has_header("Content-Length")) {
    const unsigned long long length =
        std::strtoull(req.get_header_value("Content-Length").c_str(), nullptr, 10);
    if (length <= limits.max_body_bytes) {
      if (!TakeFrom(lease, length)) {
        over_budget = true;
      } else {
        body->reserve(length);
      }
    }
  }
  bool too_large = false;
  const bool read = !over_budget && reader([&](const char* data, size_t n) {
    if (n > limits.max_body_bytes - body->size()) {
      too_large = true;
      return false;  // stop reading: the rest is never held
    }
    if (body->size() + n > body->capacity()) {
      const size_t want =
          std::min(limits.max_body_bytes, std::max(body->size() + n, 2 * body->capacity()));
      if (!TakeFrom(lease, want - std::min(want, HeldBy(lease)))) {
        over_budget = true;
        return false;
      }
      body->reserve(want);
    }
    body->append(data, n);
    return true;
  });
  if (read) return true;
  if (!too_large && !over_budget && req.has_header("Content-Length") &&
      std::strtoull(req.get_header_value("Content-Length").c_str(), nullptr, 10) >
          limits.max_body_bytes) {
    too_large = true;
  }
  res.set_header("Connection", "close");
  if (too_large) {
    SetError(res, 413, "the body is larger than --max-body-bytes");
  } else if (over_budget) {
    SetError(res, 503,
             "the requests in flight hold the server's request memory (--max-request-memory); "
             "retry later");
  } else {
    SetError(res, 400, "cannot read the request body (malformed framing or a timeout)");
  }
  return false;
}

namespace {

// nlohmann's own DOM builder, refusing a value deeper than the limit or
// beyond the count before it is built, and charging what it builds to the
// lease. sax_parse calls these members on this type (a template), so the
// base's are hidden, not overridden.
class BoundedDomParser : public nlohmann::detail::json_sax_dom_parser<ServeJson> {
  using Base = nlohmann::detail::json_sax_dom_parser<ServeJson>;

 public:
  using string_t = ServeJson::string_t;
  using binary_t = ServeJson::binary_t;
  using number_integer_t = ServeJson::number_integer_t;
  using number_unsigned_t = ServeJson::number_unsigned_t;
  using number_float_t = ServeJson::number_float_t;

  BoundedDomParser(ServeJson& root, const RequestLimits& limits, RequestBudget::Lease* lease)
      : Base(root, /*allow_exceptions_=*/false), limits_(limits), lease_(lease) {}

  bool null() { return Count(0) && Base::null(); }
  bool boolean(bool v) { return Count(0) && Base::boolean(v); }
  bool number_integer(number_integer_t v) { return Count(0) && Base::number_integer(v); }
  bool number_unsigned(number_unsigned_t v) { return Count(0) && Base::number_unsigned(v); }
  bool number_float(number_float_t v, const string_t& s) {
    return Count(0) && Base::number_float(v, s);
  }
  bool string(string_t& v) { return Count(v.size()) && Base::string(v); }
  bool binary(binary_t& v) { return Count(v.size()) && Base::binary(v); }
  bool key(string_t& v) { return Count(v.size()) && Base::key(v); }
  bool start_object(std::size_t n) { return Enter() && Base::start_object(n); }
  bool end_object() {
    --depth_;
    return Base::end_object();
  }
  bool start_array(std::size_t n) { return Enter() && Base::start_array(n); }
  bool end_array() {
    --depth_;
    return Base::end_array();
  }
  template <class Exception>
  bool parse_error(std::size_t position, const std::string& token, const Exception& ex) {
    if (!error_)
      error_ = RequestError{400, std::string("the body is not valid JSON: ") + ex.what()};
    return Base::parse_error(position, token, ex);
  }

  // Charges what is left uncharged; false when the budget is spent.
  bool Flush() {
    if (unpaid_ == 0) return true;
    if (!TakeFrom(lease_, unpaid_)) {
      error_ = RequestError{503,
                            "the requests in flight hold the server's request memory "
                            "(--max-request-memory); retry later"};
      return false;
    }
    unpaid_ = 0;
    return true;
  }
  const std::optional<RequestError>& error() const { return error_; }

 private:
  bool Enter() {
    if (++depth_ > limits_.max_json_depth) {
      error_ = RequestError{400, "the body's JSON is nested deeper than " +
                                     std::to_string(limits_.max_json_depth) + " levels"};
      return false;
    }
    return Count(0);
  }
  bool Count(size_t bytes) {
    if (++values_ > limits_.MaxJsonValues()) {
      error_ =
          RequestError{400, "the body holds more than " + std::to_string(limits_.MaxJsonValues()) +
                                " JSON values (16 per item of --max-batch)"};
      return false;
    }
    unpaid_ += kJsonValueBytes + bytes;
    return unpaid_ < (size_t{1} << 20) || Flush();
  }

  const RequestLimits& limits_;
  RequestBudget::Lease* lease_;
  int depth_ = 0;
  size_t values_ = 0;
  size_t unpaid_ = 0;  // bytes built and not yet taken from the lease
  std::optional<RequestError> error_;
};

}  // namespace

std::optional<RequestError> ParseJsonBody(std::string_view text, const RequestLimits& limits,
                                          RequestBudget::Lease* lease, ServeJson* out) {
  ServeJson root;
  BoundedDomParser parser(root, limits, lease);
  // nlohmann's parser rejects ill-formed UTF-8 inside strings.
  const bool ok = ServeJson::sax_parse(text, &parser, ServeJson::input_format_t::json,
                                       /*strict=*/true) &&
                  parser.Flush();
  if (!ok || parser.is_errored()) {
    if (parser.error()) return parser.error();
    return RequestError{400, "the body is not valid JSON (or not UTF-8)"};
  }
  *out = std::move(root);
  return std::nullopt;
}

}  // namespace neardup::cli
