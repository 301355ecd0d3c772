// Copyright 2026 The neardup Authors.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "neardup/extract.h"
#include "neardup/text.h"

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

// A file opened through zlib: gzread reads gzip and plain files alike.
class GzFile {
 public:
  GzFile() = default;
  GzFile(const GzFile&) = delete;
  GzFile& operator=(const GzFile&) = delete;
  ~GzFile() { Close(); }

  // Returns an empty string on success, else the reason.
  std::string Open(const std::string& path) {
    Close();
    int fd;
    if (path == "-") {
      fd = dup(STDIN_FILENO);
    } else {
      fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    }
    if (fd < 0) return std::strerror(errno);
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
      ::close(fd);
      return "is a directory";
    }
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
  }

  // Reads one line without its '\n' (and without a final '\r') into *line.
  // Returns false at the end of the file; *error is set on a read error. A
  // line longer than `max_bytes` is consumed and reported as *too_long.
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
      if (eof_ || !Fill(error)) {
        if (!line->empty() && line->back() == '\r') line->pop_back();
        return !line->empty() || *too_long;
      }
    }
  }

  // Reads the whole (rest of the) file; fails past `max_bytes`.
  bool ReadAll(std::string* out, size_t max_bytes, std::string* error) {
    out->assign(buffer_, start_);
    buffer_.clear();
    start_ = 0;
    char chunk[1 << 16];
    while (!eof_) {
      const int n = gzread(file_, chunk, sizeof(chunk));
      if (n < 0) {
        int errnum;
        *error = gzerror(file_, &errnum);
        return false;
      }
      if (n == 0) {
        eof_ = true;
        break;
      }
      out->append(chunk, static_cast<size_t>(n));
      if (out->size() > max_bytes) {
        *error = "larger than the limit of " + std::to_string(max_bytes) + " bytes";
        return false;
      }
    }
    return true;
  }

 private:
  static void AppendBounded(std::string* line, std::string_view piece, size_t max_bytes,
                            bool* too_long) {
    if (*too_long) return;
    if (line->size() + piece.size() > max_bytes) {
      *too_long = true;
      line->clear();
      line->shrink_to_fit();
      return;
    }
    line->append(piece);
  }

  bool Fill(std::string* error) {
    buffer_.resize(1 << 17);
    const int n = gzread(file_, buffer_.data(), static_cast<unsigned>(buffer_.size()));
    if (n < 0) {
      int errnum;
      *error = gzerror(file_, &errnum);
      buffer_.clear();
      eof_ = true;
      return false;
    }
    buffer_.resize(static_cast<size_t>(n));
    if (n == 0) eof_ = true;
    return n > 0;
  }

  gzFile file_ = nullptr;
  std::string buffer_;
  size_t start_ = 0;
  bool eof_ = false;
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
    if (p.path != "-") {
      std::error_code ec;
      const fs::file_status link_status = fs::symlink_status(p.path, ec);
      if (!p.named && !ec && fs::is_symlink(link_status)) {
        Report(InputIssue::Kind::kSkipped, p.path, 0,
               "symbolic link skipped while walking a directory (name it to read it)");
        return;
      }
      const fs::file_status status = fs::status(p.path, ec);
      if (ec) {
        Report(InputIssue::Kind::kUnreadable, p.path, 0, ec.message());
        return;
      }
      if (fs::is_directory(status)) {
        std::vector<std::string> entries;
        fs::directory_iterator it(p.path, ec);
        if (ec) {
          Report(InputIssue::Kind::kUnreadable, p.path, 0, ec.message());
          return;
        }
        for (; it != fs::directory_iterator(); it.increment(ec)) {
          if (ec) break;
          entries.push_back(it->path().string());
        }
        if (ec) Report(InputIssue::Kind::kUnreadable, p.path, 0, ec.message());
        std::sort(entries.begin(), entries.end());
        for (auto e = entries.rbegin(); e != entries.rend(); ++e) {
          pending_.push_front({*e, false});
        }
        return;
      }
    }
    const std::string error = file_.Open(p.path);
    if (!error.empty()) {
      Report(InputIssue::Kind::kUnreadable, p.path, 0, error);
      return;
    }
    ++stats_.files;
    file_open_ = true;
    source_ = p.path;
    line_ = 0;
    format_ = ResolveFormat(p.path);
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
    // One document per file (text, roff, or standard input still undecided).
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
    if (format_ == InputFormat::kAuto) {
      // Standard input with --input-format auto: JSONL if it starts with '{'.
      const size_t first = content.find_first_not_of(" \t\r\n");
      if (first != std::string::npos && content[first] == '{') {
        return ReadJsonlFromBuffer(std::move(content), doc);
      }
      format_ = InputFormat::kText;
    }
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

  // Standard input in auto mode turned out to be JSONL: parse from memory.
  bool ReadJsonlFromBuffer(std::string content, Document* doc) {
    buffered_lines_ = std::move(content);
    buffered_pos_ = 0;
    format_ = InputFormat::kJsonl;
    use_buffer_ = true;
    return ReadLineDocument(doc);
  }

  bool NextLine(std::string* line, bool* too_long, std::string* error) {
    if (!use_buffer_) return file_.ReadLine(line, options_.max_document_bytes, too_long, error);
    *too_long = false;
    if (buffered_pos_ >= buffered_lines_.size()) {
      use_buffer_ = false;
      buffered_lines_.clear();
      return false;
    }
    size_t nl = buffered_lines_.find('\n', buffered_pos_);
    if (nl == std::string::npos) nl = buffered_lines_.size();
    line->assign(buffered_lines_, buffered_pos_, nl - buffered_pos_);
    buffered_pos_ = nl + 1;
    if (!line->empty() && line->back() == '\r') line->pop_back();
    return true;
  }

  bool ReadLineDocument(Document* doc) {
    std::string line, error;
    bool too_long = false;
    while (NextLine(&line, &too_long, &error)) {
      ++line_;
      if (too_long) {
        Report(InputIssue::Kind::kUnreadable, source_, line_,
               "line longer than the limit of " + std::to_string(options_.max_document_bytes) +
                   " bytes");
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
      if (ParseJsonLine(line, doc)) return true;
    }
    if (!error.empty()) Report(InputIssue::Kind::kUnreadable, source_, line_, error);
    return false;
  }

  bool ParseJsonLine(const std::string& line, Document* doc) {
    nlohmann::json object;
    try {
      object = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error& e) {
      // e.what() is "[json.exception.parse_error.101] parse error at line 1, column 7: ...".
      std::string what = e.what();
      const size_t at = what.find("] ");
      Report(InputIssue::Kind::kMalformedLine, source_, line_,
             "malformed JSON: " + (at == std::string::npos ? what : what.substr(at + 2)));
      return false;
    }
    if (!object.is_object()) {
      Report(InputIssue::Kind::kMalformedLine, source_, line_,
             std::string("expected a JSON object, got ") + object.type_name());
      return false;
    }
    const auto text = object.find(options_.text_field);
    if (text == object.end() || !text->is_string()) {
      Report(InputIssue::Kind::kMissingField, source_, line_,
             text == object.end() ? "no \"" + options_.text_field + "\" field"
                                  : "field \"" + options_.text_field + "\" is " +
                                        text->type_name() + ", not a string");
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
    if (title != object.end() && title->is_string()) doc->title = title->get<std::string>();
    doc->fields.clear();
    for (const std::string& name : options_.extra_fields) {
      const auto f = object.find(name);
      if (f == object.end() || f->is_null()) continue;
      doc->fields[name] = f->is_string() ? f->get<std::string>() : f->dump();
    }
    FinishText(text->get<std::string>(), doc);
    return true;
  }

  // Repairs and stores the text; reports replaced bytes.
  void FinishText(std::string text, Document* doc) {
    const Utf8Repair repair = RepairUtf8(&text);
    RepairUtf8(&doc->title);
    if (repair.invalid > 0) {
      Report(InputIssue::Kind::kInvalidUtf8, source_, doc->line,
             "invalid UTF-8: " + std::to_string(repair.invalid) +
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
  bool use_buffer_ = false;
  std::string buffered_lines_;
  size_t buffered_pos_ = 0;
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
