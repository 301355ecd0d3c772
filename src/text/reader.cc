// Copyright 2026 The neardup Authors.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "neardup/extract.h"
#include "neardup/text.h"
#include "util/utf8.h"

namespace neardup {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// "ls.1", "ls.1.gz", "foo.3pm.gz", "tcl.n": a man page section suffix.
bool LooksLikeManPageName(std::string_view name) {
  const size_t dot = name.rfind('.');
  if (dot == std::string_view::npos || dot + 1 >= name.size()) return false;
  const char c = name[dot + 1];
  if (!((c >= '1' && c <= '9') || c == 'n')) return false;
  for (size_t i = dot + 2; i < name.size(); ++i) {
    if (!(name[i] >= 'a' && name[i] <= 'z')) return false;
  }
  return true;
}

bool LooksLikeRoff(std::string_view text) {
  if (text.starts_with(kUtf8Bom)) text.remove_prefix(kUtf8Bom.size());
  return text.starts_with(".\\\"") || text.starts_with("'\\\"") || text.starts_with(".TH ") ||
         text.starts_with(".so ") || text.starts_with(".Dd ");
}

// A file name as a document id and issue source: unchanged when it is valid
// UTF-8; otherwise every byte outside a valid sequence becomes "\xNN" and every
// backslash "\\", so that two different names never give the same id (and no
// message echoes raw invalid bytes). *escaped tells which case applied.
std::string NameForId(std::string_view name, bool* escaped) {
  *escaped = false;
  for (size_t i = 0; i < name.size();) {
    const size_t len = utf8::SequenceLength(name, i);
    if (len == 0) {
      *escaped = true;
      break;
    }
    i += len;
  }
  if (!*escaped) return std::string(name);
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (size_t i = 0; i < name.size();) {
    const size_t len = utf8::SequenceLength(name, i);
    if (len == 0) {
      const auto b = static_cast<unsigned char>(name[i]);
      out += "\\x";
      out += kHex[b >> 4];
      out += kHex[b & 15];
      ++i;
    } else if (name[i] == '\\') {
      out += "\\\\";
      ++i;
    } else {
      out.append(name.substr(i, len));
      i += len;
    }
  }
  return out;
}

// Appends `piece` to *s unless the result would exceed `max_bytes`; never lets
// the capacity grow past `max_bytes` (no doubling beyond the limit).
bool AppendWithinLimit(std::string* s, std::string_view piece, size_t max_bytes) {
  const size_t need = s->size() + piece.size();
  if (need > max_bytes) return false;
  if (need > s->capacity()) s->reserve(std::min(max_bytes, std::max(need, 2 * s->capacity())));
  s->append(piece);
  return true;
}

std::string LimitReason(size_t max_bytes) {
  return "larger than the limit of " + std::to_string(max_bytes) + " bytes (max_document_bytes)";
}

// What PrepareJsonLine found and changed in a JSONL line.
struct JsonLineScan {
  uint64_t lone_surrogates = 0;  // \uD800-style escapes replaced with \uFFFD
  // Top-level keys (decoded) whose value was a number too large for a double
  // and is now a string holding the number's JSON text.
  std::vector<std::pair<std::string, std::string>> overflowed;  // key, number text
};

// The value of the four hex digits at s[i], or -1.
int Hex4(std::string_view s, size_t i) {
  if (i + 4 > s.size()) return -1;
  int v = 0;
  for (size_t k = i; k < i + 4; ++k) {
    const char c = s[k];
    int d;
    if (c >= '0' && c <= '9') {
      d = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      d = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      d = c - 'A' + 10;
    } else {
      return -1;
    }
    v = v * 16 + d;
  }
  return v;
}

// The length of the JSON number at s[i] (RFC 8259 grammar), or 0.
size_t JsonNumberLength(std::string_view s, size_t i) {
  const size_t start = i;
  auto digit = [&](size_t j) { return j < s.size() && s[j] >= '0' && s[j] <= '9'; };
  if (i < s.size() && s[i] == '-') ++i;
  if (!digit(i)) return 0;
  if (s[i] == '0') {
    ++i;
  } else {
    while (digit(i)) ++i;
  }
  if (i < s.size() && s[i] == '.') {
    if (!digit(i + 1)) return 0;
    ++i;
    while (digit(i)) ++i;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    size_t j = i + 1;
    if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
    if (!digit(j)) return 0;
    i = j;
    while (digit(i)) ++i;
  }
  return i - start;
}

// One pass over a JSONL line, before nlohmann parses it, for what would make
// the parser throw or recurse:
//  - nesting deeper than kMaxJsonNesting: the line is refused (*reason set,
//    false returned), so that no recursive dump or copy meets attacker depth;
//  - a lone surrogate escape (\uD800 without its pair): becomes \uFFFD (same
//    length, in place) and is counted;
//  - a number too large for a double (1e400): becomes a string holding its
//    JSON text, so that the rest of the line is kept (an id or extra field
//    keeps the number's text; the caller refuses it as text or title).
bool PrepareJsonLine(std::string* line, JsonLineScan* scan, std::string* reason) {
  std::string& s = *line;
  std::vector<std::pair<size_t, size_t>> quote;       // number spans to put in quotes
  std::vector<std::pair<size_t, size_t>> quote_keys;  // the key of each (raw span; npos: none)
  std::string open;  // the containers around position i: '{' and '['
  char prev = ' ';   // the last character outside strings that is not white space
  size_t key_begin = std::string::npos, key_end = 0;  // the last top-level key
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
    const bool in_object = !open.empty() && open.back() == '{';
    if (c == '"') {
      const size_t begin = i + 1;
      for (++i; i < s.size() && s[i] != '"'; ++i) {
        if (s[i] != '\\') continue;
        if (i + 1 >= s.size()) break;
        ++i;
        const int cp = s[i] == 'u' ? Hex4(s, i + 1) : -1;
        if (cp < 0) continue;
        if (cp >= 0xD800 && cp <= 0xDBFF && i + 6 < s.size() && s[i + 5] == '\\' &&
            s[i + 6] == 'u') {
          const int lo = Hex4(s, i + 7);
          if (lo >= 0xDC00 && lo <= 0xDFFF) {
            i += 10;  // a valid pair
            continue;
          }
        }
        if (cp >= 0xD800 && cp <= 0xDFFF) {
          s.replace(i + 1, 4, "FFFD");
          ++scan->lone_surrogates;
        }
        i += 4;
      }
      if (open.size() == 1 && in_object && (prev == '{' || prev == ',')) {
        key_begin = begin;
        key_end = i;
      }
      prev = '"';
      continue;
    }
    if (c == '{' || c == '[') {
      open += c;
      if (open.size() > kMaxJsonNesting) {
        *reason = "nested deeper than " + std::to_string(kMaxJsonNesting) + " levels";
        return false;
      }
    } else if (c == '}' || c == ']') {
      if (!open.empty()) open.pop_back();
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      const size_t len = JsonNumberLength(s, i);
      if (len == 0) {
        prev = c;
        continue;
      }
      const std::string_view number = std::string_view(s).substr(i, len);
      // Only a value can be quoted (a number in a key's place stays an error),
      // and only an exponent or more than 308 digits can overflow a double.
      const bool value = prev == ':' || (!in_object && (prev == '[' || prev == ','));
      if (value && (len > 308 || number.find_first_of("eE") != std::string_view::npos)) {
        const double v = std::strtod(std::string(number).c_str(), nullptr);
        if (std::isinf(v)) {
          quote.emplace_back(i, len);
          quote_keys.emplace_back(open.size() == 1 && in_object ? key_begin : std::string::npos,
                                  key_end);
        }
      }
      i += len - 1;
    }
    prev = c;
  }
  if (quote.empty()) return true;
  std::string out;
  out.reserve(s.size() + 2 * quote.size());
  size_t pos = 0;
  for (size_t q = 0; q < quote.size(); ++q) {
    const auto [at, len] = quote[q];
    out.append(s, pos, at - pos);
    out += '"';
    out.append(s, at, len);
    out += '"';
    pos = at + len;
    const auto [kb, ke] = quote_keys[q];
    if (kb == std::string::npos) continue;
    try {
      scan->overflowed.emplace_back(
          nlohmann::json::parse("\"" + s.substr(kb, ke - kb) + "\"").get<std::string>(),
          s.substr(at, len));
    } catch (const nlohmann::json::exception&) {
      // A bad key: the parse of the whole line reports it.
    }
  }
  out.append(s, pos, std::string::npos);
  s = std::move(out);
  return true;
}

