// Copyright 2026 The neardup Authors.

#include "text/json_line.h"

#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "neardup/text.h"
#include "util/utf8.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define NEARDUP_JSON_AVX2 1
#endif

namespace neardup {
namespace {

#ifdef NEARDUP_JSON_AVX2
// The bytes from p on that are three-byte sequences with lead bytes E1..EC,
// EE or EF and two continuation bytes each (what SkipStringStrict's `cjk`
// takes one at a time), 30 bytes a step while 32 are readable before end.
// Such bytes are valid UTF-8, and none is a quote, a backslash or a control.
__attribute__((target("avx2"))) size_t CjkBlocks(const unsigned char* p, const unsigned char* end) {
  const __m256i high2 = _mm256_set1_epi8(static_cast<char>(0xC0));
  const __m256i cont = _mm256_set1_epi8(static_cast<char>(0x80));
  const __m256i e1 = _mm256_set1_epi8(static_cast<char>(0xE1));
  const __m256i ed = _mm256_set1_epi8(static_cast<char>(0xED));
  const __m256i span = _mm256_set1_epi8(0xEF - 0xE1);
  constexpr uint32_t kLeads = 0x09249249u;  // bytes 0, 3, ..., 27
  constexpr uint32_t kConts = (kLeads << 1) | (kLeads << 2);
  const unsigned char* q = p;
  while (end - q >= 32) {
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q));
    const auto conts = static_cast<uint32_t>(
        _mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_and_si256(b, high2), cont)));
    const __m256i off = _mm256_sub_epi8(b, e1);  // E1..EF: 0..14
    const __m256i lead = _mm256_andnot_si256(_mm256_cmpeq_epi8(b, ed),
                                             _mm256_cmpeq_epi8(_mm256_min_epu8(off, span), off));
    const auto leads = static_cast<uint32_t>(_mm256_movemask_epi8(lead));
    // The first of the 30 bytes out of the pattern; the sequences before it.
    const uint32_t bad = ((conts ^ kConts) | (~leads & kLeads)) & 0x3FFFFFFFu;
    if (bad != 0) return static_cast<size_t>(q - p) + 3 * (std::countr_zero(bad) / 3);
    q += 30;
  }
  return static_cast<size_t>(q - p);
}

bool HaveAvx2() {
  static const bool have = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
  }();
  return have;
}
#endif

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

}  // namespace

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

bool FastJsonLine::Parse(std::string_view text_key, std::string_view id_key,
                         std::string_view title_key, Member* text, Member* id, Member* title) {
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

bool FastJsonLine::Decode(std::string_view raw, std::string* out, bool* nul) {
  out->clear();
  if (nul != nullptr) *nul = false;
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
        if (cp == 0 && nul != nullptr) *nul = true;
        AppendUtf8(cp, out);
      }
    }
  }
  return true;
}

void FastJsonLine::AppendUtf8(uint32_t cp, std::string* out) {
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

bool FastJsonLine::AtEnd() {
  SkipWs();
  return i_ == s_.size();
}

bool FastJsonLine::Eat(char c) {
  if (i_ < s_.size() && s_[i_] == c) {
    ++i_;
    return true;
  }
  return false;
}

void FastJsonLine::SkipWs() {
  while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) {
    ++i_;
  }
}

bool FastJsonLine::SkipString(bool* escaped) {
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

bool FastJsonLine::SkipStringStrict(bool* escaped) {
  constexpr uint64_t kOnes = 0x0101010101010101ull, kHigh = 0x8080808080808080ull;
  const auto zero_byte = [](uint64_t x) { return (x - kOnes) & ~x & kHigh; };
  const auto* p = reinterpret_cast<const unsigned char*>(s_.data());
  const size_t n = s_.size();
  size_t i = i_ + 1;
#ifdef NEARDUP_JSON_AVX2
  const bool avx2 = HaveAvx2();
#endif
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
#ifdef NEARDUP_JSON_AVX2
        if (avx2) i += CjkBlocks(p + i, p + n);  // the run but its last bytes
#endif
        while (i < n && cjk()) i += 3;
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

bool FastJsonLine::SkipLiteral(std::string_view word) {
  if (s_.substr(i_, word.size()) != word) return false;
  i_ += word.size();
  return true;
}

bool FastJsonLine::SkipValue(size_t depth) {
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

}  // namespace neardup
