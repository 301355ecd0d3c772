// Copyright 2026 The neardup Authors.
//
// XXH3_128bits (seed 0, the default secret) of ASCII n-grams eight at a time
// with AVX-512 (internal to the fused n-gram pass, fused_ngram_simhash.cc:
// the new ASCII n-grams of a chunk). Each n-gram comes as its key in the
// pass's ASCII table (its n characters at 7 bits each, the first in the
// highest bits); the input bytes are made from the keys (vpmultishiftqb),
// nothing is gathered, and XXH3's 4-8 byte path runs on eight lanes: its
// 64x64->128-bit product from four 32x32->64-bit ones (vpmuludq), the
// 64-bit products with vpmullq. Bit-identical to XXH3_128bits of the
// n-gram's bytes (tests/features/fused_ngram_simhash_xxh3x8_test.cc).

#ifndef NEARDUP_FEATURES_FUSED_NGRAM_SIMHASH_XXH3X8_H_
#define NEARDUP_FEATURES_FUSED_NGRAM_SIMHASH_XXH3X8_H_

#include <cstddef>
#include <cstdint>

namespace neardup {
namespace fused {

// Whether this build has the eight-lane hash and the CPU runs it (x86-64
// with AVX-512 F, DQ and VBMI). Elsewhere Xxh3AsciiKeys128x8 hashes one key
// at a time.
bool Xxh3x8Supported();

// Sets hi[f], lo[f] to the high and low words of XXH3_128bits of the n
// bytes of keys[f], f < count: byte i is bits [7 (n - 1 - i), 7 (n - i)) of
// the key. REQUIRES: 4 <= n <= 5, every key below 2^(7 n); on x86-64,
// Xxh3x8Supported().
void Xxh3AsciiKeys128x8(const uint64_t* keys, size_t count, int n, uint64_t* hi, uint64_t* lo);

}  // namespace fused
}  // namespace neardup

#endif  // NEARDUP_FEATURES_FUSED_NGRAM_SIMHASH_XXH3X8_H_
