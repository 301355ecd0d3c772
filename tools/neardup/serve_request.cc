// Copyright 2026 The neardup Authors.

#include "serve_request.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <system_error>

namespace neardup::cli {

namespace {
// Takes `n` bytes from `lease`; no lease: no budget.
bool TakeFrom(RequestBudget::Lease* lease, size_t n) { return lease == nullptr || lease->Take(n); }
size_t HeldBy(const RequestBudget::Lease* lease) { return lease == nullptr ? 0 : lease->bytes(); }
}  // namespace

const char kBudgetSpentMessage[] =
    "the requests in flight hold the server's request memory (--max-request-memory); retry later";

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
    SetError(res, 503, kBudgetSpentMessage);
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
      error_ = RequestError{503, kBudgetSpentMessage};
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

namespace {

// A cursor over a body for ParseFastBatchBody: each step false when the
// text is not for the fast path.
class FastCursor {
 public:
  explicit FastCursor(std::string_view s) : s_(s) {}

  void SkipWs() {
    while (i_ < s_.size() &&
           (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) {
      ++i_;
    }
  }
  bool Eat(char c) {
    SkipWs();
    if (i_ >= s_.size() || s_[i_] != c) return false;
    ++i_;
    return true;
  }
  bool AtEnd() {
    SkipWs();
    return i_ == s_.size();
  }
  bool Peek(char c) {
    SkipWs();
    return i_ < s_.size() && s_[i_] == c;
  }
  // A string at the cursor: *raw its JSON text (quotes included), *decoded
  // the bytes of its value, *escaped whether it holds a backslash.
  bool String(std::string_view* raw, size_t* decoded, bool* escaped) {
    SkipWs();
    if (i_ >= s_.size() || s_[i_] != '"') return false;
    const auto* p = reinterpret_cast<const unsigned char*>(s_.data());
    const size_t n = s_.size();
    const size_t begin = i_;
    size_t i = i_ + 1;
    size_t bytes = 0;
    *escaped = false;
    for (;;) {
      // ASCII other than '"', '\\' and controls, eight bytes at a time.
      while (i + 8 <= n) {
        uint64_t w;
        std::memcpy(&w, p + i, 8);
        constexpr uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
        const auto zero_byte = [](uint64_t x) { return (x - kOnes) & ~x & kHigh; };
        const uint64_t hit = zero_byte(w ^ (kOnes * '"')) | zero_byte(w ^ (kOnes * '\\')) |
                             ((w - kOnes * 0x20) & ~w & kHigh) | (w & kHigh);
        if (hit != 0) {
          const size_t skip = static_cast<size_t>(std::countr_zero(hit)) / 8;
          i += skip;
          bytes += skip;
          break;
        }
        i += 8;
        bytes += 8;
      }
      if (i >= n) return false;
      const unsigned c = p[i];
      if (c == '"') {
        *raw = s_.substr(begin, i + 1 - begin);
        *decoded = bytes;
        i_ = i + 1;
        return true;
      }
      if (c < 0x20) return false;  // nlohmann refuses a raw control character
      if (c == '\\') {
        *escaped = true;
        if (i + 1 >= n) return false;
        const char e = static_cast<char>(p[i + 1]);
        if (e == 'u') {
          unsigned cp = 0;
          for (size_t h = i + 2; h < i + 6; ++h) {
            if (h >= n) return false;
            const char x = static_cast<char>(p[h]);
            const int v = x >= '0' && x <= '9'   ? x - '0'
                          : x >= 'a' && x <= 'f' ? x - 'a' + 10
                          : x >= 'A' && x <= 'F' ? x - 'A' + 10
                                                 : -1;
            if (v < 0) return false;
            cp = cp * 16 + static_cast<unsigned>(v);
          }
          if (cp >= 0xD800 && cp <= 0xDFFF) return false;  // surrogates: nlohmann's rules
          bytes += cp < 0x80 ? 1 : cp < 0x800 ? 2 : 3;
          i += 6;
          continue;
        }
        if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos) return false;
        ++bytes;
        i += 2;
        continue;
      }
      if (c < 0x80) {
        ++i;
        ++bytes;
        continue;
      }
      // A run of three-byte sequences without a special case (CJK text).
      if (c >= 0xE1 && c != 0xED && c <= 0xEF) {
        const size_t run = i;
        while (i + 2 < n && p[i] >= 0xE1 && p[i] != 0xED && p[i] <= 0xEF &&
               (p[i + 1] & 0xC0) == 0x80 && (p[i + 2] & 0xC0) == 0x80) {
          i += 3;
        }
        bytes += i - run;
        if (i != run) continue;
      }
      // UTF-8 as RFC 3629 (nlohmann's check): no overlong form, no
      // surrogate, nothing above U+10FFFF.
      size_t len;
      unsigned lo = 0x80, hi = 0xBF;
      if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
      } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
      } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
      } else {
        return false;
      }
      if (i + len > n || p[i + 1] < lo || p[i + 1] > hi) return false;
      for (size_t k = 2; k < len; ++k) {
        if ((p[i + k] & 0xC0) != 0x80) return false;
      }
      i += len;
      bytes += len;
    }
  }
  // A key without escapes, then the ':' after it.
  bool Key(std::string_view* key) {
    std::string_view raw;
    size_t decoded;
    bool escaped;
    if (!String(&raw, &decoded, &escaped) || escaped || !Eat(':')) return false;
    *key = raw.substr(1, raw.size() - 2);
    return true;
  }
  // Plain digits, no leading zero, at most 9 (a JSON integer nlohmann reads
  // as unsigned).
  bool Digits(long* value) {
    SkipWs();
    size_t j = i_;
    while (j < s_.size() && s_[j] >= '0' && s_[j] <= '9') ++j;
    const size_t len = j - i_;
    if (len == 0 || len > 9 || (len > 1 && s_[i_] == '0')) return false;
    // A fraction or exponent after the digits: a float to nlohmann.
    if (j < s_.size() && (s_[j] == '.' || s_[j] == 'e' || s_[j] == 'E')) return false;
    *value = std::strtol(std::string(s_.substr(i_, len)).c_str(), nullptr, 10);
    i_ = j;
    return true;
  }
  bool Literal(std::string_view word) {
    SkipWs();
    if (s_.substr(i_, word.size()) != word) return false;
    i_ += word.size();
    return true;
  }

 private:
  std::string_view s_;
  size_t i_ = 0;
};

}  // namespace

