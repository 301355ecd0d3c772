// Copyright 2026 The neardup Authors.
//
// Edit ratio (bit-parallel LCS) and the seeded perturbation of seed 003:
// modify, delete, shift and replace operations until the target share of
// characters is changed.

#include <algorithm>
#include <bit>
#include <cmath>
#include <unordered_map>

#include "eval/random.h"
#include "neardup/eval.h"
#include "neardup/features.h"
#include "util/utf8.h"

namespace neardup {
namespace {

// The match masks of a fixed text `a` for the bit-parallel LCS of Hyyro
// (2004): bit i of masks[c] is set when a[i] == c.
class LcsPattern {
 public:
  explicit LcsPattern(std::u32string_view a) : m_(a.size()), words_((a.size() + 63) / 64) {
    for (size_t i = 0; i < a.size(); ++i) {
      auto& mask = masks_[a[i]];
      if (mask.empty()) mask.assign(words_, 0);
      mask[i / 64] |= uint64_t{1} << (i % 64);
    }
  }

  size_t Lcs(std::u32string_view b) const {
    if (m_ == 0 || b.empty()) return 0;
    std::vector<uint64_t> v(words_, ~uint64_t{0});
    for (char32_t c : b) {
      const auto it = masks_.find(c);
      if (it == masks_.end()) continue;  // U = 0: V unchanged
      const std::vector<uint64_t>& mask = it->second;
      uint64_t carry = 0;
      uint64_t borrow = 0;
      for (size_t w = 0; w < words_; ++w) {
        const uint64_t x = v[w];
        const uint64_t u = x & mask[w];
        // sum = x + u + carry
        const uint64_t s1 = x + u;
        const uint64_t c1 = s1 < x ? 1 : 0;
        const uint64_t s2 = s1 + carry;
        const uint64_t c2 = s2 < s1 ? 1 : 0;
        carry = c1 | c2;
        // diff = x - u - borrow
        const uint64_t d1 = x - u;
        const uint64_t b1 = x < u ? 1 : 0;
        const uint64_t d2 = d1 - borrow;
        const uint64_t b2 = d1 < borrow ? 1 : 0;
        borrow = b1 | b2;
        v[w] = s2 | d2;
      }
    }
    size_t zeros = 0;
    for (size_t w = 0; w < words_; ++w) {
      uint64_t bits = ~v[w];
      if (w + 1 == words_ && m_ % 64 != 0) bits &= (uint64_t{1} << (m_ % 64)) - 1;
      zeros += static_cast<size_t>(std::popcount(bits));
    }
    return zeros;
  }

 private:
  size_t m_;
  size_t words_;
  std::unordered_map<char32_t, std::vector<uint64_t>> masks_;
};

// The sentences that shift and replace move: the library's splitter with
// clauses (；;), English full stops and closing quotes kept with their
// sentence, as [begin, end) code-point offsets that tile `text`.
std::vector<std::pair<size_t, size_t>> SentenceRanges(std::u32string_view text) {
  SentenceSplitOptions options;
  options.keep_closers = true;
  options.clause_and_period_ends = true;
  const std::string utf8 = EncodeUtf8(text);  // valid UTF-8: one lead byte per code point
  std::vector<std::pair<size_t, size_t>> out;
  size_t code_points = 0;
  for (const SentenceSpan& span : SplitSentenceSpans(utf8, options)) {
    const size_t begin = code_points;
    for (size_t b = span.begin; b < span.end; ++b) {
      if ((static_cast<unsigned char>(utf8[b]) & 0xC0) != 0x80) ++code_points;
    }
    out.emplace_back(begin, code_points);
  }
  return out;
}

bool IsAsciiAlnum(char32_t c) {
  return (c >= U'0' && c <= U'9') || (c >= U'a' && c <= U'z') || (c >= U'A' && c <= U'Z');
}

}  // namespace

std::u32string DecodeUtf8(std::string_view text) {
  std::u32string out;
  out.reserve(text.size());
  utf8::ForEachCodePoint(text, [&out](uint32_t c) {
    out.push_back(c < utf8::kInvalidBase ? static_cast<char32_t>(c) : U'\uFFFD');
    return true;
  });
  return out;
}

std::string EncodeUtf8(std::u32string_view text) {
  std::string out;
  out.reserve(text.size() * 3);
  for (char32_t c : text) {
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
    } else if (c < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (c >> 6)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else if (c < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (c >> 12)));
      out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (c >> 18)));
      out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    }
  }
  return out;
}

size_t LongestCommonSubsequence(std::u32string_view a, std::u32string_view b) {
  if (a.size() < b.size()) std::swap(a, b);  // fewer words per step
  return LcsPattern(b).Lcs(a);
}

double EditRatio(std::u32string_view original, std::u32string_view variant) {
  const size_t longest = std::max(original.size(), variant.size());
  if (longest == 0) return 0;
  return 1.0 - static_cast<double>(LongestCommonSubsequence(original, variant)) /
                   static_cast<double>(longest);
}

