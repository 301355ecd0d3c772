// Copyright 2026 The neardup Authors.

#include <bzlib.h>
#include <fcntl.h>
#include <lzma.h>
#include <sys/stat.h>
#include <unicode/ucnv.h>
#include <unicode/ucsdet.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "neardup/extract.h"
#include "neardup/text.h"
#include "text/compression.h"
#include "util/utf8.h"

namespace neardup {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";
constexpr std::string_view kXzMagic{
    "\xFD"
    "7zXZ\0",
    6};

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

// The escapes of JSON other than \uXXXX: the character after the backslash.
bool IsShortEscape(char e) {
  return e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' || e == 'r' ||
         e == 't';
}

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

// The first index >= i of s where a JSON string scan must look: a '"', a
// '\\' or (with `controls`) a byte below 0x20; s.size() if none. Eight bytes
// at a time.
size_t NextStringSpecial(std::string_view s, size_t i, bool controls) {
  constexpr uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
  const auto zero_byte = [](uint64_t x) { return (x - kOnes) & ~x & kHigh; };
  while (i + 8 <= s.size()) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    uint64_t hit = zero_byte(w ^ (kOnes * '"')) | zero_byte(w ^ (kOnes * '\\'));
    if (controls) hit |= (w - kOnes * 0x20) & ~w & kHigh;
    if (hit != 0) break;
    i += 8;
  }
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\' || (controls && c < 0x20)) break;
    ++i;
  }
  return i;
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
      for (++i; (i = NextStringSpecial(s, i, false)) < s.size() && s[i] != '"'; ++i) {
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

// The value of field `name` in a JSON object: its key `name` when there is
// one, else, when `name` holds dots, the value at that path through nested
// objects ("meta.body": object["meta"]["body"]). Null when absent.
const nlohmann::json* FindField(const nlohmann::json& object, const std::string& name) {
  const auto it = object.find(name);
  if (it != object.end()) return &*it;
  const nlohmann::json* value = &object;
  size_t pos = 0;
  for (;;) {
    const size_t dot = name.find('.', pos);
    if (dot == std::string::npos && pos == 0) return nullptr;  // no dots: just absent
    if (!value->is_object()) return nullptr;
    const auto f = value->find(name.substr(pos, dot == std::string::npos ? dot : dot - pos));
    if (f == value->end()) return nullptr;
    value = &*f;
    if (dot == std::string::npos) return value;
    pos = dot + 1;
  }
}

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
             Member* text, Member* id, Member* title) {
    SkipWs();
    if (!Eat('{')) return false;
    SkipWs();
    if (Eat('}')) return AtEnd();
    for (;;) {
      if (i_ >= s_.size() || s_[i_] != '"') return false;
      const size_t key_begin = i_ + 1;
      bool escaped = false;
      if (!SkipString(&escaped)) return false;
      const std::string_view key = s_.substr(key_begin, i_ - 1 - key_begin);
      SkipWs();
      if (!Eat(':')) return false;
      SkipWs();
      const size_t value_begin = i_;
      const bool is_string = i_ < s_.size() && s_[i_] == '"';
      if (!SkipValue(0)) return false;
      Member* m = nullptr;
      if (escaped) {
        // Could decode to a key of interest (or repeat one): not for us.
        return false;
      }
      if (key == text_key) m = text;
      if (key == id_key) m = m == nullptr ? id : nullptr;
      if (key == title_key && m == nullptr) m = title;
      if (m != nullptr) {
        if (m->found) return false;  // a repeated key: nlohmann's rules
        *m = Member{s_.substr(value_begin, i_ - value_begin), is_string, true};
      }
      SkipWs();
      if (Eat('}')) return AtEnd();
      if (!Eat(',')) return false;
      SkipWs();
    }
  }

  // The decoded value of a string's JSON text; false on what nlohmann would
  // treat differently (a lone surrogate escape).
  static bool Decode(std::string_view raw, std::string* out) {
    out->clear();
    raw = raw.substr(1, raw.size() - 2);
    out->reserve(raw.size());
    size_t i = 0;
    while (i < raw.size()) {
      const size_t bs = raw.find('\\', i);
      if (bs == std::string_view::npos) {
        out->append(raw.substr(i));
        break;
      }
      out->append(raw.substr(i, bs - i));
      const char c = raw[bs + 1];
      i = bs + 2;
      switch (c) {
        case '"':
        case '\\':
        case '/':
          *out += c;
          break;
        case 'b':
          *out += '\b';
          break;
        case 'f':
          *out += '\f';
          break;
        case 'n':
          *out += '\n';
          break;
        case 'r':
          *out += '\r';
          break;
        case 't':
          *out += '\t';
          break;
        default: {  // 'u' (the validator let nothing else through)
          uint32_t cp = static_cast<uint32_t>(Hex4(raw, i));
          i += 4;
          if (cp >= 0xDC00 && cp <= 0xDFFF) return false;
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (i + 6 > raw.size() || raw[i] != '\\' || raw[i + 1] != 'u') return false;
            const int lo = Hex4(raw, i + 2);
            if (lo < 0xDC00 || lo > 0xDFFF) return false;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (static_cast<uint32_t>(lo) - 0xDC00);
            i += 6;
          }
          AppendUtf8(cp, out);
        }
      }
    }
    return true;
  }

 private:
  static void AppendUtf8(uint32_t cp, std::string* out) {
    if (cp < 0x80) {
      *out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      *out += static_cast<char>(0xC0 | (cp >> 6));
      *out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      *out += static_cast<char>(0xE0 | (cp >> 12));
      *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      *out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      *out += static_cast<char>(0xF0 | (cp >> 18));
      *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      *out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  bool AtEnd() {
    SkipWs();
    return i_ == s_.size();
  }
  bool Eat(char c) {
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  void SkipWs() {
    while (i_ < s_.size() &&
           (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) {
      ++i_;
    }
  }
  // At a '"': past the closing quote. Raw control characters and invalid
  // escapes fail (the line's UTF-8 is already repaired).
  bool SkipString(bool* escaped) {
    if (strict_) return SkipStringStrict(escaped);
    ++i_;
    while ((i_ = NextStringSpecial(s_, i_, true)) < s_.size()) {
      const auto c = static_cast<unsigned char>(s_[i_]);
      if (c == '"') {
        ++i_;
        return true;
      }
      if (c < 0x20) return false;
      if (c == '\\') {
        *escaped = true;
        if (i_ + 1 >= s_.size()) return false;
        const char e = s_[i_ + 1];
        if (e == 'u') {
          if (Hex4(s_, i_ + 2) < 0) return false;
          i_ += 6;
          continue;
        }
        if (!IsShortEscape(e)) return false;
        i_ += 2;
        continue;
      }
      ++i_;
    }
    return false;
  }
  // SkipString for a line not yet repaired: also validates the UTF-8 (CJK
  // three-byte sequences inline, eight ASCII bytes at a time) and refuses a
  // lone surrogate escape.
  bool SkipStringStrict(bool* escaped) {
    constexpr uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
    const auto zero_byte = [](uint64_t x) { return (x - kOnes) & ~x & kHigh; };
    const auto* p = reinterpret_cast<const unsigned char*>(s_.data());
    const size_t n = s_.size();
    size_t i = i_ + 1;
    const auto cjk = [&] {  // a valid three-byte sequence E1..EC, EE, EF at i
      const unsigned c = p[i];
      return c >= 0xE1 && c <= 0xEF && c != 0xED && i + 2 < n && (p[i + 1] & 0xC0) == 0x80 &&
             (p[i + 2] & 0xC0) == 0x80;
    };
    for (;;) {
      while (i + 8 <= n) {  // the first byte that is '"', '\\', a control or not ASCII
        uint64_t w;
        std::memcpy(&w, p + i, 8);
        const uint64_t hit = zero_byte(w ^ (kOnes * '"')) | zero_byte(w ^ (kOnes * '\\')) |
                             ((w - kOnes * 0x20) & ~w & kHigh) | (w & kHigh);
        if (hit != 0) {
          i += static_cast<size_t>(std::countr_zero(hit)) / 8;
          break;
        }
        i += 8;
      }
      if (i >= n) return false;
      const unsigned c = p[i];
      if (c >= 0x80) {
        if (cjk()) {
          do {
            i += 3;
          } while (i < n && cjk());
          continue;
        }
        int len;
        if (utf8::Decode(p + i, p + n, &len) >= utf8::kInvalidBase) return false;
        i += static_cast<size_t>(len);
        continue;
      }
      if (c == '"') {
        i_ = i + 1;
        return true;
      }
      if (c < 0x20) return false;
      if (c != '\\') {
        ++i;
        continue;
      }
      *escaped = true;
      if (i + 1 >= n) return false;
      const char e = static_cast<char>(p[i + 1]);
      if (e == 'u') {
        const int cp = Hex4(s_, i + 2);
        if (cp < 0 || (cp >= 0xDC00 && cp <= 0xDFFF)) return false;
        i += 6;
        if (cp >= 0xD800 && cp <= 0xDBFF) {  // must be a pair
          if (i + 6 > n || p[i] != '\\' || p[i + 1] != 'u') return false;
          const int lo = Hex4(s_, i + 2);
          if (lo < 0xDC00 || lo > 0xDFFF) return false;
          i += 6;
        }
        continue;
      }
      if (!IsShortEscape(e)) return false;
      i += 2;
    }
  }
  bool SkipLiteral(std::string_view word) {
    if (s_.substr(i_, word.size()) != word) return false;
    i_ += word.size();
    return true;
  }
  bool SkipValue(size_t depth) {
    if (i_ >= s_.size() || depth > kMaxJsonNesting) return false;
    const char c = s_[i_];
    bool escaped = false;
    switch (c) {
      case '"':
        return SkipString(&escaped);
      case 't':
        return SkipLiteral("true");
      case 'f':
        return SkipLiteral("false");
      case 'n':
        return SkipLiteral("null");
      case '{':
      case '[': {
        // Strict: PrepareJsonLine counts the line's object too.
        if (strict_ && depth + 2 > kMaxJsonNesting) return false;
        const char close = c == '{' ? '}' : ']';
        ++i_;
        SkipWs();
        if (Eat(close)) return true;
        for (;;) {
          if (c == '{') {
            if (i_ >= s_.size() || s_[i_] != '"' || !SkipString(&escaped)) return false;
            SkipWs();
            if (!Eat(':')) return false;
            SkipWs();
          }
          if (!SkipValue(depth + 1)) return false;
          SkipWs();
          if (Eat(close)) return true;
          if (!Eat(',')) return false;
          SkipWs();
        }
      }
      default: {
        const size_t len = JsonNumberLength(s_, i_);
        if (len == 0) return false;
        // Strict: only these can overflow a double (PrepareJsonLine's test).
        if (strict_ &&
            (len > 308 || s_.substr(i_, len).find_first_of("eE") != std::string_view::npos)) {
          return false;
        }
        i_ += len;
        return true;
      }
    }
  }

  std::string_view s_;
  bool strict_;
  size_t i_ = 0;
};

// The archive formats a reader refuses (it reads no archive's members), by
// their magic bytes: "zip", "7z", "tar" (ustar at byte 257), or "" for
// anything else.
std::string_view ArchiveName(std::string_view head) {
  if (head.starts_with("PK\x03\x04") || head.starts_with("PK\x05\x06")) return "zip";
  if (head.starts_with("7z\xBC\xAF\x27\x1C")) return "7z";
  if (head.size() >= 262 && head.substr(257, 5) == "ustar") return "tar";
  return "";
}

// `codec`: the compression around it ("gzip"), or "".
std::string ArchiveReason(std::string_view archive, std::string_view codec = "") {
  return "a " + std::string(archive) + " archive" +
         (codec.empty() ? std::string() : " (" + std::string(codec) + "-compressed)") +
         ": neardup reads no archive's members; extract it and name the directory";
}

// A file whose content is decoded by its first bytes, not its name: gzip
// (1F 8B), zstd (28 B5 2F FD), xz (FD 37 7A 58 5A 00), bzip2 ("BZh"), else
// plain. Concatenated gzip members, zstd frames, xz and bzip2 streams are
// read one after the other; a stream cut short is an error.
class InputFile {
 public:
  InputFile() = default;
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  ~InputFile() { Close(); }

  // Returns an empty string on success, else the reason. `walked`: the path
  // was found by walking a directory, and anything but a regular file is
  // refused without blocking (a FIFO would wait for a writer forever). A
  // named character or block device is refused too (/dev/zero never ends);
  // a named FIFO and standard input are read.
  // `offset`: start reading there (a plain file's byte range).
  std::string Open(const std::string& path, bool walked, uint64_t offset = 0) {
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
    if (offset > 0 && lseek(fd, static_cast<off_t>(offset), SEEK_SET) < 0) {
      const std::string reason = std::strerror(errno);
      ::close(fd);
      return reason;
    }
    fd_ = fd;
    return Sniff();
  }

  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    if (inflating_) inflateEnd(&zs_);
    inflating_ = false;
    if (zstd_ != nullptr) ZSTD_freeDCtx(zstd_);
    zstd_ = nullptr;
    if (codec_ == Codec::kXz) lzma_end(&xz_);
    if (codec_ == Codec::kBzip2) BZ2_bzDecompressEnd(&bz_);
    if (from_ != nullptr) ucnv_close(from_);
    if (to_utf8_ != nullptr) ucnv_close(to_utf8_);
    from_ = to_utf8_ = nullptr;
    converted_eof_ = false;
    codec_ = Codec::kPlain;
    in_.clear();
    in_pos_ = 0;
    in_eof_ = false;
    in_frame_ = false;
    buffer_.clear();
    start_ = 0;
    eof_ = false;
    error_.clear();
    dropped_partial_line_ = false;
    consumed_ = 0;
  }

  // Reads one line without its '\n' (a final '\r' is kept) into *line.
  // Returns false at the end of the file; *error is set on a read error (then
  // an incomplete last line is not returned: dropped_partial_line()). A line
  // longer than `max_bytes` sets *too_long: no more than `max_bytes` of it is
  // held, and the rest is read and dropped up to its '\n', but no further
  // than `skip_bytes` in all: past that *endless is set too and the rest of
  // the line is not read (an endless line must not keep the reader busy
  // forever; where the next line starts is then unknown).
  // ReadLine, with the line as *view: in the buffer, not copied (valid until
  // the next read), when it lies there whole and within max_bytes; else
  // assembled in *line.
  bool ReadLineView(std::string_view* view, std::string* line, size_t max_bytes, size_t skip_bytes,
                    bool* too_long, bool* endless, std::string* error) {
    const size_t nl = buffer_.find('\n', start_);
    if (nl != std::string::npos && nl - start_ <= max_bytes) {
      line->clear();
      *too_long = false;
      *endless = false;
      *view = std::string_view(buffer_).substr(start_, nl - start_);
      consumed_ += nl - start_ + 1;
      start_ = nl + 1;
      return true;
    }
    if (!ReadLine(line, max_bytes, skip_bytes, too_long, endless, error)) return false;
    *view = *line;
    return true;
  }

  bool ReadLine(std::string* line, size_t max_bytes, size_t skip_bytes, bool* too_long,
                bool* endless, std::string* error) {
    line->clear();
    *too_long = false;
    *endless = false;
    size_t skipped = 0;
    for (;;) {
      const size_t nl = buffer_.find('\n', start_);
      const size_t end = nl == std::string::npos ? buffer_.size() : nl;
      const std::string_view piece = std::string_view(buffer_).substr(start_, end - start_);
      consumed_ += piece.size() + (nl == std::string::npos ? 0 : 1);
      if (!*too_long && !AppendWithinLimit(line, piece, max_bytes)) {
        *too_long = true;
        skipped = line->size();
        line->clear();
        line->shrink_to_fit();
      }
      if (*too_long) {
        skipped += piece.size();
        if (skipped > skip_bytes) {
          *endless = true;
          return true;
        }
      }
      if (nl != std::string::npos) {
        start_ = nl + 1;
        return true;
      }
      buffer_.clear();
      start_ = 0;
      if (!Fill()) {
        if (!error_.empty()) {
          *error = error_;
          dropped_partial_line_ = !line->empty() || *too_long;
          line->clear();
          return false;
        }
        return !line->empty() || *too_long;
      }
    }
  }

  // True when the whole file was decoded without an error and nothing
  // is left in the buffer but white space.
  bool AtCleanEnd() const {
    return eof_ && error_.empty() &&
           std::string_view(buffer_).substr(start_).find_first_not_of(" \t\r\n") ==
               std::string_view::npos;
  }

  // Decoded bytes ReadLine has consumed (line breaks included).
  uint64_t consumed() const { return consumed_; }
  bool compressed() const { return codec_ != Codec::kPlain; }
  // "gzip", "zstd", ...; empty for a plain file.
  std::string_view codec_name() const {
    switch (codec_) {
      case Codec::kPlain:
        return "";
      case Codec::kGzip:
        return "gzip";
      case Codec::kZstd:
        return "zstd";
      case Codec::kXz:
        return "xz";
      case Codec::kBzip2:
        return "bzip2";
    }
    return "";
  }

  // "zip", "7z", "tar" when the file's first bytes are an archive's
  // (ArchiveName), else "".
  std::string_view archive() const { return archive_; }

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
  enum class Codec { kPlain, kGzip, kZstd, kXz, kBzip2 };

  // Reads the first bytes and picks the codec by them.
  std::string Sniff() {
    // (A tar header's magic, at byte 257, is seen when the first read
    // brings that much: a file's does.)
    while (in_.size() < 4 && ReadInput()) {
    }
    if (!error_.empty()) return error_;
    const std::string_view head(in_);
    archive_ = ArchiveName(head);
    const std::string_view compression = DetectCompression(head);
    if (compression == "gzip") {
      codec_ = Codec::kGzip;
      zs_ = z_stream{};
      // 16 + 15: gzip framing, the largest window.
      if (inflateInit2(&zs_, 16 + MAX_WBITS) != Z_OK) return "cannot open (out of memory)";
      inflating_ = true;
    } else if (compression == "zstd") {
      codec_ = Codec::kZstd;
      zstd_ = ZSTD_createDCtx();
      if (zstd_ == nullptr) return "cannot open (out of memory)";
      // The window a frame may ask for bounds the memory it takes: 128 MiB.
      ZSTD_DCtx_setParameter(zstd_, ZSTD_d_windowLogMax, 27);
    } else if (compression == "xz") {
      codec_ = Codec::kXz;
      if (!StartXz()) return "cannot open (out of memory)";
    } else if (compression == "bzip2") {
      codec_ = Codec::kBzip2;
      if (!StartBzip2()) return "cannot open (out of memory)";
    }
    return "";
  }

  // Appends raw bytes of the file to in_ (dropping what is consumed); false
  // at its end or on an error (error_ set).
  bool ReadInput() {
    if (in_eof_) return false;
    in_.erase(0, in_pos_);
    in_pos_ = 0;
    const size_t old = in_.size();
    in_.resize(old + (1 << 17));
    ssize_t n;
    do {
      n = ::read(fd_, in_.data() + old, 1 << 17);
    } while (n < 0 && errno == EINTR);
    in_.resize(old + static_cast<size_t>(std::max<ssize_t>(n, 0)));
    if (n < 0) error_ = std::strerror(errno);
    if (n <= 0) in_eof_ = true;
    return n > 0;
  }

  // Reads up to `size` decoded bytes; 0 at the end of the file, where error_
  // tells whether the end is an error: a read error, corrupt data, or a
  // compressed stream cut short.
  size_t ReadChunk(char* dst, size_t size) {
    if (eof_) return 0;
    size_t n = 0;
    for (;;) {
      if (in_pos_ == in_.size() && !ReadInput()) {
        // The decoder may still hold output of the input it has taken.
        if (error_.empty() && in_frame_) n = Decode(dst, size);
        if (n == 0 && error_.empty() && in_frame_) {
          error_ = "truncated " + std::string(codec_name()) + " stream (unexpected end of file)";
        }
        break;
      }
      n = Decode(dst, size);
      if (n > 0 || !error_.empty()) break;
    }
    if (n == 0) eof_ = true;
    return n;
  }

  // Decoded bytes from what in_ holds (and the decoder's state).
  size_t Decode(char* dst, size_t size) {
    switch (codec_) {
      case Codec::kPlain: {
        const size_t n = std::min(size, in_.size() - in_pos_);
        std::memcpy(dst, in_.data() + in_pos_, n);
        in_pos_ += n;
        return n;
      }
      case Codec::kGzip:
        return Inflate(dst, size);
      case Codec::kZstd:
        return Unzstd(dst, size);
      case Codec::kXz:
        return Unxz(dst, size);
      case Codec::kBzip2:
        return Unbzip2(dst, size);
    }
    return 0;
  }

  // The memory an xz stream's dictionary may take (xz -9 takes 64 MiB).
  static constexpr uint64_t kXzMemoryLimit = uint64_t{256} << 20;

  bool StartXz() {
    xz_ = LZMA_STREAM_INIT;
    return lzma_stream_decoder(&xz_, kXzMemoryLimit, 0) == LZMA_OK;
  }
  bool StartBzip2() {
    bz_ = bz_stream{};
    return BZ2_bzDecompressInit(&bz_, 0, 0) == BZ_OK;
  }

  size_t Unxz(char* dst, size_t size) {
    if (!in_frame_ && !std::string_view(in_).substr(in_pos_).starts_with(kXzMagic)) {
      error_ = "data after the end of the xz stream";
      return 0;
    }
    in_frame_ = true;
    xz_.next_in = reinterpret_cast<const uint8_t*>(in_.data() + in_pos_);
    xz_.avail_in = in_.size() - in_pos_;
    xz_.next_out = reinterpret_cast<uint8_t*>(dst);
    xz_.avail_out = size;
    const lzma_ret rc = lzma_code(&xz_, LZMA_RUN);
    in_pos_ = in_.size() - xz_.avail_in;
    const size_t n = size - xz_.avail_out;
    if (rc == LZMA_STREAM_END) {
      in_frame_ = false;  // another stream may follow
      lzma_end(&xz_);
      if (!StartXz()) error_ = "out of memory";
    } else if (rc == LZMA_MEMLIMIT_ERROR) {
      error_ = "xz stream needs more than " + std::to_string(kXzMemoryLimit >> 20) +
               " MiB to decode (its dictionary); recompress it with a smaller preset";
    } else if (rc != LZMA_OK && rc != LZMA_BUF_ERROR) {
      error_ = "corrupt xz data (liblzma error " + std::to_string(static_cast<int>(rc)) + ")";
    }
    return n;
  }

  size_t Unbzip2(char* dst, size_t size) {
    if (!in_frame_ && !std::string_view(in_).substr(in_pos_).starts_with("BZh")) {
      error_ = "data after the end of the bzip2 stream";
      return 0;
    }
    in_frame_ = true;
    const size_t avail_in = std::min<size_t>(in_.size() - in_pos_, 1u << 30);
    bz_.next_in = in_.data() + in_pos_;
    bz_.avail_in = static_cast<unsigned>(avail_in);
    bz_.next_out = dst;
    bz_.avail_out = static_cast<unsigned>(std::min<size_t>(size, 1u << 30));
    const unsigned out_before = bz_.avail_out;
    const int rc = BZ2_bzDecompress(&bz_);
    in_pos_ += avail_in - bz_.avail_in;
    const size_t n = out_before - bz_.avail_out;
    if (rc == BZ_STREAM_END) {
      in_frame_ = false;  // another stream may follow (pbzip2)
      BZ2_bzDecompressEnd(&bz_);
      if (!StartBzip2()) error_ = "out of memory";
    } else if (rc != BZ_OK) {
      error_ = "corrupt bzip2 data (libbz2 error " + std::to_string(rc) + ")";
    }
    return n;
  }

  size_t Inflate(char* dst, size_t size) {
    if (!in_frame_ && !std::string_view(in_).substr(in_pos_).starts_with("\x1f")) {
      // After a member: only another member may follow.
      error_ = "data after the end of the gzip stream";
      return 0;
    }
    in_frame_ = true;
    zs_.next_in = reinterpret_cast<Bytef*>(in_.data() + in_pos_);
    zs_.avail_in = static_cast<uInt>(in_.size() - in_pos_);
    zs_.next_out = reinterpret_cast<Bytef*>(dst);
    zs_.avail_out = static_cast<uInt>(std::min<size_t>(size, 1u << 30));
    const int rc = inflate(&zs_, Z_NO_FLUSH);
    in_pos_ = in_.size() - zs_.avail_in;
    const size_t n = static_cast<size_t>(reinterpret_cast<char*>(zs_.next_out) - dst);
    if (rc == Z_STREAM_END) {
      in_frame_ = false;
      inflateReset(&zs_);
    } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
      error_ = std::string("corrupt gzip data: ") + (zs_.msg != nullptr ? zs_.msg : "error");
    }
    return n;
  }

  size_t Unzstd(char* dst, size_t size) {
    ZSTD_inBuffer in{in_.data() + in_pos_, in_.size() - in_pos_, 0};
    ZSTD_outBuffer out{dst, size, 0};
    const size_t rc = ZSTD_decompressStream(zstd_, &out, &in);
    in_pos_ += in.pos;
    if (ZSTD_isError(rc)) {
      error_ = std::string("corrupt zstd data: ") + ZSTD_getErrorName(rc);
      return 0;
    }
    in_frame_ = rc != 0;  // 0: a frame ended here
    return out.pos;
  }

  // Appends the next block of the file to what is not consumed yet; false at
  // the end.
  bool Fill() {
    buffer_.erase(0, start_);
    start_ = 0;
    if (from_ != nullptr) return FillConverted();
    const size_t old = buffer_.size();
    buffer_.resize(old + (1 << 17));
    const size_t n = ReadChunk(buffer_.data() + old, 1 << 17);
    buffer_.resize(old + n);
    return n > 0;
  }

  // Fill through the converters: the decoded bytes, in the encoding given,
  // become UTF-8 (ICU's substitution for a byte sequence the encoding does
  // not define: U+FFFD, then reported as any other replacement would be).
  bool FillConverted() {
    if (converted_eof_) return false;
    std::string raw(1 << 17, '\0');
    const size_t n = ReadChunk(raw.data(), raw.size());
    const bool flush = n == 0;
    const char* src = raw.data();
    const size_t old = buffer_.size();
    for (;;) {
      char out[1 << 16];
      char* target = out;
      UErrorCode status = U_ZERO_ERROR;
      ucnv_convertEx(to_utf8_, from_, &target, out + sizeof(out), &src, raw.data() + n, pivot_,
                     &pivot_source_, &pivot_target_, pivot_ + kPivotChars, /*reset=*/false, flush,
                     &status);
      buffer_.append(out, static_cast<size_t>(target - out));
      if (status == U_BUFFER_OVERFLOW_ERROR) continue;
      if (U_FAILURE(status)) {
        error_ = std::string("cannot convert from ") + ucnv_getName(from_, &status) + ": " +
                 u_errorName(status);
        converted_eof_ = true;
      }
      break;
    }
    if (flush) converted_eof_ = true;
    return buffer_.size() > old || !converted_eof_;
  }

 public:
  // Converts what is read from `encoding` (an ICU converter name: GB18030,
  // GBK, Big5, Shift_JIS...) to UTF-8; the empty string or "UTF-8" reads
  // bytes as they are. Returns the reason when ICU knows no such encoding.
  std::string SetEncoding(const std::string& encoding) {
    if (encoding.empty() || Lower(encoding) == "utf-8" || Lower(encoding) == "utf8") return "";
    UErrorCode status = U_ZERO_ERROR;
    from_ = ucnv_open(encoding.c_str(), &status);
    if (U_FAILURE(status)) {
      from_ = nullptr;
      return "unknown encoding '" + encoding + "' (--encoding takes an ICU converter name)";
    }
    to_utf8_ = ucnv_open("UTF-8", &status);
    pivot_source_ = pivot_target_ = pivot_;
    return "";
  }

  // The decoded bytes at the start of the file (up to `n`), for the
  // encoding detector; they stay to be read.
  std::string_view Head(size_t n) {
    while (buffer_.size() - start_ < n && Fill()) {
    }
    return std::string_view(buffer_).substr(start_, std::min(n, buffer_.size() - start_));
  }

 private:
  static constexpr size_t kPivotChars = 1 << 12;
  UConverter* from_ = nullptr;  // --encoding; null: UTF-8, read as is
  UConverter* to_utf8_ = nullptr;
  UChar pivot_[kPivotChars];
  UChar* pivot_source_ = pivot_;
  UChar* pivot_target_ = pivot_;
  bool converted_eof_ = false;
  int fd_ = -1;
  Codec codec_ = Codec::kPlain;
  z_stream zs_{};
  bool inflating_ = false;
  ZSTD_DCtx* zstd_ = nullptr;
  lzma_stream xz_ = LZMA_STREAM_INIT;  // when codec_ is kXz
  bz_stream bz_{};                     // when codec_ is kBzip2
  std::string_view archive_;
  std::string in_;  // raw bytes read from fd_; in_[in_pos_..] not decoded yet
  size_t in_pos_ = 0;
  bool in_eof_ = false;
  bool in_frame_ = false;  // inside a gzip member or zstd frame
  std::string buffer_;
  size_t start_ = 0;
  bool eof_ = false;
  std::string error_;  // why the end came early; empty at a clean end
  bool dropped_partial_line_ = false;
  uint64_t consumed_ = 0;
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
    if (!FastJsonLine::Decode(text.raw, &decoded)) return false;
    doc->source = source_;
    doc->line = line_;
    doc->id = id.found && id.is_string ? std::move(id_text) : source_ + ":" + std::to_string(line_);
    doc->title = std::move(title_text);
    doc->fields.clear();
    // Decoded from a repaired line with no lone surrogate escape: valid UTF-8.
    FinishText(std::move(decoded), doc, replaced, /*valid_utf8=*/true);
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
  // replacing), so the repair runs only when it holds a NUL.
  void FinishText(std::string text, Document* doc, uint64_t replaced = 0, bool valid_utf8 = false) {
    const bool clean = valid_utf8 && std::memchr(text.data(), 0, text.size()) == nullptr;
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

std::string_view DetectCompression(std::string_view head) {
  if (head.starts_with("\x1f\x8b")) return "gzip";
  if (head.starts_with("\x28\xb5\x2f\xfd")) return "zstd";
  if (head.starts_with(kXzMagic)) return "xz";
  // "BZh" and the block size, '1' to '9'.
  if (head.size() >= 4 && head.starts_with("BZh") && head[3] >= '1' && head[3] <= '9') {
    return "bzip2";
  }
  return "";
}

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