// nlohmann's e.what() is "[json.exception.parse_error.101] parse error at
// line 1, column 7: ...": the part after the bracket, with anything that is not
// valid UTF-8 escaped.
std::string JsonErrorReason(const nlohmann::json::exception& e) {
  const std::string what = e.what();
  const size_t at = what.find("] ");
  bool escaped;
  return NameForId(at == std::string::npos ? what : what.substr(at + 2), &escaped);
}

// A file opened through zlib: gzread reads gzip and plain files alike.
class GzFile {
 public:
  GzFile() = default;
  GzFile(const GzFile&) = delete;
  GzFile& operator=(const GzFile&) = delete;
  ~GzFile() { Close(); }

  // Returns an empty string on success, else the reason. `walked`: the path
  // was found by walking a directory, and anything but a regular file is
  // refused without blocking (a FIFO would wait for a writer forever). A
  // named character or block device is refused too (/dev/zero never ends);
  // a named FIFO and standard input are read.
  std::string Open(const std::string& path, bool walked) {
    Close();
    int fd;
    if (path == "-") {
      fd = dup(STDIN_FILENO);
    } else {
      fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | (walked ? O_NONBLOCK : 0));
    }
    if (fd < 0) return std::strerror(errno);
    struct stat st;
    if (fstat(fd, &st) != 0) {
      const std::string reason = std::strerror(errno);
      ::close(fd);
      return reason;
    }
    std::string refused;
    if (S_ISDIR(st.st_mode)) {
      refused = "is a directory";
    } else if (path != "-" && (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))) {
      refused = S_ISCHR(st.st_mode) ? "is a character device, not a file"
                                    : "is a block device, not a file";
    } else if (walked && !S_ISREG(st.st_mode)) {
      refused = "not a regular file";
    }
    if (!refused.empty()) {
      ::close(fd);
      return refused;
    }
    if (walked) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    file_ = gzdopen(fd, "rb");
    if (file_ == nullptr) {
      ::close(fd);
      return "cannot open (out of memory)";
    }
    gzbuffer(file_, 1 << 17);
    return "";
  }

  void Close() {
    if (file_ != nullptr) gzclose(file_);
    file_ = nullptr;
    buffer_.clear();
    start_ = 0;
    eof_ = false;
    error_.clear();
    dropped_partial_line_ = false;
  }

  // Reads one line without its '\n' (and without a final '\r') into *line.
  // Returns false at the end of the file; *error is set on a read error (then
  // an incomplete last line is not returned: dropped_partial_line()). A line
  // longer than `max_bytes` is consumed and reported as *too_long.
  bool ReadLine(std::string* line, size_t max_bytes, bool* too_long, std::string* error) {
    line->clear();
    *too_long = false;
    for (;;) {
      const size_t nl = buffer_.find('\n', start_);
      if (nl != std::string::npos) {
        AppendBounded(line, std::string_view(buffer_).substr(start_, nl - start_), max_bytes,
                      too_long);
        start_ = nl + 1;
        if (!line->empty() && line->back() == '\r') line->pop_back();
        return true;
      }
      AppendBounded(line, std::string_view(buffer_).substr(start_), max_bytes, too_long);
      buffer_.clear();
      start_ = 0;
      if (!Fill()) {
        if (!error_.empty()) {
          *error = error_;
          dropped_partial_line_ = !line->empty() || *too_long;
          line->clear();
          return false;
        }
        if (!line->empty() && line->back() == '\r') line->pop_back();
        return !line->empty() || *too_long;
      }
    }
  }

  // True when the last ReadLine failed in the middle of a line.
  bool dropped_partial_line() const { return dropped_partial_line_; }

  // Reads the whole (rest of the) file; fails past `max_bytes`, before
  // allocating more than that.
  bool ReadAll(std::string* out, size_t max_bytes, std::string* error) {
    out->clear();
    std::string chunk(1 << 16, '\0');
    std::string_view piece = std::string_view(buffer_).substr(start_);
    for (;;) {
      if (!AppendWithinLimit(out, piece, max_bytes)) {
        *error = LimitReason(max_bytes);
        return false;
      }
      const size_t n = ReadChunk(chunk.data(), chunk.size());
      if (n == 0) break;
      piece = std::string_view(chunk).substr(0, n);
    }
    buffer_.clear();
    start_ = 0;
    *error = error_;
    return error_.empty();
  }

  // The first byte of the (rest of the) file that is not white space (a
  // leading UTF-8 byte order mark is skipped too), read ahead without
  // consuming anything; -1 at the end, on an error, or after `max_bytes` of
  // white space.
  int PeekNonBlank(size_t max_bytes) {
    while (buffer_.size() - start_ < kUtf8Bom.size() && Fill()) {
    }
    size_t off =
        std::string_view(buffer_).substr(start_).starts_with(kUtf8Bom) ? kUtf8Bom.size() : 0;
    for (;;) {
      for (; start_ + off < buffer_.size(); ++off) {
        const char c = buffer_[start_ + off];
        if (c != ' ' && c != '\t' && c != '\r' && c != '\n') return static_cast<unsigned char>(c);
      }
      if (off > max_bytes || !Fill()) return -1;
    }
  }

 private:
  static void AppendBounded(std::string* line, std::string_view piece, size_t max_bytes,
                            bool* too_long) {
    if (*too_long) return;
    if (!AppendWithinLimit(line, piece, max_bytes)) {
      *too_long = true;
      line->clear();
      line->shrink_to_fit();
    }
  }

  // Reads up to `size` bytes; 0 at the end of the file, where error_ tells
  // whether the end is an error: a read error, corrupt data, or a gzip
  // stream cut short (zlib's Z_BUF_ERROR once the file is exhausted).
  size_t ReadChunk(char* dst, size_t size) {
    if (eof_) return 0;
    const int n = gzread(file_, dst, static_cast<unsigned>(size));
    int errnum = Z_OK;
    if (n < 0) {
      error_ = gzerror(file_, &errnum);
      eof_ = true;
      return 0;
    }
    if (n == 0) {
      eof_ = true;
      gzerror(file_, &errnum);
      if (errnum == Z_BUF_ERROR) error_ = "truncated gzip stream (unexpected end of file)";
    }
    return static_cast<size_t>(n);
  }

  // Appends the next block of the file to what is not consumed yet; false at
  // the end.
  bool Fill() {
    buffer_.erase(0, start_);
    start_ = 0;
    const size_t old = buffer_.size();
    buffer_.resize(old + (1 << 17));
    const size_t n = ReadChunk(buffer_.data() + old, 1 << 17);
    buffer_.resize(old + n);
    return n > 0;
  }

  gzFile file_ = nullptr;
  std::string buffer_;
  size_t start_ = 0;
  bool eof_ = false;
  std::string error_;  // why the end came early; empty at a clean end
  bool dropped_partial_line_ = false;
};