double EditRatio(std::string_view original, std::string_view variant) {
  return EditRatio(DecodeUtf8(original), DecodeUtf8(variant));
}

Perturber::Perturber(std::vector<std::string> documents, std::vector<std::string> words)
    : documents_(std::move(documents)) {
  decoded_.reserve(documents_.size());
  for (const std::string& d : documents_) decoded_.push_back(DecodeUtf8(d));
  words_.reserve(words.size());
  for (const std::string& w : words) {
    std::u32string u = DecodeUtf8(w);
    if (!u.empty()) words_.push_back(std::move(u));
  }
}

PerturbResult Perturber::Perturb(size_t index, double ratio, uint64_t seed) const {
  const std::u32string& original = decoded_[index];
  const size_t n = original.size();
  eval_internal::Rng rng(seed, index, static_cast<uint64_t>(std::llround(ratio * 1e6)));
  PerturbResult result;
  std::u32string text = original;
  const LcsPattern pattern(original);
  // Never lengthened: max(|original|, |text|) == n, changed = n - LCS.
  const auto target = static_cast<size_t>(std::ceil(ratio * static_cast<double>(n) - 1e-9));
  size_t changed = 0;
  int stalled = 0;
  for (int iter = 0; iter < 1000 && changed < target && !text.empty() && stalled < 50; ++iter) {
    const size_t deficit = target - changed;
    // Operations of a quarter to a half of what is missing, then the rest.
    size_t size = deficit;
    if (deficit > 8) size = deficit / 4 + rng.Below(deficit / 4 + 1);
    size = std::max<size_t>(1, std::min(size, text.size()));
    auto op = static_cast<EditOp>(rng.Below(kNumEditOps));
    const auto sentences = SentenceRanges(text);
    // Sentences that fit in the deficit (shift and replace move whole ones).
    std::vector<size_t> fitting;
    for (size_t s = 0; s < sentences.size(); ++s) {
      const size_t len = sentences[s].second - sentences[s].first;
      if (len > 0 && len <= deficit) fitting.push_back(s);
    }
    if ((op == EditOp::kShift && (fitting.empty() || sentences.size() < 2)) ||
        (op == EditOp::kReplace && (fitting.empty() || decoded_.size() < 2))) {
      op = rng.Below(2) == 0 ? EditOp::kModify : EditOp::kDelete;
    }
    switch (op) {
      case EditOp::kModify: {
        const size_t pos = rng.Below(text.size() - size + 1);
        std::u32string repl;
        while (repl.size() < size) {
          if (words_.empty()) {
            const std::u32string& d = decoded_[rng.Below(decoded_.size())];
            if (!d.empty()) repl.push_back(d[rng.Below(d.size())]);
            continue;
          }
          const std::u32string& w = words_[rng.Below(words_.size())];
          if (!repl.empty() && IsAsciiAlnum(repl.back()) && IsAsciiAlnum(w.front())) {
            repl.push_back(U' ');
          }
          repl += w;
        }
        repl.resize(size);
        text.replace(pos, size, repl);
        break;
      }
      case EditOp::kDelete: {
        const size_t pos = rng.Below(text.size() - size + 1);
        text.erase(pos, size);
        break;
      }
      case EditOp::kShift: {
        const auto [b, e] = sentences[fitting[rng.Below(fitting.size())]];
        std::u32string moved = text.substr(b, e - b);
        text.erase(b, e - b);
        // Sentence boundaries of what is left, other than where it was.
        std::vector<size_t> bounds;
        for (const auto& [sb, se] : SentenceRanges(text)) {
          if (sb != b) bounds.push_back(sb);
        }
        if (b != text.size()) bounds.push_back(text.size());
        const size_t at = bounds.empty() ? 0 : bounds[rng.Below(bounds.size())];
        text.insert(at, moved);
        break;
      }
      case EditOp::kReplace: {
        const auto [b, e] = sentences[fitting[rng.Below(fitting.size())]];
        const size_t len = e - b;
        size_t other = rng.Below(decoded_.size() - 1);
        if (other >= index) ++other;
        const std::u32string& od = decoded_[other];
        const auto their = SentenceRanges(od);
        std::u32string repl;
        for (int tries = 0; tries < 8 && !their.empty(); ++tries) {
          const auto [ob, oe] = their[rng.Below(their.size())];
          repl = od.substr(ob, oe - ob);
          if (repl.size() <= len) break;
        }
        if (repl.size() > len) repl.resize(len);  // never longer than what it replaces
        text.replace(b, len, repl);
        break;
      }
    }
    ++result.ops_applied[static_cast<int>(op)];
    const size_t now = n - pattern.Lcs(text);
    stalled = now > changed ? 0 : stalled + 1;
    changed = now;
  }
  result.ratio = n == 0 ? 0 : static_cast<double>(changed) / static_cast<double>(n);
  result.text = EncodeUtf8(text);
  return result;
}

}  // namespace neardup