bool ParseFastBatchBody(std::string_view text, const RequestLimits& limits, FastBatchBody* out) {
  // The body's object, the items' array, an item's object.
  if (limits.max_json_depth < 3) return false;
  FastCursor c(text);
  size_t values = 1;  // the body's object
  size_t charge = kJsonValueBytes;
  bool have_items = false;
  if (!c.Eat('{')) return false;
  do {
    std::string_view key;
    if (!c.Key(&key)) return false;
    ++values;
    charge += kJsonValueBytes + key.size();
    if (key == "documents" || key == "fingerprints") {
      if (have_items) return false;  // both, or one twice
      have_items = true;
      out->documents = key == "documents";
      const std::string_view field = out->documents ? "text" : "fingerprint";
      if (!c.Eat('[')) return false;
      ++values;
      charge += kJsonValueBytes;
      if (!c.Peek(']')) {
        do {
          if (out->items.size() == limits.max_batch) return false;
          FastBatchBody::Item item;
          if (!c.Eat('{')) return false;
          ++values;
          charge += kJsonValueBytes;
          do {
            std::string_view name, raw;
            size_t decoded;
            bool escaped;
            if (!c.Key(&name) || !c.String(&raw, &decoded, &escaped)) return false;
            std::string_view* slot = name == "id"                        ? &item.id
                                     : name == field                     ? &item.value
                                     : name == "title" && out->documents ? &item.title
                                                                         : nullptr;
            if (slot == nullptr || !slot->empty()) return false;  // another key, or twice
            *slot = raw;
            values += 2;
            charge += 2 * kJsonValueBytes + name.size() + decoded;
          } while (c.Eat(','));
          if (!c.Eat('}') || item.value.empty()) return false;
          out->items.push_back(item);
        } while (c.Eat(','));
      }
      if (!c.Eat(']')) return false;
    } else if (key == "k") {
      long k;
      if (out->k || !c.Digits(&k)) return false;
      out->k = k;
      ++values;
      charge += kJsonValueBytes;
    } else if (key == "replace") {
      if (out->replace) return false;
      if (c.Literal("true")) {
        out->replace = true;
      } else if (c.Literal("false")) {
        out->replace = false;
      } else {
        return false;
      }
      ++values;
      charge += kJsonValueBytes;
    } else {
      return false;
    }
  } while (c.Eat(','));
  if (!c.Eat('}') || !c.AtEnd() || !have_items || values > limits.MaxJsonValues()) return false;
  out->charge = charge;
  return true;
}