class DocumentReaderImpl final : public DocumentReader {
 public:
  DocumentReaderImpl(std::vector<std::string> inputs, ReadOptions options)
      : options_(std::move(options)) {
    for (std::string& in : inputs) pending_.push_back({std::move(in), true});
  }

  bool Next(Document* doc) override {
    for (;;) {
      if (file_open_) {
        if (ReadFromCurrent(doc)) return true;
        file_.Close();
        file_open_ = false;
        continue;
      }
      if (pending_.empty()) return false;
      Pending next = std::move(pending_.front());
      pending_.pop_front();
      OpenPath(next);
    }
  }

  const InputStats& stats() const override { return stats_; }

 private:
  struct Pending {
    std::string path;
    bool named;  // given by the user, not found by walking a directory
  };

  void Report(InputIssue::Kind kind, const std::string& source, uint64_t line, std::string reason) {
    switch (kind) {
      case InputIssue::Kind::kUnreadable:
        ++stats_.unreadable;
        break;
      case InputIssue::Kind::kMalformedLine:
        ++stats_.malformed;
        break;
      case InputIssue::Kind::kMissingField:
        ++stats_.missing_field;
        break;
      case InputIssue::Kind::kInvalidUtf8:
        ++stats_.invalid_utf8;
        break;
      case InputIssue::Kind::kNulBytes:
        ++stats_.nul_bytes;
        break;
      case InputIssue::Kind::kSkipped:
        ++stats_.skipped;
        break;
    }
    if (options_.on_issue) options_.on_issue(InputIssue{kind, source, line, std::move(reason)});
  }

