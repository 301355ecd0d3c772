// Copyright 2026 The neardup Authors.

#include "extract/pdf_scan.h"

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

namespace neardup::pdf_internal {
namespace {

bool IsWhite(unsigned char c) {
  return c == 0 || c == '\t' || c == '\n' || c == '\f' || c == '\r' || c == ' ';
}

bool IsDelimiter(unsigned char c) {
  return c == '(' || c == ')' || c == '<' || c == '>' || c == '[' || c == ']' || c == '{' ||
         c == '}' || c == '/' || c == '%';
}

// Content-stream tokenizer that only cares about the operators q, Q and ID
// (inline image data, skipped to EI). Bytes arrive in chunks; the state
// survives between them. Strings, hex strings, names and comments cannot
// hold operators, so they are stepped over.
class DepthTracker {
 public:
  explicit DepthTracker(int limit) : limit_(limit) {}

  // False once the depth exceeded the limit.
  bool Feed(const unsigned char* p, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      if (!Step(p[i])) return false;
    }
    return true;
  }

  // The end of a stream ends its last token.
  bool EndStream() {
    const bool ok = EndToken();
    state_ = State::kNormal;
    return ok;
  }

  int max_depth() const { return max_depth_; }

 private:
  enum class State { kNormal, kComment, kString, kHexOrDict, kHexString, kInlineData };

  bool Step(unsigned char c) {
    switch (state_) {
      case State::kComment:
        if (c == '\n' || c == '\r') state_ = State::kNormal;
        return true;
      case State::kString:
        if (escape_) {
          escape_ = false;
        } else if (c == '\\') {
          escape_ = true;
        } else if (c == '(') {
          ++paren_depth_;
        } else if (c == ')' && --paren_depth_ == 0) {
          state_ = State::kNormal;
        }
        return true;
      case State::kHexOrDict:  // after '<': "<<" opens a dictionary
        state_ = c == '<' ? State::kNormal : State::kHexString;
        if (c == '>') state_ = State::kNormal;  // "<>": an empty string
        return true;
      case State::kHexString:
        if (c == '>') state_ = State::kNormal;
        return true;
      case State::kInlineData:
        // Inline image data ends at white space, "EI", then white space or
        // a delimiter.
        if ((IsWhite(c) || IsDelimiter(c)) && (history_ & 0xffff) == ('E' << 8 | 'I') &&
            IsWhite(static_cast<unsigned char>(history_ >> 16))) {
          state_ = State::kNormal;
        }
        history_ = history_ << 8 | c;
        return true;
      case State::kNormal:
        break;
    }
    if (!IsWhite(c) && !IsDelimiter(c)) {
      if (token_len_ < sizeof token_) token_[token_len_] = static_cast<char>(c);
      ++token_len_;
      return true;
    }
    if (!EndToken()) return false;
    if (state_ != State::kNormal) return true;  // "ID" began inline data
    switch (c) {
      case '%':
        state_ = State::kComment;
        break;
      case '(':
        state_ = State::kString;
        paren_depth_ = 1;
        escape_ = false;
        break;
      case '<':
        state_ = State::kHexOrDict;
        break;
      case '/':
        in_name_ = true;  // the regular characters that follow are a name
        break;
      default:
        break;
    }
    return true;
  }

  bool EndToken() {
    const bool name = in_name_;
    in_name_ = false;
    const size_t len = token_len_;
    token_len_ = 0;
    if (name || len == 0) return true;
    if (len == 1 && token_[0] == 'q') {
      if (++depth_ > max_depth_) max_depth_ = depth_;
      return depth_ <= limit_;
    }
    if (len == 1 && token_[0] == 'Q') {
      if (depth_ > 0) --depth_;
    } else if (len == 2 && token_[0] == 'I' && token_[1] == 'D') {
      // The single white-space byte after ID is the one that ended it.
      state_ = State::kInlineData;
      history_ = 0;
    }
    return true;
  }