std::string DecodeFastString(std::string_view raw) {
  raw = raw.substr(1, raw.size() - 2);
  std::string out;
  out.reserve(raw.size());
  for (size_t i = 0; i < raw.size();) {
    const size_t bs = raw.find('\\', i);
    if (bs == std::string_view::npos) {
      out.append(raw.substr(i));
      break;
    }
    out.append(raw.substr(i, bs - i));
    const char e = raw[bs + 1];
    i = bs + 2;
    switch (e) {
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        // Validated: four hex digits, not a surrogate.
        const unsigned cp =
            static_cast<unsigned>(std::stoul(std::string(raw.substr(i, 4)), nullptr, 16));
        i += 4;
        if (cp < 0x80) {
          out += static_cast<char>(cp);
        } else if (cp < 0x800) {
          out += static_cast<char>(0xC0 | (cp >> 6));
          out += static_cast<char>(0x80 | (cp & 0x3F));
        } else {
          out += static_cast<char>(0xE0 | (cp >> 12));
          out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
          out += static_cast<char>(0x80 | (cp & 0x3F));
        }
        break;
      }
      default:  // '"', '\\', '/'
        out += e;
    }
  }
  return out;
}

namespace {

// `s` as a JSON string.
void AppendJsonString(std::string_view s, std::string* out) {
  const bool plain = std::all_of(
      s.begin(), s.end(), [](char c) { return c >= 0x20 && c < 0x7F && c != '"' && c != '\\'; });
  if (!plain) {
    *out += ServeJson(std::string(s)).dump(-1, ' ', false, ServeJson::error_handler_t::replace);
    return;
  }
  *out += '"';
  out->append(s);
  *out += '"';
}

}  // namespace

std::string AccessLogLine(double ts, std::string_view remote, std::string_view method,
                          std::string_view path, int status, size_t bytes_in, size_t bytes_out,
                          const char* error) {
  std::string line;
  line.reserve(160 + path.size());
  char number[64];
  line += "{\"ts\":";
  const auto [end, ec] = std::to_chars(number, number + sizeof(number), ts);
  line.append(number, ec == std::errc() ? end : number);
  line += ",\"remote\":";
  AppendJsonString(remote, &line);
  line += ",\"method\":";
  AppendJsonString(method, &line);
  line += ",\"path\":";
  AppendJsonString(path, &line);
  std::snprintf(number, sizeof(number), ",\"status\":%d,\"bytes_in\":%zu,\"bytes_out\":%zu", status,
                bytes_in, bytes_out);
  line += number;
  if (error != nullptr) {
    line += ",\"error\":";
    AppendJsonString(error, &line);
  }
  line += "}\n";
  return line;
}

}  // namespace neardup::cli
