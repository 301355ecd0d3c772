// Copyright 2026 The neardup Authors.

#include "segment/hmm_model.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "segment/char_class.h"
#include "segment/data_error.h"
#include "util/utf8.h"

namespace neardup::segment {
namespace {

// A recursive-descent reader for the dict literals of finalseg/prob_*.py.
class LiteralParser {
 public:
  LiteralParser(std::string_view src, const std::string& file) : src_(src), file_(file) {}

  using Callback = std::function<Status(const std::u32string&, const std::u32string&, double)>;

  Status Run(const Callback& on_entry) {
    // Find the assignment "P =" at the start of a line.
    size_t pos = 0;
    while (true) {
      pos = src_.find('P', pos);
      if (pos == std::string_view::npos) return Error("no assignment 'P = {...}'");
      if (pos == 0 || src_[pos - 1] == '\n') {
        size_t q = pos + 1;
        while (q < src_.size() && (src_[q] == ' ' || src_[q] == '\t')) ++q;
        if (q < src_.size() && src_[q] == '=') {
          pos_ = q + 1;
          break;
        }
      }
      ++pos;
    }
    SkipSpace();
    NEARDUP_RETURN_IF_ERROR(ParseDict(on_entry, nullptr));
    SkipSpace();
    if (pos_ != src_.size()) return Error("unexpected text after the dict literal");
    return Status::OK();
  }

 private:
  Status Error(const std::string& what) const {
    size_t line = 1;
    for (size_t i = 0; i < pos_ && i < src_.size(); ++i) line += src_[i] == '\n';
    return Status::Corruption(file_ + ":" + std::to_string(line) + ": " + what + "; " +
                              std::string(kInstallHint));
  }

  void SkipSpace() {
    while (pos_ < src_.size() &&
           (src_[pos_] == ' ' || src_[pos_] == '\n' || src_[pos_] == '\r' || src_[pos_] == '\t'))
      ++pos_;
  }

  // Parses { key: value, ... }. outer == nullptr: top level.
  Status ParseDict(const Callback& on_entry, const std::u32string* outer) {
    if (pos_ >= src_.size() || src_[pos_] != '{') return Error("expected '{'");
    ++pos_;
    SkipSpace();
    while (true) {
      if (pos_ >= src_.size()) return Error("unterminated dict");
      if (src_[pos_] == '}') {
        ++pos_;
        return Status::OK();
      }
      std::u32string key;
      NEARDUP_RETURN_IF_ERROR(ParseString(&key));
      SkipSpace();
      if (pos_ >= src_.size() || src_[pos_] != ':') return Error("expected ':'");
      ++pos_;
      SkipSpace();
      if (pos_ < src_.size() && src_[pos_] == '{') {
        if (outer != nullptr) return Error("dicts nested too deeply");
        NEARDUP_RETURN_IF_ERROR(ParseDict(on_entry, &key));
      } else {
        double value = 0;
        NEARDUP_RETURN_IF_ERROR(ParseNumber(&value));
        NEARDUP_RETURN_IF_ERROR(outer ? on_entry(*outer, key, value)
                                      : on_entry(std::u32string(), key, value));
      }
      SkipSpace();
      if (pos_ < src_.size() && src_[pos_] == ',') {
        ++pos_;
        SkipSpace();
      } else if (pos_ >= src_.size() || src_[pos_] != '}') {
        return Error("expected ',' or '}'");
      }
    }
  }

