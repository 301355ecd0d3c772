// Copyright 2026 The neardup Authors.
//
// DocumentReader: walks the inputs, opens each as an InputFile
// (input_file.h), decides its format and turns it into documents (a JSONL
// line through json_line.h, a line, or the whole file), reporting every
// input problem as an InputIssue.

#include <unicode/ucsdet.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "neardup/extract.h"
#include "neardup/text.h"
#include "text/compression.h"
#include "text/input_file.h"
#include "text/json_line.h"
#include "util/utf8.h"

namespace neardup {
namespace {

namespace fs = std::filesystem;

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
// nlohmann's e.what() is "[json.exception.parse_error.101] parse error at
// line 1, column 7: ...": the part after the bracket, with anything that is not
// valid UTF-8 escaped.
std::string JsonErrorReason(const nlohmann::json::exception& e) {
  const std::string what = e.what();
  const size_t at = what.find("] ");
  bool escaped;
  return NameForId(at == std::string::npos ? what : what.substr(at + 2), &escaped);
}

class DocumentReaderImpl final : public DocumentReader {
 public:
  DocumentReaderImpl(std::vector<std::string> inputs, ReadOptions options)
      : options_(std::move(options)) {
    for (std::string& in : inputs) pending_.push_back({std::move(in), true});
  }

  bool Next(Document* doc) override {
    const bool got = NextDocument(doc);
    stats_.input_bytes = file_.bytes_read_total();
    return got;
  }

  const InputStats& stats() const override { return stats_; }

