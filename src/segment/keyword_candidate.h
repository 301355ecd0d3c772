// Copyright 2026 The neardup Authors.
//
// Internal: the candidate words of jieba's extract_tags, shared by keyword
// extraction (keywords.cc), the word weight schemes (features.cc) and IDF
// training (idf.cc): a token is a candidate when len(token.strip()) >= 2 and
// token.lower() is not one of jieba's stop words.

#ifndef NEARDUP_SEGMENT_KEYWORD_CANDIDATE_H_
#define NEARDUP_SEGMENT_KEYWORD_CANDIDATE_H_

#include <string_view>

#include "neardup/segmenter.h"
#include "segment/char_class.h"

namespace neardup::segment {

inline bool IsKeywordCandidate(std::string_view w) {
  if (StrippedCodePointCount(w) < 2) return false;
  // w.lower() in stop_words: the stop words are lower-case ASCII of at most 5
  // bytes and any token of two or more characters is ASCII and Han only (or
  // "\r\n"), so ASCII lower-casing decides membership.
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

}  // namespace neardup::segment

#endif  // NEARDUP_SEGMENT_KEYWORD_CANDIDATE_H_
