// Copyright 2026 The neardup Authors.
//
// The fused single pass of the default fingerprint (FusedNgramSimHash, used
// by Pipeline::Fingerprint) against the general path it replaces
// (Normalizer::Normalize, then FeatureExtractor::SimHashOf): byte-identical
// fingerprints and equal feature counts on seeded random mixed text (ASCII,
// CJK, full-width forms, combining marks, Hangul jamo, compatibility
// characters, supplementary characters, invalid UTF-8, Traditional
// characters with t2s on), with the fused pass both taking and declining
// texts; then every document of the THUCNews and BBC samples. The same for
// Pipeline::FingerprintAndFeatureSet (neardup dedup's verified pairs), whose
// fused pass also gives the feature set: the same set of hashes as the
// general path's FeatureHashOccurrences, hence the same Jaccard sketch
// (MakeJaccardSketch) byte for byte.

#include "features/fused_ngram_simhash.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "features/feature_hashes.h"
#include "neardup/dedup.h"
#include "neardup/features.h"
#include "neardup/pipeline.h"
#include "tests/testing/test_util.h"

namespace neardup {
namespace {

std::string RandomMixedText(std::mt19937_64& rng) {
  static const char* const kPieces[] = {
      "近",
      "似",
      "重",
      "复",
      "检",
      "测",  // CJK
      "a",
      "B",
      "z",
      "Q",
      "7",
      "0",  // ASCII content
      " ",
      ".",
      "-",
      "\n",
      "\t",  // ASCII other
      "，",
      "。",
      "（",
      "）",
      "\u3000",  // CJK punctuation, ideographic space
      "\uff21",
      "\uff42",
      "\uff13",  // full-width A, b, 3
      "\u00e9",
      "e\u0301",
      "\u0301",  // é precomposed, decomposed, a lone mark
      "\u00df",
      "\u0130",
      "\u03a3",  // ß, İ, Σ (case folding)
      "\u1100\u1161",
      "\uac00",
      "\u11a8",  // Hangul jamo, a syllable, a trailing jamo
      "\ufb01",
      "\u337b",
      "\u00bd",
      "\u2460",  // ﬁ, ㍻, ½, ①
      "\u00a0",
      "\u00ad",  // no-break space, soft hyphen
      "\U0001F600",
      "\U00020000",
      "\U0001D400",  // 😀, 𠀀, 𝐀 (math bold A)
      "\xff",
      "\xe4\xb8",
      "\xc0\xaf",
      "\xed\xa0\x80",
      "\xe0\x80\xaf",  // invalid UTF-8 (overlong, a surrogate)
      "體",
      "這",
      "們",
      "後",
      "髮",
      "乾",  // Traditional
  };
  constexpr size_t kCount = sizeof(kPieces) / sizeof(kPieces[0]);
  // Few distinct pieces make n-grams repeat; sometimes every piece. The
  // first 6 + 6 pieces (CJK, ASCII letters) alone are always taken, so many
  // texts stay on the fused path.
  const size_t alphabet = rng() % 3 == 0 ? 12 : 2 + rng() % (kCount - 1);
  const size_t length = rng() % 3 == 0 ? rng() % 8 : rng() % 400;
  std::string text;
  for (size_t i = 0; i < length; ++i) text += kPieces[rng() % alphabet];
  return text;
}

// The general path's result for `options` (what Pipeline::Fingerprint gave
// before the fused pass).
DocumentFingerprint General(const Pipeline& pipeline, const FeatureExtractor& extractor,
                            std::string_view text) {
  DocumentFingerprint out;
  out.fingerprint = extractor.SimHashOf(pipeline.Normalize(text), {}, pipeline.options().bits,
                                        pipeline.options().hash, &out.features);
  return out;
}

std::string Hex(std::string_view text) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (char c : text) {
    out += kDigits[static_cast<unsigned char>(c) >> 4];
    out += kDigits[static_cast<unsigned char>(c) & 15];
  }
  return out;
}

std::vector<uint64_t> SortedUnique(std::vector<uint64_t> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

// The sketch dedup makes of a set with repeats (dedup_stages.cc): the set's
// size is the fingerprint's feature count.
JaccardSketch Sketch(const std::vector<uint64_t>& set, size_t features) {
  JaccardSketch s = MakeJaccardSketch(set);
  s.features = static_cast<uint32_t>(features);
  return s;
}

void ExpectSameSketch(const JaccardSketch& got, const JaccardSketch& want, std::string_view text) {
  EXPECT_EQ(got.slot, want.slot) << "text " << Hex(text);
  EXPECT_EQ(got.empty, want.empty) << "text " << Hex(text);
  EXPECT_EQ(got.features, want.features) << "text " << Hex(text);
}

struct Tally {
  int taken = 0;
  int declined = 0;
};

// Pipeline::Fingerprint and the fused pass (when it takes the text) against
// the general path.
void ExpectSame(const Pipeline& pipeline, const FeatureExtractor& extractor,
                const FusedNgramSimHash* fused, std::string_view text, Tally* tally) {
  const DocumentFingerprint want = General(pipeline, extractor, text);
  const DocumentFingerprint got = pipeline.Fingerprint(text);
  ASSERT_EQ(got.fingerprint, want.fingerprint) << "text " << Hex(text);
  ASSERT_EQ(got.features, want.features) << "text " << Hex(text);
  // FingerprintAndFeatureSet against the general path it had: SimHashOf,
  // then FeatureHashOccurrences of the normalized text.
  std::vector<uint64_t> want_set;
  FeatureHashOccurrences(extractor, pipeline.Normalize(text), {}, pipeline.options().hash,
                         &want_set);
  const JaccardSketch want_sketch = Sketch(want_set, want.features);
  std::vector<uint64_t> got_set = {42};  // stale content is replaced
  const DocumentFingerprint both = pipeline.FingerprintAndFeatureSet(text, {}, &got_set);
  ASSERT_EQ(both.fingerprint, want.fingerprint) << "text " << Hex(text);
  ASSERT_EQ(both.features, want.features) << "text " << Hex(text);
  ASSERT_EQ(SortedUnique(got_set), SortedUnique(want_set)) << "text " << Hex(text);
  ExpectSameSketch(Sketch(got_set, both.features), want_sketch, text);
  if (fused == nullptr) return;
  DocumentFingerprint direct;
  if (fused->Fingerprint(text, &direct)) {
    ++tally->taken;
    ASSERT_EQ(direct.fingerprint, want.fingerprint) << "text " << Hex(text);
    ASSERT_EQ(direct.features, want.features) << "text " << Hex(text);
    // With the set: the same fingerprint, and each distinct hash once.
    std::vector<uint64_t> set = {42};
    DocumentFingerprint with_set;
    ASSERT_TRUE(fused->Fingerprint(text, &with_set, &set)) << "text " << Hex(text);
    ASSERT_EQ(with_set.fingerprint, want.fingerprint) << "text " << Hex(text);
    ASSERT_EQ(with_set.features, want.features) << "text " << Hex(text);
    ASSERT_EQ(set.size(), want.features) << "text " << Hex(text);
    ASSERT_EQ(SortedUnique(set), SortedUnique(want_set)) << "text " << Hex(text);
  } else {
    ++tally->declined;
    std::vector<uint64_t> set;
    EXPECT_FALSE(fused->Fingerprint(text, &direct, &set)) << "text " << Hex(text);
  }
}

struct Paths {
  std::unique_ptr<Pipeline> pipeline;
  std::unique_ptr<FeatureExtractor> extractor;
  std::unique_ptr<FusedNgramSimHash> fused;     // the build the CPU gets (AVX2 here, if it has it)
  std::unique_ptr<FusedNgramSimHash> baseline;  // the baseline build
};

// Both builds of the fused pass against the general path; they take and
// decline the same texts.
void ExpectSame(const Paths& s, std::string_view text, Tally* tally) {
  const int taken = tally->taken;
  ExpectSame(*s.pipeline, *s.extractor, s.fused.get(), text, tally);
  if (::testing::Test::HasFatalFailure() || s.baseline == nullptr) return;
  Tally baseline;
  ExpectSame(*s.pipeline, *s.extractor, s.baseline.get(), text, &baseline);
  EXPECT_EQ(baseline.taken, tally->taken - taken) << "text " << Hex(text);
}

Paths Make(const PipelineOptions& options) {
  Paths s;
  auto pipeline = Pipeline::Create(options);
  EXPECT_TRUE(pipeline.ok()) << pipeline.status().ToString();
  if (!pipeline.ok()) return s;
  s.pipeline = std::move(*pipeline);
  auto extractor = FeatureExtractor::Create(options.features, nullptr, nullptr);
  EXPECT_TRUE(extractor.ok()) << extractor.status().ToString();
  if (extractor.ok()) s.extractor = std::move(*extractor);
  s.fused = FusedNgramSimHash::Create(options);
  s.baseline = FusedNgramSimHash::Create(options, FusedNgramSimHash::Simd::kBaseline);
  return s;
}

TEST(FusedNgramSimHashTest, RandomMixedTextMatchesGeneralPath) {
  std::mt19937_64 rng(27);
  struct Case {
    int ngram;
    int bits;
    bool nfkc;
    bool collapse;
    WeightScheme weights;
    const char* t2s;
    bool fused;  // whether the fused pass applies
  };
  const Case cases[] = {
      {5, 128, true, false, WeightScheme::kUniform, "", true},  // chars5u, the default
      {5, 64, true, false, WeightScheme::kUniform, "", true},
      {1, 128, true, false, WeightScheme::kUniform, "", true},
      {2, 128, true, true, WeightScheme::kUniform, "", true},
      {3, 64, true, false, WeightScheme::kUniform, "", true},
      {4, 128, false, false, WeightScheme::kUniform, "", true},
      {5, 128, false, true, WeightScheme::kUniform, "", true},
      {5, 128, true, false, WeightScheme::kUniform, "t2s", false},
      {5, 128, true, false, WeightScheme::kTf, "", false},
      {6, 128, true, false, WeightScheme::kUniform, "", false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << "n " << c.ngram << " bits " << c.bits << " nfkc " << c.nfkc
                                      << " t2s '" << c.t2s << "'");
    PipelineOptions options;
    options.features.ngram = c.ngram;
    options.features.weights = c.weights;
    options.bits = c.bits;
    options.normalize.nfkc_casefold = c.nfkc;
    options.normalize.collapse_whitespace = c.collapse;
    options.normalize.t2s = c.t2s;
    const Paths s = Make(options);
    ASSERT_NE(s.pipeline, nullptr);
    ASSERT_NE(s.extractor, nullptr);
    ASSERT_EQ(s.fused != nullptr, c.fused);
    Tally tally;
    for (int round = 0; round < 600; ++round) {
      ExpectSame(s, RandomMixedText(rng), &tally);
      if (::testing::Test::HasFatalFailure()) return;
    }
    for (const char* text : {"", " ，。 ", "近似", "近似重复检", "近似重复检测", "ＡＢＣＤＥＦ",
                             "e\u0301e\u0301e\u0301e\u0301e\u0301", "\u337b\u337b\u337b"}) {
      ExpectSame(s, text, &tally);
    }
    if (c.fused) {
      // Both outcomes were exercised.
      EXPECT_GT(tally.taken, 100);
      EXPECT_GT(tally.declined, 20);
    }
  }
}

TEST(FusedNgramSimHashTest, AsciiRunsMatchGeneralPath) {
  // The fused pass takes eight ASCII bytes at a time where the tables allow
  // (NFKC_Casefold on: digits and letters kept, upper case folded, the rest
  // skipped): runs of every ASCII byte, of every length and alignment, cut
  // by non-ASCII pieces, among them a combining mark right after an ASCII
  // letter (a normalization piece of two code points: declined), a mark
  // alone after a space, invalid UTF-8.
  std::mt19937_64 rng(2027);
  static const char* const kOther[] = {"近", "\u0301", "\u00e9", "\uff21", "\xff", "\u3000"};
  struct Case {
    int ngram;
    int bits;
    bool nfkc;
    bool collapse;
  };
  for (const Case& c :
       {Case{5, 128, true, false}, Case{5, 64, true, false}, Case{1, 128, true, false},
        Case{3, 64, true, true}, Case{5, 128, false, false}}) {
    SCOPED_TRACE(::testing::Message()
                 << "n " << c.ngram << " bits " << c.bits << " nfkc " << c.nfkc);
    PipelineOptions options;
    options.features.ngram = c.ngram;
    options.bits = c.bits;
    options.normalize.nfkc_casefold = c.nfkc;
    options.normalize.collapse_whitespace = c.collapse;
    const Paths s = Make(options);
    ASSERT_NE(s.fused, nullptr);
    Tally tally;
    for (int round = 0; round < 400; ++round) {
      std::string text;
      const size_t length = rng() % 160;
      const bool letters = rng() % 2 == 0;                         // mostly letters, or any byte
      const size_t other = rng() % 4 == 0 ? 0 : 20 + rng() % 200;  // 1 in `other` not ASCII
      for (size_t i = 0; i < length; ++i) {
        if (other != 0 && rng() % other == 0) {
          text += kOther[rng() % (sizeof(kOther) / sizeof(kOther[0]))];
        } else if (letters && rng() % 8 != 0) {
          text += static_cast<char>((rng() % 2 == 0 ? 'a' : 'A') + rng() % 26);
        } else {
          text += static_cast<char>(rng() % 0x80);
        }
      }
      ExpectSame(s, text, &tally);
      if (::testing::Test::HasFatalFailure()) return;
    }
    EXPECT_GT(tally.taken, 200);
    EXPECT_GT(tally.declined, 10);
  }
}

TEST(FusedNgramSimHashTest, BlocksAtEveryOffsetMatchGeneralPath) {
  // The decoder takes sixteen ASCII bytes or five 3-byte sequences at once
  // and decodes in chunks of 128 code points: runs of ASCII and of CJK
  // (content and punctuation) long enough to fill blocks, cut by a piece the
  // blocks do not take (2- and 4-byte sequences, full-width forms,
  // ligatures and other NFKC mappings, among them one of 18 code points,
  // overlong forms, surrogates, truncated sequences, a combining mark), the
  // text shifted by every offset of a block, across chunk boundaries.
  static const char* const kCjk[] = {"近", "似", "重", "复", "检", "测", "，", "。", "\u3000"};
  static const char* const kOther[] = {
      "\u00e9",           "\u00df", "\U0001F600", "\U00020000", "\uff21",
      "\uff42",           "\ufb01", "\u337b",     "\u00bd",     "\ufdfa",
      "\u3300",           "\u0301", "\xff",       "\xe4\xb8",   "\xc0\xaf",
      "\xed\xa0\x80",      // a surrogate
      "\xe0\x80\xaf",      // overlong
      "\xe0\x9f\x80",      // overlong U+07C0 (a digit)
      "\xe0\x81\x81",      // overlong 'A'
      "\xef\xbf\xbd",      // U+FFFD
      "\xe4\xb8\xad\x80",  // a stray continuation byte
  };
  std::mt19937_64 rng(1627);
  for (const int ngram : {5, 2}) {
    PipelineOptions options;
    options.features.ngram = ngram;
    const Paths s = Make(options);
    ASSERT_NE(s.fused, nullptr);
    ASSERT_NE(s.baseline, nullptr);
    EXPECT_FALSE(s.baseline->UsesAvx2());
#if defined(__x86_64__) && defined(__GNUC__)
    EXPECT_EQ(s.fused->UsesAvx2(), __builtin_cpu_supports("avx2") != 0);
#endif
    Tally tally;
    for (int offset = 0; offset < 32; ++offset) {
      for (int round = 0; round < 24; ++round) {
        std::string text(static_cast<size_t>(offset), 'x');
        const size_t pieces = rng() % 2 == 0 ? rng() % 40 : rng() % 400;
        // Rarely a piece the blocks do not take: then the text usually
        // stays on the fused path (the invalid ones decline it).
        const size_t rare = 2 + rng() % 60;
        for (size_t p = 0; p < pieces; ++p) {
          if (rng() % rare == 0) {
            text += kOther[rng() % (sizeof(kOther) / sizeof(kOther[0]))];
          } else if (rng() % 2 == 0) {
            for (size_t r = rng() % 24; r > 0; --r) {
              text += kCjk[rng() % 8 == 0 ? 6 + rng() % 3 : rng() % 6];
            }
          } else {
            for (size_t r = rng() % 40; r > 0; --r) {
              const uint64_t x = rng() % 16;
              text += x < 6    ? static_cast<char>('a' + rng() % 26)
                      : x < 9  ? static_cast<char>('A' + rng() % 26)
                      : x < 11 ? static_cast<char>('0' + rng() % 10)
                      : x < 14 ? ' '
                               : static_cast<char>(1 + rng() % 0x7F);
            }
          }
        }
        ExpectSame(s, text, &tally);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
    EXPECT_GT(tally.taken, 300);
    EXPECT_GT(tally.declined, 50);
  }
}

TEST(FusedNgramSimHashTest, LongDocumentsGrowTheTable) {
  // Long documents, then short ones (a large table reused, stale slots of
  // earlier documents read as empty), and documents of CJK compatibility
  // squares (U+3300-U+3357: each one code point normalized to 3-5 katakana),
  // whose distinct n-grams outnumber the table sized from the code points:
  // the table grows within the document.
  const Paths s = Make(PipelineOptions());
  ASSERT_NE(s.fused, nullptr);
  std::mt19937_64 rng(5);
  Tally tally;
  auto append = [](char32_t c, std::string* text) {
    const char buf[4] = {static_cast<char>(0xE0 | (c >> 12)),
                         static_cast<char>(0x80 | ((c >> 6) & 0x3F)),
                         static_cast<char>(0x80 | (c & 0x3F)), 0};
    *text += buf;
  };
  for (int round = 0; round < 9; ++round) {
    std::string text;
    if (round % 3 == 0) {
      for (size_t i = 0; i < 30000; ++i) {
        append(0x4E00 + static_cast<char32_t>(rng() % 3000), &text);
        if (rng() % 7 == 0) text += static_cast<char>('A' + rng() % 26);
      }
    } else if (round % 3 == 1) {
      for (size_t i = 0; i < 50; ++i) append(0x4E00 + static_cast<char32_t>(rng() % 3000), &text);
    } else {
      for (size_t i = 0; i < 2048; ++i) append(0x3300 + static_cast<char32_t>(rng() % 0x58), &text);
    }
    ExpectSame(s, text, &tally);
  }
  EXPECT_EQ(tally.taken, 9);
}

TEST(FusedNgramSimHashTest, AsciiMappingsGrowTheAsciiTable) {
  // N-grams of ASCII code points have a table of their own (8-byte slots),
  // sized from the text's code points like the other; ligatures and
  // compatibility squares that normalize to two or three ASCII letters
  // (U+FB01 to "fi", U+3392 to "mhz", ...) give more ASCII n-grams than the
  // text has code points, so that table grows within the document; mixed
  // with CJK, the n-grams at the seams go to the other table.
  const Paths s = Make(PipelineOptions());
  ASSERT_NE(s.fused, nullptr);
  // The code points of U+2100-U+33FF and U+FB00-U+FB06 that normalize to
  // two or more ASCII digits and letters, and nothing else.
  auto utf8 = [](char32_t c) {
    const char buf[4] = {static_cast<char>(0xE0 | (c >> 12)),
                         static_cast<char>(0x80 | ((c >> 6) & 0x3F)),
                         static_cast<char>(0x80 | (c & 0x3F)), 0};
    return std::string(buf);
  };
  std::vector<std::string> to_ascii;
  for (char32_t c = 0x2100; c < 0xFB07; c = c == 0x33FF ? 0xFB00 : c + 1) {
    const std::string normalized = s.pipeline->Normalize(utf8(c));
    if (normalized.size() >= 2 && std::all_of(normalized.begin(), normalized.end(), [](char b) {
          return (b >= 'a' && b <= 'z') || (b >= '0' && b <= '9');
        })) {
      to_ascii.push_back(utf8(c));
    }
  }
  ASSERT_GE(to_ascii.size(), 50u);
  std::mt19937_64 rng(11);
  Tally tally;
  for (int round = 0; round < 4; ++round) {
    std::string text;
    for (size_t i = 0; i < 4096; ++i) {
      text += round % 2 == 1 && rng() % 5 == 0 ? utf8(0x4E00 + static_cast<char32_t>(rng() % 3000))
                                               : to_ascii[rng() % to_ascii.size()];
    }
    ExpectSame(s, text, &tally);
  }
  EXPECT_EQ(tally.taken, 4);
}

TEST(FusedNgramSimHashTest, AsciiChunksMatchGeneralPath) {
  // A chunk whose n-grams are all of one-byte code points makes each key
  // with one 8-byte load from the chunk's bytes, and hashes an ASCII n-gram
  // from its key: long English-like texts (many chunks of 128 code points)
  // with a rare other piece, placed anywhere, also right before a chunk
  // boundary (so that it is among the code points carried into an ASCII
  // chunk): CJK, 2- and 4-byte sequences, full-width letters and ligatures
  // that normalize to ASCII letters (one-byte code points from a mapping),
  // skipped non-ASCII (ideographic space, no-break space), a combining
  // mark, invalid UTF-8; every n, both widths, NFKC on and off.
  static const char* const kOther[] = {"近",     "\u00e9", "\U0001F600", "\uff21", "\ufb01",
                                       "\u3392", "\u3000", "\u00a0",     "\u0301", "\xff",
                                       "\u00df", "\u2460", "\uff13",     "，"};
  struct Case {
    int ngram;
    int bits;
    bool nfkc;
  };
  std::mt19937_64 rng(1128);
  for (const Case& c :
       {Case{5, 128, true}, Case{5, 64, true}, Case{4, 128, true}, Case{3, 64, true},
        Case{2, 128, true}, Case{1, 128, true}, Case{5, 128, false}, Case{2, 64, false}}) {
    SCOPED_TRACE(::testing::Message()
                 << "n " << c.ngram << " bits " << c.bits << " nfkc " << c.nfkc);
    PipelineOptions options;
    options.features.ngram = c.ngram;
    options.bits = c.bits;
    options.normalize.nfkc_casefold = c.nfkc;
    const Paths s = Make(options);
    ASSERT_NE(s.fused, nullptr);
    Tally tally;
    for (int round = 0; round < 60; ++round) {
      std::string text;
      const size_t length = 100 + rng() % 3000;
      const size_t rare = rng() % 3 == 0 ? 0 : 30 + rng() % 400;  // 0: ASCII only
      size_t content = 0;  // ASCII content bytes since the last other piece (about)
      while (text.size() < length) {
        const uint64_t x = rng() % 32;
        if (rare != 0 && (rng() % rare == 0 || (x == 0 && content % 128 >= 124))) {
          text += kOther[rng() % (sizeof(kOther) / sizeof(kOther[0]))];
          content = 0;
        } else if (x < 20) {
          text += static_cast<char>('a' + rng() % 26);
          ++content;
        } else if (x < 24) {
          text += static_cast<char>('A' + rng() % 26);
          ++content;
        } else if (x < 26) {
          text += static_cast<char>('0' + rng() % 10);
          ++content;
        } else if (x < 30) {
          text += ' ';
        } else {
          text += static_cast<char>(1 + rng() % 0x7F);
        }
      }
      ExpectSame(s, text, &tally);
      if (::testing::Test::HasFatalFailure()) return;
    }
    EXPECT_GT(tally.taken, 30);
  }
}

void CheckCorpus(const std::string& path, int expected_docs) {
  Paths s = Make(PipelineOptions());
  ASSERT_NE(s.fused, nullptr);
  std::ifstream in(path);
  std::string line;
  // The build the CPU gets on every document, the baseline build on every
  // eighth (the random tests above check it closely; this keeps the test
  // short under the sanitizers).
  Paths best_only;
  best_only.pipeline = std::move(s.pipeline);
  best_only.extractor = std::move(s.extractor);
  best_only.fused = std::move(s.fused);
  Tally tally;
  for (int doc = 0; std::getline(in, line); ++doc) {
    const std::string text = nlohmann::json::parse(line).at("text");
    ExpectSame(best_only, text, &tally);
    if (doc % 8 == 0) {
      Tally baseline;
      ExpectSame(*best_only.pipeline, *best_only.extractor, s.baseline.get(), text, &baseline);
    }
    if (::testing::Test::HasFatalFailure()) return;
  }
  EXPECT_EQ(tally.taken + tally.declined, expected_docs);
  // Real text stays on the fused path.
  EXPECT_GE(tally.taken, expected_docs * 95 / 100) << tally.declined << " declined";
}

TEST(FusedNgramSimHashTest, ThucNewsMatchesGeneralPath) {
  NEARDUP_REQUIRE_SHARED_DATA(path, "zh_thucnews1000.jsonl");
  CheckCorpus(path, 1000);
}

TEST(FusedNgramSimHashTest, BbcMatchesGeneralPath) {
  NEARDUP_REQUIRE_SHARED_DATA(path, "en_bbc2225.jsonl");
  CheckCorpus(path, 2225);
}

}  // namespace
}  // namespace neardup