 private:
  bool NextDocument(Document* doc) {
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

  bool ranged() const { return options_.range_begin != 0 || options_.range_end != UINT64_MAX; }
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
    std::string error = file_.Open(p.path, /*walked=*/!p.named, options_.range_begin);
    if (error.empty() && ranged() && file_.compressed()) {
      error = "a byte range of a compressed file cannot be read";
    }
    // A .docx is a zip archive that is read (extract.h).
    const std::string_view archive = file_.archive();
    if (error.empty() && !archive.empty() &&
        !(archive == "zip" && options_.format == InputFormat::kAuto &&
          DetectDocumentKind(p.path, "") == DocumentKind::kDocx)) {
      error = ArchiveReason(archive);
    }
    if (error.empty() && ranged() && !options_.encoding.empty()) {
      error = "a byte range of a file read with --encoding cannot be read";
    }
    if (error.empty()) error = file_.SetEncoding(options_.encoding);
    if (!error.empty()) {
      Report(InputIssue::Kind::kUnreadable, name, 0, error);
      file_.Close();
      return;
    }
    // The file's start is sampled (a piece of a file read in byte ranges
    // other than the first says nothing).
    encoding_hint_ = options_.encoding.empty() && options_.range_begin == 0
                         ? EncodingHint(file_.Head(1 << 16))
                         : "";
    // A file read in pieces counts once: in its first piece.
    if (options_.range_begin == 0) ++stats_.files;
    file_open_ = true;
    source_ = name;
    path_ = p.path;
    line_ = options_.range_first_line - 1;
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
    // A compressed file's format is its inner name's (the content decides
    // the codec, whatever the name).
    if (EndsWith(name, ".gz")) name.resize(name.size() - 3);
    if (EndsWith(name, ".zst")) name.resize(name.size() - 4);
    if (EndsWith(name, ".xz")) name.resize(name.size() - 3);
    if (EndsWith(name, ".bz2")) name.resize(name.size() - 4);
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
      const int first = file_.PeekNonBlank(options_.max_document_bytes);
      if (first == '{') {
        format_ = InputFormat::kJsonl;
        return ReadLineDocument(doc);
      }
      if (first < 0 && file_.AtCleanEnd()) return false;  // empty (or blank): no document

      format_ = InputFormat::kText;
    }
    // One document per file (text or roff).
    std::string content;
    if (!file_.ReadAll(&content, options_.max_document_bytes, &error)) {
      Report(InputIssue::Kind::kUnreadable, source_, 0, error);
      return false;
    }
    if (file_.compressed() && ArchiveName(content) == "tar") {
      Report(InputIssue::Kind::kUnreadable, source_, 0, ArchiveReason("tar", file_.codec_name()));
      return false;
    }
    DocumentKind kind = DocumentKind::kPlainText;
    if (options_.format == InputFormat::kAuto && source_ != "-") {
      // .docx and .pdf: their text, through libzip + pugixml and poppler.
      kind = DetectDocumentKind(source_, content);
      if (kind != DocumentKind::kPlainText) {
        ExtractOptions extract;
        extract.max_text_bytes = options_.max_document_bytes;
        Result<std::string> text = kind == DocumentKind::kDocx
                                       ? ExtractDocxText(content, extract, source_)
                                       : ExtractPdfText(content, extract, source_);
        if (!text.ok()) {
          // The extractors name the file first; the issue names it already.
          const Status status = text.status();  // a copy: message() views into it
          std::string_view reason = status.message();
          const std::string prefix = source_ + ": ";
          if (reason.starts_with(prefix)) reason.remove_prefix(prefix.size());
          Report(InputIssue::Kind::kUnreadable, source_, 0, std::string(reason));
          return false;
        }
        content = std::move(*text);
      }
    }
    if (content.starts_with(kUtf8Bom)) content.erase(0, kUtf8Bom.size());
    NoteFormat(kind == DocumentKind::kDocx  ? "docx"
               : kind == DocumentKind::kPdf ? "pdf"
               : format_ == InputFormat::kRoff ||
                       (options_.format == InputFormat::kAuto && LooksLikeRoff(content))
                   ? "roff"
                   : "text");
    doc->id = source_;
    doc->title.clear();
    doc->fields.clear();
    doc->source = source_;
    doc->line = 0;
    doc->record.clear();
    if (options_.keep_records) doc->record = path_;
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
    NoteFormat(format_ == InputFormat::kJsonl ? "jsonl" : "lines");
    std::string& line = line_buffer_;  // for lines not whole in the buffer; kept between calls
    std::string error;
    bool too_long = false, endless = false;
    // A line too long is read past (not held) for this many bytes at most.
    const uint64_t skip_bytes = options_.max_document_bytes > UINT64_MAX / kLongLineSkipFactor
                                    ? UINT64_MAX
                                    : options_.max_document_bytes * kLongLineSkipFactor;
    std::string_view view;
    while (options_.range_begin + file_.consumed() < options_.range_end &&
           file_.ReadLineView(&view, &line, options_.max_document_bytes, skip_bytes, &too_long,
                              &endless, &error)) {
      ++line_;
      if (too_long) {
        const std::string reason = "line longer than the limit of " +
                                   std::to_string(options_.max_document_bytes) +
                                   " bytes (max_document_bytes)";
        if (!endless) {
          Report(InputIssue::Kind::kUnreadable, source_, line_, reason);
          continue;
        }
        // Where the next line starts is unknown: the file ends here.
        Report(InputIssue::Kind::kUnreadable, source_, line_,
               reason + " and no line break within " + std::to_string(skip_bytes) +
                   " bytes; the rest of the file is not read");
        return false;
      }
      if (line_ == 1 && view.starts_with(kUtf8Bom)) view.remove_prefix(kUtf8Bom.size());
      if (view.find_first_not_of(" \t\r") == std::string_view::npos) continue;  // blank line
      if (options_.keep_records) {
        doc->record = view;
      } else {
        doc->record.clear();
      }
      if (view.back() == '\r') view.remove_suffix(1);
      if (format_ == InputFormat::kLines) {
        doc->id = source_ + ":" + std::to_string(line_);
        doc->title.clear();
        doc->fields.clear();
        doc->source = source_;
        doc->line = line_;
        FinishText(std::string(view), doc);
        return true;
      }
      if (sampled_records_ < kSampledRecords && sample_tries_ < kSampleTries) SampleFields(view);
      if (ParseJsonLine(view, doc)) return true;
    }
    if (!error.empty()) {
      // Reading stopped at line line_ + 1: inside it (then it is dropped),
      // or before it (a stream cut in its trailer, a read error at a line
      // start).
      Report(InputIssue::Kind::kUnreadable, source_, line_ + 1,
             file_.dropped_partial_line() ? error + "; the incomplete line is dropped" : error);
    }
    return false;
  }

  // Parses one JSONL line into *doc. No nlohmann exception escapes: whatever
  // the parser or a conversion throws drops the line with a reason.
  bool ParseJsonLine(std::string_view view, Document* doc) {
    // The common line (valid UTF-8, nothing for PrepareJsonLine to change):
    // one validating pass, without the two below.
    if (ParseJsonObjectFast(view, JsonLineScan{}, 0, doc, /*strict=*/true)) return true;
    std::string owned(view);
    std::string* line = &owned;
    // Invalid UTF-8 inside a string would fail the whole parse: repair it
    // first (it is counted for the document, which is kept).
    const Utf8Repair repair = RepairUtf8(line, /*replace_nul=*/false);
    JsonLineScan scan;
    std::string reason;
    if (!PrepareJsonLine(line, &scan, &reason)) {
      Report(InputIssue::Kind::kMalformedLine, source_, line_, "malformed JSON: " + reason);
      return false;
    }
    if (ParseJsonObjectFast(*line, scan, repair.invalid + scan.lone_surrogates, doc)) return true;
    try {
      return ParseJsonObject(*line, scan, repair.invalid + scan.lone_surrogates, doc);
    } catch (const nlohmann::json::exception& e) {
      Report(InputIssue::Kind::kMalformedLine, source_, line_,
             "malformed JSON: " + JsonErrorReason(e));
      return false;
    }
  }

