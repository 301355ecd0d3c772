// Copyright 2026 The neardup Authors.
//
// Documents, the readers that produce them, and text normalization: the first
// two stages of the pipeline (read -> normalize -> segment -> features -> ...).
//
// Reading:
//   neardup::ReadOptions options;            // format auto, fields id/text/title
//   options.on_issue = [](const neardup::InputIssue& i) { std::cerr << i.ToString() << "\n"; };
//   auto reader = neardup::DocumentReader::Open({"corpus.jsonl", "pages/"}, options);
//   if (!reader.ok()) ...;
//   neardup::Document doc;
//   while ((*reader)->Next(&doc)) { ... }
//   const neardup::InputStats& stats = (*reader)->stats();
//
// Bad input never stops a reader and never vanishes: a malformed JSON line, a
// missing field, an unreadable, truncated (compressed) or too large file, or
// an archive (zip, tar, 7z: refused) is reported through `on_issue` (file,
// line, reason) and counted in stats(); invalid UTF-8
// (in JSONL too, with lone surrogate escapes) and NUL bytes are replaced with
// U+FFFD, reported and counted, and the document is still produced. Nothing
// the JSON parser throws escapes, and no recursion depends on the input.
//
// Normalizing:
//   auto norm = neardup::Normalizer::Create({.nfkc_casefold = true, .t2s = "t2s"});
//   std::string clean = (*norm)->Normalize(text);
//
// Thread safety: a DocumentReader is used by one thread. A Normalizer is
// immutable after Create() and may be shared by any number of threads.

#ifndef NEARDUP_TEXT_H_
#define NEARDUP_TEXT_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "neardup/status.h"

namespace neardup {

struct Document {
  // From the id field, or a stable default: the path for a one-document file,
  // "path:line" for a line of a JSONL or lines file ("-" is standard input). A
  // path that is not valid UTF-8 is written with "\xNN" for each invalid byte
  // and "\\" for each backslash (so ids stay distinct); `source` too.
  std::string id;
  std::string text;    // valid UTF-8 (invalid bytes were replaced with U+FFFD)
  std::string title;   // empty when the input has none
  std::string source;  // the file it came from ("-" for standard input)
  uint64_t line = 0;   // 1-based line in `source` for JSONL and lines input; 0 otherwise
  // The values of ReadOptions::extra_fields found on this document (JSON
  // strings unquoted, numbers and other values as their JSON text; a number
  // too large for a double, alone or nested, as a string of its text).
  std::map<std::string, std::string> fields;
  // With ReadOptions::keep_records, the input record this document came
  // from, byte for byte: a JSONL or lines line without its '\n' (a '\r'
  // before it is kept; a UTF-8 byte order mark opening the file is not), or,
  // for a one-document file, its path as given. Empty otherwise.
  std::string record;
};

enum class InputFormat {
  kAuto,   // by extension and content: .jsonl/.ndjson -> JSONL; man pages (.1 ... .9, .n,
           // optionally .gz / .zst) or text starting with a roff request -> roff;
           // .docx / .pdf -> extracted text (extract.h); standard input starting with '{' ->
           // JSONL, empty or blank standard input -> no document; anything else -> one
           // document per file. In every format, gzip, zstd, xz and bzip2 content is
           // decompressed, recognized by its first bytes (whatever the name)
  kJsonl,  // one JSON object per line
  kText,   // one document per file
  kLines,  // one document per non-empty line
  kRoff,   // a man page (roff source, gzipped or not): macros and escapes stripped
};

// Parses "auto", "jsonl", "text", "lines", "roff".
Result<InputFormat> ParseInputFormat(std::string_view name);

// OK when ReadOptions::encoding `name` can be read: empty, UTF-8, or a
// converter ICU knows; else InvalidArgument naming it. The front ends check
// their --encoding with it when they parse it (a reader given an unknown name
// reports every file unreadable).
Status CheckEncoding(const std::string& name);

// Something wrong with the input. Reported, counted, never fatal to the reader.
struct InputIssue {
  enum class Kind {
    kUnreadable,     // missing file, no permission, read error, corrupt archive, truncated
                     // compressed stream, a named device, over max_document_bytes, an
                     // archive (zip but .docx, tar, 7z: refused)
    kMalformedLine,  // a JSONL line that is not a JSON object (or nests deeper than
                     // kMaxJsonNesting)
    kMissingField,   // the text field is absent or not a string
    kInvalidUtf8,    // bytes replaced with U+FFFD (the document is kept), or a file name
                     // that is not UTF-8 (its ids use \xNN escapes)
    kNulBytes,       // NUL bytes replaced with U+FFFD (the document is kept)
    kSkipped,        // not read on purpose (a symbolic link, FIFO, socket or device met
                     // while walking a directory)
  };
  Kind kind;
  std::string source;
  uint64_t line = 0;  // 0: the file as a whole
  std::string reason;