  // Opens a file, or queues a directory's entries in name order.
  void OpenPath(const Pending& p) {
    bool escaped = false;
    const std::string name = NameForId(p.path, &escaped);
    if (p.path != "-") {
      std::error_code ec;
      const fs::file_status link_status = fs::symlink_status(p.path, ec);
      if (!p.named && !ec && fs::is_symlink(link_status)) {
        Report(InputIssue::Kind::kSkipped, name, 0,
               "symbolic link skipped while walking a directory (name it to read it)");
        return;
      }
      const fs::file_status status = fs::status(p.path, ec);
      if (ec) {
        Report(InputIssue::Kind::kUnreadable, name, 0, ec.message());
        return;
      }
      if (fs::is_directory(status)) {
        std::vector<std::string> entries;
        fs::directory_iterator it(p.path, ec);
        if (ec) {
          Report(InputIssue::Kind::kUnreadable, name, 0, ec.message());
          return;
        }
        for (; it != fs::directory_iterator(); it.increment(ec)) {
          if (ec) break;
          entries.push_back(it->path().string());
        }
        if (ec) Report(InputIssue::Kind::kUnreadable, name, 0, ec.message());
        std::sort(entries.begin(), entries.end());
        for (auto e = entries.rbegin(); e != entries.rend(); ++e) {
          pending_.push_front({*e, false});
        }
        return;
      }
      if (!p.named && !fs::is_regular_file(status)) {
        // Opening a FIFO would wait for a writer; a device may never end.
        Report(InputIssue::Kind::kSkipped, name, 0,
               "not a regular file (FIFO, socket or device) skipped while walking a directory");
        return;
      }
    }
    const std::string error = file_.Open(p.path, /*walked=*/!p.named);
    if (!error.empty()) {
      Report(InputIssue::Kind::kUnreadable, name, 0, error);
      return;
    }
    ++stats_.files;
    file_open_ = true;
    source_ = name;
    line_ = 0;
    format_ = ResolveFormat(p.path);
    if (escaped) {
      Report(InputIssue::Kind::kInvalidUtf8, source_, 0,
             "the file name is not valid UTF-8: its documents' ids and source write the invalid "
             "bytes as \\xNN (and \\ as \\\\)");
    }
  }