  // FastJsonLine's path: true when it took the line (and filled *doc exactly
  // as ParseJsonObject would), false when ParseJsonObject must.
  // `strict`: the line is raw (see FastJsonLine).
  bool ParseJsonObjectFast(std::string_view line, const JsonLineScan& scan, uint64_t replaced,
                           Document* doc, bool strict = false) {
    if (!scan.overflowed.empty() || !options_.extra_fields.empty() ||
        options_.text_field == options_.id_field || options_.text_field == options_.title_field ||
        options_.id_field == options_.title_field) {
      return false;
    }
    FastJsonLine::Member text, id, title;
    FastJsonLine parser(line, strict);
    if (!parser.Parse(options_.text_field, options_.id_field, options_.title_field, &text, &id,
                      &title)) {
      return false;
    }
    const auto dotted = [](const std::string& name, const FastJsonLine::Member& m) {
      return !m.found && name.find('.') != std::string::npos;
    };
    if (!text.found || !text.is_string || dotted(options_.id_field, id) ||
        dotted(options_.title_field, title)) {
      return false;
    }
    if (id.found && !id.is_string && id.raw != "null") return false;  // dump() formatting
    std::string decoded, id_text, title_text;
    if (id.found && id.is_string && !FastJsonLine::Decode(id.raw, &id_text)) return false;
    if (title.found && title.is_string && !FastJsonLine::Decode(title.raw, &title_text)) {
      return false;
    }
    bool nul = false;
    if (!FastJsonLine::Decode(text.raw, &decoded, &nul)) return false;
    doc->source = source_;
    doc->line = line_;
    doc->id = id.found && id.is_string ? std::move(id_text) : source_ + ":" + std::to_string(line_);
    doc->title = std::move(title_text);
    doc->fields.clear();
    // Decoded from a repaired line with no lone surrogate escape: valid UTF-8,
    // and with a NUL only where Decode decoded one.
    FinishText(std::move(decoded), doc, replaced, /*valid_utf8=*/true, /*nul=*/nul);
    return true;
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
    const nlohmann::json* text = FindField(object, options_.text_field);
    if (text == nullptr || !text->is_string() || overflowed(options_.text_field, *text)) {
      Report(
          InputIssue::Kind::kMissingField, source_, line_,
          text == nullptr ? "no \"" + options_.text_field + "\" field"
          : text->is_string()
              ? "field \"" + options_.text_field + "\" is a number out of range, not a string"
              : "field \"" + options_.text_field + "\" is " + text->type_name() + ", not a string");
      return false;
    }
    doc->source = source_;
    doc->line = line_;
    doc->id = source_ + ":" + std::to_string(line_);
    const nlohmann::json* id = FindField(object, options_.id_field);
    if (id != nullptr && !id->is_null()) {
      doc->id = id->is_string() ? id->get<std::string>() : id->dump();
    }
    doc->title.clear();
    const nlohmann::json* title = FindField(object, options_.title_field);
    if (title != nullptr && title->is_string() && !overflowed(options_.title_field, *title)) {
      doc->title = title->get<std::string>();
    }
    doc->fields.clear();
    for (const std::string& name : options_.extra_fields) {
      const nlohmann::json* f = FindField(object, name);
      if (f == nullptr || f->is_null()) continue;
      doc->fields[name] = f->is_string() ? f->get<std::string>() : f->dump();
    }
    FinishText(text->get<std::string>(), doc, replaced);
    return true;
  }

  // InputStats::first_format, from the first file that gets this far.
  void NoteFormat(std::string_view format) {
    if (!stats_.first_format.empty()) return;
    stats_.first_format = format;
    if (file_.compressed()) {
      stats_.first_format += ", ";
      stats_.first_format += file_.codec_name();
    }
  }

