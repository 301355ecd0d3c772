// Copyright 2026 The neardup Authors.
//
// The candidate words of jieba's extract_tags, shared by the word weight
// schemes (features.cc) and IDF training (idf.cc): a token is a candidate when
// len(token.strip()) >= 2 and token.lower() is not one of jieba's stop words.

#ifndef NEARDUP_FEATURES_CANDIDATES_H_
#define NEARDUP_FEATURES_CANDIDATES_H_

#include <string_view>

#include "neardup/keywords.h"
#include "segment/utf8.h"

namespace neardup::features_internal {

inline bool IsKeywordCandidate(std::string_view w) {
  if (segment::StrippedCodePointCount(w) < 2) return false;
  // The stop words are lower-case ASCII of at most 5 bytes (see keywords.cc).
  if (w.size() <= 5) {
    char lower[8];
    for (size_t i = 0; i < w.size(); ++i) {
      const char c = w[i];
      lower[i] = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    }
    if (KeywordExtractor::IsStopWord(std::string_view(lower, w.size()))) return false;
  }
  return true;
}

// Number of code points (each invalid byte counts as one).
inline size_t CodePointCount(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  size_t n = 0;
  while (p < end) {
    int len;
    segment::DecodeOne(p, end, &len);
    p += len;
    ++n;
  }
  return n;
}

// True when every code point of `s` is (Python) white space.
inline bool IsAllWhitespace(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  while (p < end) {
    int len;
    const uint32_t c = segment::DecodeOne(p, end, &len);
    p += len;
    if (!segment::IsPyWhitespace(c)) return false;
  }
  return true;
}

}  // namespace neardup::features_internal

#endif  // NEARDUP_FEATURES_CANDIDATES_H_