  InputFormat ResolveFormat(const std::string& path) const {
    if (options_.format != InputFormat::kAuto) return options_.format;
    if (path == "-") return InputFormat::kAuto;  // decided by content on the first read
    std::string name = Lower(fs::path(path).filename().string());
    if (EndsWith(name, ".gz")) name.resize(name.size() - 3);
    if (EndsWith(name, ".jsonl") || EndsWith(name, ".ndjson")) return InputFormat::kJsonl;
    if (LooksLikeManPageName(name)) return InputFormat::kRoff;
    return InputFormat::kText;  // may still turn out to be roff by content
  }

  // Produces the next document of the open file, or returns false at its end.
  bool ReadFromCurrent(Document* doc) {
    std::string error;
    if (format_ == InputFormat::kJsonl || format_ == InputFormat::kLines) {
      return ReadLineDocument(doc);
    }
    if (format_ == InputFormat::kAuto) {
      // Standard input with --input-format auto: JSONL if it starts with '{',
      // read line by line like a file (never the whole stream at once).
      if (file_.PeekNonBlank(options_.max_document_bytes) == '{') {
        format_ = InputFormat::kJsonl;
        return ReadLineDocument(doc);
      }
      format_ = InputFormat::kText;
    }
    // One document per file (text or roff).
    std::string content;
    if (!file_.ReadAll(&content, options_.max_document_bytes, &error)) {
      Report(InputIssue::Kind::kUnreadable, source_, 0, error);
      return false;
    }
    if (options_.format == InputFormat::kAuto && source_ != "-") {
      // .docx and .pdf: their text, through libzip + pugixml and poppler.
      const DocumentKind kind = DetectDocumentKind(source_, content);
      if (kind != DocumentKind::kPlainText) {
        ExtractOptions extract;
        extract.max_text_bytes = options_.max_document_bytes;
        Result<std::string> text = kind == DocumentKind::kDocx
                                       ? ExtractDocxText(content, extract, source_)
                                       : ExtractPdfText(content, extract, source_);
        if (!text.ok()) {
          Report(InputIssue::Kind::kUnreadable, source_, 0, text.status().message());
          return false;
        }
        content = std::move(*text);
      }
    }
    if (content.starts_with(kUtf8Bom)) content.erase(0, kUtf8Bom.size());
    doc->id = source_;
    doc->title.clear();
    doc->fields.clear();
    doc->source = source_;
    doc->line = 0;
    if (format_ == InputFormat::kRoff ||
        (options_.format == InputFormat::kAuto && LooksLikeRoff(content))) {
      FinishText(RoffToText(content, &doc->title), doc);
    } else {
      if (options_.title_from_first_line) {
        const std::string_view first = std::string_view(content).substr(0, content.find('\n'));
        const size_t b = first.find_first_not_of(" \t\r\f\v");
        const size_t e = first.find_last_not_of(" \t\r\f\v");
        if (b != std::string_view::npos) doc->title = std::string(first.substr(b, e - b + 1));
      }
      FinishText(std::move(content), doc);
    }
    // The file is consumed: the next call moves on.
    format_ = InputFormat::kText;
    file_.Close();
    file_open_ = false;
    return true;
  }