  // InputStats::first_fields: the field names of a JSONL line (nested
  // objects' as "outer.inner"), added to those of the lines before. Only the
  // first kSampledRecords lines that are objects take this parse, and no
  // more than kSampleTries lines in all (a file of malformed lines is not
  // parsed twice throughout).
  void SampleFields(std::string_view view) {
    ++sample_tries_;
    std::string line(view);
    RepairUtf8(&line, /*replace_nul=*/false);
    JsonLineScan scan;
    std::string reason;
    if (!PrepareJsonLine(&line, &scan, &reason)) return;  // too deep: malformed anyway
    nlohmann::json object;
    try {
      object = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception&) {
      return;  // malformed: reported by the parse that counts
    }
    if (!object.is_object()) return;
    ++sampled_records_;
    std::vector<std::string>& names = stats_.first_fields;
    const auto add = [&names](std::string name) {
      if (names.size() < kSampledFields &&
          std::find(names.begin(), names.end(), name) == names.end()) {
        names.push_back(std::move(name));
      }
    };
    for (const auto& [key, value] : object.items()) {
      if (!value.is_object() || value.empty()) {
        add(key);
        continue;
      }
      for (const auto& [inner, unused] : value.items()) add(key + "." + inner);
    }
  }
  static constexpr int kSampledRecords = 3;
  static constexpr int kSampleTries = 16;
  static constexpr size_t kSampledFields = 24;

  // Repairs and stores the text; reports replaced bytes.
  // `replaced`: invalid sequences already replaced in the document's line.
  // `valid_utf8`: the text is known to be valid UTF-8 (only NULs may need
  // replacing), so the repair runs only when it holds a NUL; with
  // valid_utf8, `nul` false says it holds none (no scan for one).
  void FinishText(std::string text, Document* doc, uint64_t replaced = 0, bool valid_utf8 = false,
                  bool nul = true) {
    const bool clean = valid_utf8 && (!nul || std::memchr(text.data(), 0, text.size()) == nullptr);
    const Utf8Repair repair = clean ? Utf8Repair{} : RepairUtf8(&text);
    RepairUtf8(&doc->title);
    if (repair.invalid + replaced > 0) {
      Report(InputIssue::Kind::kInvalidUtf8, source_, doc->line,
             "invalid UTF-8: " + std::to_string(repair.invalid + replaced) +
                 " sequence(s) replaced with U+FFFD in document " + doc->id + encoding_hint_);
      encoding_hint_.clear();  // once per file
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

  // When `head` (a file's first bytes) is not UTF-8 and ICU's charset
  // detector takes it for a legacy CJK encoding (confidence >= 50): "; the file looks like NAME
  // (ICU's charset detector, confidence N): --encoding NAME converts it".
  static std::string EncodingHint(std::string_view head) {
    // A multi-byte character cut at the end of the sample is not an error.
    size_t end = head.size();
    for (int i = 0; i < 3 && end > 0 && (static_cast<unsigned char>(head[end - 1]) & 0xC0) == 0x80;
         ++i) {
      --end;
    }
    if (end > 0 && static_cast<unsigned char>(head[end - 1]) >= 0xC0) --end;
    if (utf8::IsValid(head.substr(0, end))) return "";
    UErrorCode status = U_ZERO_ERROR;
    UCharsetDetector* detector = ucsdet_open(&status);
    if (U_FAILURE(status)) return "";
    ucsdet_setText(detector, head.data(), static_cast<int32_t>(head.size()), &status);
    const UCharsetMatch* match = ucsdet_detect(detector, &status);
    std::string hint;
    if (U_SUCCESS(status) && match != nullptr) {
      const char* name = ucsdet_getName(match, &status);
      const int32_t confidence = ucsdet_getConfidence(match, &status);
      // Only the legacy CJK encodings, and only a confident guess: a UTF-8
      // file with a few stray bytes is not "ISO-8859-1".
      static constexpr std::string_view kLegacy[] = {"GB18030",     "Big5",       "EUC-JP",
                                                     "EUC-KR",      "Shift_JIS",  "ISO-2022-CN",
                                                     "ISO-2022-JP", "ISO-2022-KR"};
      if (U_SUCCESS(status) && name != nullptr && confidence >= 50 &&
          std::find(std::begin(kLegacy), std::end(kLegacy), std::string_view(name)) !=
              std::end(kLegacy)) {
        hint = std::string("; the file looks like ") + name +
               " (ICU's charset detector, confidence " + std::to_string(confidence) +
               "): --encoding " + name + " converts it";
      }
    }
    ucsdet_close(detector);
    return hint;
  }

  ReadOptions options_;
  std::string encoding_hint_;  // added to the open file's first invalid UTF-8 report
  InputStats stats_;
  std::deque<Pending> pending_;
  InputFile file_;
  bool file_open_ = false;
  std::string source_;
  std::string path_;  // source_ as given, not escaped
  uint64_t line_ = 0;
  InputFormat format_ = InputFormat::kText;
  std::string line_buffer_;
  int sampled_records_ = 0;  // JSONL lines whose fields are in stats_.first_fields
  int sample_tries_ = 0;     // lines SampleFields has looked at
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
