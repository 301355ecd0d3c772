// Copyright 2026 The neardup Authors.
//
// Internal: the parsing of one JSONL line for DocumentReader (reader.cc).
// PrepareJsonLine makes a line safe for nlohmann's parser, FindField finds a
// (dotted) field in the parsed object, and FastJsonLine takes the common
// line without building nlohmann's tree.
//
// Thread safety: pure functions; a FastJsonLine is used by one thread.

#ifndef NEARDUP_SRC_TEXT_JSON_LINE_H_
#define NEARDUP_SRC_TEXT_JSON_LINE_H_

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace neardup {

// What PrepareJsonLine found and changed in a JSONL line.
struct JsonLineScan {
  uint64_t lone_surrogates = 0;  // \uD800-style escapes replaced with \uFFFD
  // Top-level keys (decoded) whose value was a number too large for a double
  // and is now a string holding the number's JSON text.
  std::vector<std::pair<std::string, std::string>> overflowed;  // key, number text
};

// One pass over a JSONL line, before nlohmann parses it, for what would make
// the parser throw or recurse:
//  - nesting deeper than kMaxJsonNesting: the line is refused (*reason set,
//    false returned), so that no recursive dump or copy meets attacker depth;
//  - a lone surrogate escape (\uD800 without its pair): becomes \uFFFD (same
//    length, in place) and is counted;
//  - a number too large for a double (1e400): becomes a string holding its
//    JSON text, so that the rest of the line is kept (an id or extra field
//    keeps the number's text; the caller refuses it as text or title).
bool PrepareJsonLine(std::string* line, JsonLineScan* scan, std::string* reason);

// The value of field `name` in a JSON object: its key `name` when there is
// one, else, when `name` holds dots, the value at that path through nested
// objects ("meta.body": object["meta"]["body"]). Null when absent.
const nlohmann::json* FindField(const nlohmann::json& object, const std::string& name);

// A fast path for the common JSONL line: a strict RFC 8259 validator over the
// whole line that records the top-level members, so that the text, id and
// title strings are decoded without building nlohmann's tree (its lexer was a
// quarter of `neardup fingerprint`'s time). It accepts a subset of what
// nlohmann accepts, with the same values: anything else (an error, a number
// or other non-string id, a dotted field name not present as a key, an
// escaped or repeated key of interest, extra fields) makes the caller use
// nlohmann, so every message and corner case stays nlohmann's.
class FastJsonLine {
 public:
  struct Member {
    std::string_view raw;  // the value's JSON text
    bool is_string = false;
    bool found = false;
  };

  // `strict`: the line has not been through RepairUtf8 and PrepareJsonLine;
  // the validator also refuses what those would change (invalid UTF-8, a lone
  // surrogate escape, a number that may overflow a double, nesting deeper
  // than kMaxJsonNesting), so that a line it takes is the same as after them.
  explicit FastJsonLine(std::string_view s, bool strict = false) : s_(s), strict_(strict) {}

  // Validates the line as one JSON object and fills *text, *id, *title for
  // the keys named; false when the line is not for the fast path.
  bool Parse(std::string_view text_key, std::string_view id_key, std::string_view title_key,
             Member* text, Member* id, Member* title);

  // The decoded value of a string's JSON text; false on what nlohmann would
  // treat differently (a lone surrogate escape). *nul (when given) says
  // whether the value holds a NUL: a string the parser took has no raw
  // control byte, so only a \u0000 escape puts one there.
  static bool Decode(std::string_view raw, std::string* out, bool* nul = nullptr);

 private:
  static void AppendUtf8(uint32_t cp, std::string* out);

  bool AtEnd();
  bool Eat(char c);
  void SkipWs();
  // At a '"': past the closing quote. Raw control characters and invalid
  // escapes fail (the line's UTF-8 is already repaired).
  bool SkipString(bool* escaped);
  // SkipString for a line not yet repaired: also validates the UTF-8 (CJK
  // three-byte sequences inline, eight ASCII bytes at a time) and refuses a
  // lone surrogate escape.
  bool SkipStringStrict(bool* escaped);
  bool SkipLiteral(std::string_view word);
  bool SkipValue(size_t depth);

  std::string_view s_;
  bool strict_;
  size_t i_ = 0;
};

}  // namespace neardup

#endif  // NEARDUP_SRC_TEXT_JSON_LINE_H_