  // True when the document was dropped (kUnreadable, kMalformedLine, kMissingField).
  bool dropped() const;
  // "source:line: reason" (or "source: reason").
  std::string ToString() const;
};

struct InputStats {
  uint64_t files = 0;          // files opened successfully
  uint64_t documents = 0;      // documents produced
  uint64_t bytes = 0;          // text bytes produced
  uint64_t unreadable = 0;     // files that could not be read
  uint64_t malformed = 0;      // JSONL lines that are not JSON objects
  uint64_t missing_field = 0;  // JSONL objects without a string text field
  uint64_t invalid_utf8 = 0;   // documents with invalid UTF-8 replaced, file names escaped
  uint64_t nul_bytes = 0;      // documents with NUL bytes replaced
  uint64_t skipped = 0;        // paths skipped on purpose (links, special files in directories)
  // Bytes of the input files read so far as they are stored: a compressed
  // file's compressed bytes, not its text; a byte range's from its start.
  // For progress against the files' sizes on disk, whatever their
  // compression. It runs ahead of the documents returned by the reader's
  // buffers (a few hundred KiB at most).
  uint64_t input_bytes = 0;
  // For a message when nothing could be read: how the first file opened was
  // read ("jsonl", "text", "lines", "roff", "docx", "pdf"; then ", gzip",
  // ", zstd", ... when it was compressed; empty before any file), and the
  // field names of the first JSONL records (up to three records and 24
  // names; each record's in name order; a nested object's as "outer.inner").
  std::string first_format;
  std::vector<std::string> first_fields;