  bool ReadLineDocument(Document* doc) {
    std::string line, error;
    bool too_long = false;
    while (file_.ReadLine(&line, options_.max_document_bytes, &too_long, &error)) {
      ++line_;
      if (too_long) {
        Report(InputIssue::Kind::kUnreadable, source_, line_,
               "line longer than the limit of " + std::to_string(options_.max_document_bytes) +
                   " bytes (max_document_bytes)");
        continue;
      }
      if (line_ == 1 && std::string_view(line).starts_with(kUtf8Bom)) {
        line.erase(0, kUtf8Bom.size());
      }
      if (line.find_first_not_of(" \t") == std::string::npos) continue;  // blank line
      if (format_ == InputFormat::kLines) {
        doc->id = source_ + ":" + std::to_string(line_);
        doc->title.clear();
        doc->fields.clear();
        doc->source = source_;
        doc->line = line_;
        FinishText(std::move(line), doc);
        return true;
      }
      if (ParseJsonLine(&line, doc)) return true;
    }
    if (!error.empty()) {
      if (file_.dropped_partial_line()) {
        Report(InputIssue::Kind::kUnreadable, source_, line_ + 1,
               error + "; the incomplete line is dropped");
      } else {
        Report(InputIssue::Kind::kUnreadable, source_, 0, error);
      }
    }
    return false;
  }

  // Parses one JSONL line into *doc. No nlohmann exception escapes: whatever
  // the parser or a conversion throws drops the line with a reason.
  bool ParseJsonLine(std::string* line, Document* doc) {
    // Invalid UTF-8 inside a string would fail the whole parse: repair it
    // first (it is counted for the document, which is kept).
    const Utf8Repair repair = RepairUtf8(line, /*replace_nul=*/false);
    JsonLineScan scan;
    std::string reason;
    if (!PrepareJsonLine(line, &scan, &reason)) {
      Report(InputIssue::Kind::kMalformedLine, source_, line_, "malformed JSON: " + reason);
      return false;
    }
    try {
      return ParseJsonObject(*line, scan, repair.invalid + scan.lone_surrogates, doc);
    } catch (const nlohmann::json::exception& e) {
      Report(InputIssue::Kind::kMalformedLine, source_, line_,
             "malformed JSON: " + JsonErrorReason(e));
      return false;
    }
  }