  const int limit_;
  State state_ = State::kNormal;
  char token_[2] = {0, 0};
  size_t token_len_ = 0;
  bool in_name_ = false;
  bool escape_ = false;
  int paren_depth_ = 0;
  uint32_t history_ = 0;
  int depth_ = 0;
  int max_depth_ = 0;
};

// A zlib header: compression method 8 and a check value divisible by 31.
bool LooksLikeZlib(std::string_view data) {
  if (data.size() < 2) return false;
  const unsigned cmf = static_cast<unsigned char>(data[0]);
  const unsigned flg = static_cast<unsigned char>(data[1]);
  return (cmf & 0x0f) == 8 && (cmf >> 4) <= 7 && (cmf << 8 | flg) % 31 == 0;
}

// The data of the stream whose keyword "stream" starts at `keyword`: from
// after its end of line to "endstream" (or the end of the file). False when
// `keyword` is not a stream keyword (part of "endstream", or not after a
// dictionary).
bool StreamData(std::string_view pdf, size_t keyword, std::string_view* data) {
  if (keyword >= 3 && pdf.compare(keyword - 3, 3, "end") == 0) return false;
  size_t start = keyword + 6;
  if (start < pdf.size() && pdf[start] == '\r') ++start;
  if (start >= pdf.size() || (pdf[start] != '\n' && pdf[start - 1] != '\r')) return false;
  if (pdf[start] == '\n') ++start;
  // The keyword follows a dictionary's ">>" (and white space).
  size_t j = keyword;
  while (j > 0 && IsWhite(static_cast<unsigned char>(pdf[j - 1]))) --j;
  if (j < 2 || pdf.compare(j - 2, 2, ">>") != 0) return false;
  size_t end = pdf.find("endstream", start);
  if (end == std::string_view::npos) end = pdf.size();
  *data = pdf.substr(start, end - start);
  return true;
}

}  // namespace

Status ScanPdfStreams(std::string_view pdf, uint64_t max_inflated, int max_depth,
                      std::string_view origin, PdfScanStats* stats) {
  PdfScanStats local;
  PdfScanStats& s = stats != nullptr ? *stats : local;
  s = PdfScanStats();
  DepthTracker tracker(max_depth);
  const auto too_deep = [&] {
    return Status::ResourceExhausted(
        std::string(origin) + ": PDF nests graphics states (q operators) deeper than " +
        std::to_string(max_depth) + "; refused before extraction (it would take about " +
        std::to_string(static_cast<uint64_t>(max_depth) >> 10) + " MB or more)");
  };
  const auto too_big = [&] {
    return Status::ResourceExhausted(std::string(origin) +
                                     ": PDF streams decompress to more than the limit of " +
                                     std::to_string(max_inflated) + " bytes");
  };
  std::string out(size_t{1} << 16, '\0');
  for (size_t pos = pdf.find("stream"); pos != std::string_view::npos;
       pos = pdf.find("stream", pos + 6)) {
    std::string_view data;
    if (!StreamData(pdf, pos, &data)) continue;
    if (!LooksLikeZlib(data)) {
      // Unfiltered (or under a filter this scan does not decode): scanned as
      // it is. Binary data moves the depth by a short random walk only.
      ++s.streams_skipped;
      s.bytes_scanned += data.size();
      if (!tracker.Feed(reinterpret_cast<const unsigned char*>(data.data()), data.size()) ||
          !tracker.EndStream()) {
        s.max_depth = tracker.max_depth();
        return too_deep();
      }
      continue;
    }
    ++s.streams_scanned;
    z_stream z;
    std::memset(&z, 0, sizeof z);
    if (inflateInit(&z) != Z_OK)
      return Status::ResourceExhausted(std::string(origin) +
                                       ": zlib could not start (out of memory)");
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    z.avail_in = static_cast<uInt>(std::min<size_t>(data.size(), UINT32_MAX));
    int rc = Z_OK;
    bool ok = true;
    bool over = false;
    while (rc == Z_OK) {
      z.next_out = reinterpret_cast<Bytef*>(out.data());
      z.avail_out = static_cast<uInt>(out.size());
      rc = inflate(&z, Z_NO_FLUSH);
      const size_t produced = out.size() - z.avail_out;
      if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) break;  // corrupt: stop
      s.bytes_scanned += produced;
      if (s.bytes_scanned > max_inflated) {
        over = true;
        break;
      }
      if (!tracker.Feed(reinterpret_cast<const unsigned char*>(out.data()), produced)) {
        ok = false;
        break;
      }
      if (rc == Z_BUF_ERROR) break;  // input exhausted before the end
    }
    inflateEnd(&z);
    if (over) return too_big();
    if (!ok || !tracker.EndStream()) {
      s.max_depth = tracker.max_depth();
      return too_deep();
    }
  }
  s.max_depth = tracker.max_depth();
  return Status::OK();
}

}  // namespace neardup::pdf_internal