  // Issues that dropped something or altered a document (everything but kSkipped).
  uint64_t problems() const {
    return unreadable + malformed + missing_field + invalid_utf8 + nul_bytes;
  }
};

// ReadOptions::max_document_bytes by default: 64 MiB (about 20 million
// Chinese characters; raise it for larger documents).
inline constexpr uint64_t kDefaultMaxDocumentBytes = uint64_t{64} << 20;

// A line longer than max_document_bytes is skipped up to its line break
// when that comes within this many times max_document_bytes; else the rest
// of its file is not read.
inline constexpr uint64_t kLongLineSkipFactor = 4;

// JSONL lines nested deeper than this ({"a":[[...]]}) are malformed: no value
// of unbounded depth reaches a recursive algorithm.
inline constexpr size_t kMaxJsonNesting = 256;

struct ReadOptions {
  InputFormat format = InputFormat::kAuto;
  // JSONL fields. A name is the key of a top-level field; when the object has
  // no such key and the name holds dots, it is a path through nested objects
  // ("meta.body" reads {"meta":{"body":"..."}}). A record without its text
  // field is reported (kMissingField) and counted; without its id field, the
  // document gets the default id.
  // The input's character encoding, an ICU converter name (GB18030, GBK,
  // Big5, Shift_JIS, ...): what is read (after decompression) is converted
  // to UTF-8. Empty: UTF-8, read as is; a file that is not UTF-8 gets its
  // first invalid UTF-8 report completed with ICU's charset detector's guess
  // ("the file looks like GB18030 ...: --encoding GB18030 converts it").
  // An unknown name makes every file unreadable (reported; the front ends
  // refuse it first, CheckEncoding). Not with a byte range (range_begin/range_end).
  std::string encoding;
  std::string id_field = "id";
  std::string text_field = "text";
  std::string title_field = "title";
  // Plain text files (format text, or auto read as text): Document::title is
  // the file's first line (without its line break and surrounding white
  // space). The text is unchanged (it still holds that line).
  bool title_from_first_line = false;
  // More JSONL fields to copy into Document::fields (e.g. a score for --keep field:NAME).
  std::vector<std::string> extra_fields;
  // Fill Document::record with the original input record.
  bool keep_records = false;
  // Largest file or line accepted (after decompression); larger ones are
  // reported as unreadable. Checked before memory is allocated, so it also
  // bounds what a gzip bomb or an endless stream can take. A JSONL or lines
  // line past it is read past up to its line break (not held) and reported;
  // one with no line break within kLongLineSkipFactor times the limit ends
  // its file there (an endless line, /dev/zero, ends).
  uint64_t max_document_bytes = kDefaultMaxDocumentBytes;
  // Called for every issue, in input order. May be empty.
  std::function<void(const InputIssue&)> on_issue;
  // A part of each plain (uncompressed) JSONL or lines file, for a reader of
  // one piece of a large file (neardup-mpi): reading starts at byte
  // range_begin, which must be 0 or just after a '\n', and ends before the
  // first line that starts at or after range_end; the first line read is
  // line range_first_line of the file (issues and default ids name it). A
  // compressed file read with a range is unreadable. Default: whole files.
  uint64_t range_begin = 0;
  uint64_t range_end = UINT64_MAX;
  uint64_t range_first_line = 1;
};

class DocumentReader {
 public:
  // `inputs` are files, directories (walked recursively in name order) or "-"
  // for standard input. A path that does not exist is reported when reached,
  // not here: Open fails only on bad options. While walking, only regular
  // files are opened; a named FIFO is read, a named device refused.
  static Result<std::unique_ptr<DocumentReader>> Open(std::vector<std::string> inputs,
                                                      ReadOptions options);
  virtual ~DocumentReader() = default;

  // Stores the next document in *doc and returns true; false at the end.
  virtual bool Next(Document* doc) = 0;
  virtual const InputStats& stats() const = 0;
};

// Replaces every invalid UTF-8 sequence (and, if `replace_nul`, every NUL byte)
// in *text with U+FFFD. Returns the number of replacements of each kind.
struct Utf8Repair {
  uint64_t invalid = 0;
  uint64_t nul = 0;
};
Utf8Repair RepairUtf8(std::string* text, bool replace_nul = true);

// Strips roff requests, macros and escapes from a man page, keeping its text:
// one output line per text line. *title receives the page name from .TH.
std::string RoffToText(std::string_view roff, std::string* title = nullptr);

struct NormalizeOptions {
  // Unicode NFKC with case folding (ICU's NFKC_Casefold): full-width letters,
  // digits and punctuation become their usual forms, letters lower case.
  bool nfkc_casefold = true;
  // OpenCC configuration for Traditional -> Simplified Chinese, applied after
  // NFKC: "" (off), "t2s", "tw2s", "tw2sp", "hk2s" (each with or without
  // ".json"), "tw2sp2" (tw2sp applied twice), or the path of an OpenCC
  // configuration file (a name holding '/'). Anything else is InvalidArgument.
  std::string t2s;
  // Collapse every run of white space into one space and trim the ends.
  bool collapse_whitespace = false;
};

class Normalizer {
 public:
  static Result<std::unique_ptr<Normalizer>> Create(const NormalizeOptions& options);
  virtual ~Normalizer() = default;

  // REQUIRES: text is valid UTF-8.
  virtual std::string Normalize(std::string_view text) const = 0;
};

}  // namespace neardup

#endif  // NEARDUP_TEXT_H_