  bool ParseJsonObject(const std::string& line, const JsonLineScan& scan, uint64_t replaced,
                       Document* doc) {
    const nlohmann::json object = nlohmann::json::parse(line);
    if (!object.is_object()) {
      Report(InputIssue::Kind::kMalformedLine, source_, line_,
             std::string("expected a JSON object, got ") + object.type_name());
      return false;
    }
    // A number too large for a double arrives as a string holding its text.
    const auto overflowed = [&scan](const std::string& name, const nlohmann::json& value) {
      for (const auto& [key, number] : scan.overflowed) {
        if (key == name && value == number) return true;
      }
      return false;
    };
    const auto text = object.find(options_.text_field);
    if (text == object.end() || !text->is_string() || overflowed(options_.text_field, *text)) {
      Report(
          InputIssue::Kind::kMissingField, source_, line_,
          text == object.end() ? "no \"" + options_.text_field + "\" field"
          : text->is_string()
              ? "field \"" + options_.text_field + "\" is a number out of range, not a string"
              : "field \"" + options_.text_field + "\" is " + text->type_name() + ", not a string");
      return false;
    }
    doc->source = source_;
    doc->line = line_;
    doc->id = source_ + ":" + std::to_string(line_);
    const auto id = object.find(options_.id_field);
    if (id != object.end() && !id->is_null()) {
      doc->id = id->is_string() ? id->get<std::string>() : id->dump();
    }
    doc->title.clear();
    const auto title = object.find(options_.title_field);
    if (title != object.end() && title->is_string() && !overflowed(options_.title_field, *title)) {
      doc->title = title->get<std::string>();
    }
    doc->fields.clear();
    for (const std::string& name : options_.extra_fields) {
      const auto f = object.find(name);
      if (f == object.end() || f->is_null()) continue;
      doc->fields[name] = f->is_string() ? f->get<std::string>() : f->dump();
    }
    FinishText(text->get<std::string>(), doc, replaced);
    return true;
  }

  // Repairs and stores the text; reports replaced bytes.
  // `replaced`: invalid sequences already replaced in the document's line.
  void FinishText(std::string text, Document* doc, uint64_t replaced = 0) {
    const Utf8Repair repair = RepairUtf8(&text);
    RepairUtf8(&doc->title);
    if (repair.invalid + replaced > 0) {
      Report(InputIssue::Kind::kInvalidUtf8, source_, doc->line,
             "invalid UTF-8: " + std::to_string(repair.invalid + replaced) +
                 " sequence(s) replaced with U+FFFD in document " + doc->id);
    }
    if (repair.nul > 0) {
      Report(
          InputIssue::Kind::kNulBytes, source_, doc->line,
          std::to_string(repair.nul) + " NUL byte(s) replaced with U+FFFD in document " + doc->id);
    }
    doc->text = std::move(text);
    ++stats_.documents;
    stats_.bytes += doc->text.size();
  }

  ReadOptions options_;
  InputStats stats_;
  std::deque<Pending> pending_;
  GzFile file_;
  bool file_open_ = false;
  std::string source_;
  uint64_t line_ = 0;
  InputFormat format_ = InputFormat::kText;
};

}  // namespace

bool InputIssue::dropped() const {
  return kind == Kind::kUnreadable || kind == Kind::kMalformedLine || kind == Kind::kMissingField;
}

std::string InputIssue::ToString() const {
  std::string out = source;
  if (line > 0) out += ":" + std::to_string(line);
  out += ": ";
  out += reason;
  return out;
}

Result<InputFormat> ParseInputFormat(std::string_view name) {
  if (name == "auto") return InputFormat::kAuto;
  if (name == "jsonl") return InputFormat::kJsonl;
  if (name == "text") return InputFormat::kText;
  if (name == "lines") return InputFormat::kLines;
  if (name == "roff") return InputFormat::kRoff;
  return Status::InvalidArgument("unknown input format '" + std::string(name) +
                                 "' (expected auto, jsonl, text, lines or roff)");
}

Result<std::unique_ptr<DocumentReader>> DocumentReader::Open(std::vector<std::string> inputs,
                                                             ReadOptions options) {
  if (options.text_field.empty()) return Status::InvalidArgument("the text field name is empty");
  if (options.max_document_bytes == 0) {
    return Status::InvalidArgument("max_document_bytes must be positive");
  }
  if (inputs.empty()) inputs.emplace_back("-");
  return std::unique_ptr<DocumentReader>(
      new DocumentReaderImpl(std::move(inputs), std::move(options)));
}

}  // namespace neardup
