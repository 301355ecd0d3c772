// Copyright 2026 The neardup Authors.
//
// The default fingerprint in one pass over the raw text (internal to the
// library): decode UTF-8, NFKC_Casefold one code point at a time
// (text/nfkc_casefold_table.h), keep the content code points, slide the
// character n-gram window, count each distinct n-gram once and add its XXH3
// hash to a UnitSimHasher (and, for a Jaccard sketch, the n-gram's 64-bit
// hash to a set). No normalized string, no content string, no
// per-document table clearing. The decoder takes sixteen ASCII bytes or
// five 3-byte UTF-8 sequences at once where it can, and works in chunks of
// code points (fused_ngram_simhash_pass.inc).
//
// It gives exactly what Pipeline::Fingerprint's general path gives
// (Normalizer::Normalize, then FeatureExtractor::SimHashOf) for the options it
// takes (Create), and declines (returns false) any text it cannot do exactly
// that way: invalid UTF-8, a normalization piece of more than one code point
// (a letter with combining marks, Hangul jamo, ...), a code point whose
// normalization only ICU knows. The caller then takes the general path.
// tests/features/fused_ngram_simhash_test.cc checks both give the same bytes.
//
// Thread safety: immutable after Create(); Fingerprint() may be called from
// any number of threads (each thread keeps its own n-gram table).

#ifndef NEARDUP_FEATURES_FUSED_NGRAM_SIMHASH_H_
#define NEARDUP_FEATURES_FUSED_NGRAM_SIMHASH_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "neardup/fingerprint.h"
#include "neardup/pipeline.h"

namespace neardup {
namespace text {
class NfkcCasefoldTable;
}

class FusedNgramSimHash {
 public:
  // The fused pass for `options`, or null when it does not apply: it takes
  // character n-grams with n <= 5, uniform weights, top_k 0, XXH3 feature
  // hashes, 64 or 128 bits, NFKC_Casefold on or off, no t2s conversion
  // (white space collapsing changes no content character, so either).
  //
  // The pass is compiled for the baseline instruction set and, on x86-64,
  // once more for AVX2 (the ASCII blocks' bytes compacted by a byte
  // shuffle); `simd` kBest takes the AVX2 build where the CPU has it,
  // kBaseline never (tests compare both).
  enum class Simd { kBest, kBaseline };
  static std::unique_ptr<FusedNgramSimHash> Create(const PipelineOptions& options,
                                                   Simd simd = Simd::kBest);
  ~FusedNgramSimHash();

  // Whether Fingerprint() runs the AVX2 build.
  bool UsesAvx2() const { return avx2_; }

  // Sets *out to the fingerprint and number of features of `text` (raw, not
  // normalized) and returns true; false, with *out unspecified, when `text`
  // needs the general path. With `set`, also sets *set to the 64-bit XXH3
  // hash (HashFeature(gram, 64).lo) of each distinct n-gram, once each, in
  // no particular order: the set FeatureHashOccurrences gives (with repeats)
  // on the general path; *set is unspecified when it returns false.
  bool Fingerprint(std::string_view text, DocumentFingerprint* out,
                   std::vector<uint64_t>* set = nullptr) const;

  struct Tables;  // per-code-point flags (fused_ngram_simhash.cc)

 private:
  FusedNgramSimHash(int ngram, int bits, bool avx2, std::unique_ptr<Tables> tables);

  int ngram_;
  int bits_;
  bool avx2_;
  std::unique_ptr<Tables> tables_;
};

}  // namespace neardup

#endif  // NEARDUP_FEATURES_FUSED_NGRAM_SIMHASH_H_