  static int HexValue(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  Status ParseHex(int digits, uint32_t* out) {
    if (src_.size() - pos_ < static_cast<size_t>(digits)) return Error("truncated escape");
    uint32_t v = 0;
    for (int i = 0; i < digits; ++i) {
      const int h = HexValue(src_[pos_ + i]);
      if (h < 0) return Error("bad hex digit in escape");
      v = v * 16 + static_cast<uint32_t>(h);
    }
    pos_ += digits;
    if (v > 0x10FFFF) return Error("escape above U+10FFFF");
    *out = v;
    return Status::OK();
  }

  Status ParseString(std::u32string* out) {
    if (pos_ < src_.size() && (src_[pos_] == 'u' || src_[pos_] == 'U')) ++pos_;
    if (pos_ >= src_.size() || (src_[pos_] != '\'' && src_[pos_] != '"'))
      return Error("expected a string key");
    const char quote = src_[pos_++];
    while (true) {
      if (pos_ >= src_.size() || src_[pos_] == '\n') return Error("unterminated string");
      const char c = src_[pos_];
      if (c == quote) {
        ++pos_;
        return Status::OK();
      }
      if (c == '\\') {
        if (++pos_ >= src_.size()) return Error("unterminated string");
        const char e = src_[pos_++];
        uint32_t cp = 0;
        switch (e) {
          case 'u':
            NEARDUP_RETURN_IF_ERROR(ParseHex(4, &cp));
            break;
          case 'U':
            NEARDUP_RETURN_IF_ERROR(ParseHex(8, &cp));
            break;
          case 'x':
            NEARDUP_RETURN_IF_ERROR(ParseHex(2, &cp));
            break;
          case '\\':
          case '\'':
          case '"':
            cp = static_cast<unsigned char>(e);
            break;
          case 'n':
            cp = '\n';
            break;
          case 'r':
            cp = '\r';
            break;
          case 't':
            cp = '\t';
            break;
          default:
            return Error(std::string("unsupported escape \\") + e);
        }
        out->push_back(static_cast<char32_t>(cp));
        continue;
      }
      const auto* p = reinterpret_cast<const unsigned char*>(src_.data() + pos_);
      int len;
      const uint32_t cp =
          utf8::Decode(p, reinterpret_cast<const unsigned char*>(src_.data()) + src_.size(), &len);
      if (cp >= utf8::kInvalidBase) return Error("invalid UTF-8 in string");
      out->push_back(static_cast<char32_t>(cp));
      pos_ += len;
    }
  }

  Status ParseNumber(double* out) {
    size_t end = pos_;
    while (end < src_.size() &&
           (std::isdigit(static_cast<unsigned char>(src_[end])) || src_[end] == '.' ||
            src_[end] == 'e' || src_[end] == 'E' || src_[end] == '+' || src_[end] == '-'))
      ++end;
    if (end == pos_) return Error("expected a number");
    const std::string token(src_.substr(pos_, end - pos_));
    char* stop = nullptr;
    errno = 0;
    const double v = std::strtod(token.c_str(), &stop);
    if (stop != token.c_str() + token.size())
      return Error("bad number '" + utf8::Excerpt(token) + "'");
    *out = v;
    pos_ = end;
    return Status::OK();
  }

  std::string_view src_;
  const std::string& file_;
  size_t pos_ = 0;
};

Status ReadWholeFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return MissingDataError(path);
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Status::IOError("cannot read " + path);
  *out = std::move(ss).str();
  return Status::OK();
}

int StateIndex(const std::u32string& key) {
  if (key.size() != 1) return -1;
  switch (key[0]) {
    case U'B':
      return kB;
    case U'E':
      return kE;
    case U'M':
      return kM;
    case U'S':
      return kS;
    default:
      return -1;
  }
}

}  // namespace

Status ParsePythonProbDict(
    std::string_view source, const std::string& file,
    const std::function<Status(const std::u32string&, const std::u32string&, double)>& on_entry) {
  LiteralParser parser(source, file);
  return parser.Run(on_entry);
}

Status HmmModel::Load(const std::string& finalseg_dir) {
  std::string text;
  auto bad = [](const std::string& file, const std::string& what) {
    return Status::Corruption(file + ": " + what + "; " + std::string(kInstallHint));
  };

  // prob_start.py: {state: logprob}; every state is required (jieba indexes
  // start_p[y] directly).
  const std::string start_file = finalseg_dir + "/prob_start.py";
  NEARDUP_RETURN_IF_ERROR(ReadWholeFile(start_file, &text));
  std::array<bool, 4> seen{};
  NEARDUP_RETURN_IF_ERROR(ParsePythonProbDict(
      text, start_file,
      [&](const std::u32string& outer, const std::u32string& key, double v) -> Status {
        const int s = StateIndex(key);
        if (!outer.empty() || s < 0) return bad(start_file, "expected {state: number}");
        start_[s] = v;
        seen[s] = true;
        return Status::OK();
      }));
  for (bool b : seen) {
    if (!b) return bad(start_file, "a state of B, E, M, S is missing");
  }

  // prob_trans.py: {from: {to: logprob}}; absent transitions are MIN_FLOAT
  // (trans_p[y0].get(y, MIN_FLOAT)).
  const std::string trans_file = finalseg_dir + "/prob_trans.py";
  NEARDUP_RETURN_IF_ERROR(ReadWholeFile(trans_file, &text));
  for (auto& row : trans_) row.fill(kMinFloat);
  NEARDUP_RETURN_IF_ERROR(ParsePythonProbDict(
      text, trans_file,
      [&](const std::u32string& outer, const std::u32string& key, double v) -> Status {
        const int from = StateIndex(outer);
        const int to = StateIndex(key);
        if (from < 0 || to < 0) return bad(trans_file, "expected {state: {state: number}}");
        trans_[from][to] = v;
        return Status::OK();
      }));

  // prob_emit.py: {state: {char: logprob}}; only U+4E00..U+9FD5 can ever be
  // looked up, the other entries are read and ignored.
  const std::string emit_file = finalseg_dir + "/prob_emit.py";
  NEARDUP_RETURN_IF_ERROR(ReadWholeFile(emit_file, &text));
  emit_.assign(static_cast<size_t>(kLast - kFirst + 1) * 4, kMinFloat);
  size_t entries = 0;
  NEARDUP_RETURN_IF_ERROR(ParsePythonProbDict(
      text, emit_file,
      [&](const std::u32string& outer, const std::u32string& key, double v) -> Status {
        const int s = StateIndex(outer);
        if (s < 0 || key.size() != 1) return bad(emit_file, "expected {state: {char: number}}");
        ++entries;
        const uint32_t cp = key[0];
        if (cp >= kFirst && cp <= kLast) emit_[(cp - kFirst) * 4 + s] = v;
        return Status::OK();
      }));
  if (entries == 0) return bad(emit_file, "no emission probabilities");
  return Status::OK();
}

void HmmModel::Viterbi(const uint32_t* obs, size_t n, uint8_t* states,
                       std::vector<uint8_t>* scratch) const {
  // PrevStatus of finalseg: the states that may precede each state.
  static constexpr uint8_t kPrev[4][2] = {
      {kE, kS},  // B
      {kB, kM},  // E
      {kM, kB},  // M
      {kS, kE},  // S
  };
  if (scratch->size() < n * 4) scratch->resize(n * 4);
  uint8_t* back = scratch->data();  // back[t * 4 + y]: best predecessor of y at t

  double v[4];
  for (int y = 0; y < 4; ++y) v[y] = start_[y] + Emit(y, obs[0]);
  for (size_t t = 1; t < n; ++t) {
    double nv[4];
    for (int y = 0; y < 4; ++y) {
      const double em = Emit(y, obs[t]);
      const uint8_t a = kPrev[y][0];
      const uint8_t b = kPrev[y][1];
      const double pa = v[a] + trans_[a][y] + em;
      const double pb = v[b] + trans_[b][y] + em;
      // max((pa, a), (pb, b)) on tuples.
      if (pa > pb || (pa == pb && a > b)) {
        nv[y] = pa;
        back[t * 4 + y] = a;
      } else {
        nv[y] = pb;
        back[t * 4 + y] = b;
      }
    }
    for (int y = 0; y < 4; ++y) v[y] = nv[y];
  }
  // max((V[E], 'E'), (V[S], 'S')): S wins ties.
  uint8_t state = v[kE] > v[kS] ? kE : kS;
  for (size_t t = n; t-- > 0;) {
    states[t] = state;
    if (t > 0) state = back[t * 4 + state];
  }
}

}  // namespace neardup::segment
