// Copyright 2026 The neardup Authors.
//
// Internal: fingerprints as machine words. A 64-bit fingerprint is a uint64_t;
// a 128-bit one is an unsigned __int128 whose upper half is Fingerprint::hi().
// Bit j of the word is bit j of the fingerprint, so XOR and popcount on words
// give Hamming distances and bit permutations of words are plain shifts.

#ifndef NEARDUP_INDEX_WORD_H_
#define NEARDUP_INDEX_WORD_H_

#include <bit>
#include <cstdint>

#include "neardup/fingerprint.h"

namespace neardup::index_internal {

__extension__ typedef unsigned __int128 Uint128;

template <typename W>
inline constexpr int kWordBits = static_cast<int>(sizeof(W) * 8);

inline int Popcount(uint64_t x) { return std::popcount(x); }
inline int Popcount(Uint128 x) {
  return std::popcount(static_cast<uint64_t>(x)) + std::popcount(static_cast<uint64_t>(x >> 64));
}

template <typename W>
W ToWord(const Fingerprint& fp);
template <>
inline uint64_t ToWord<uint64_t>(const Fingerprint& fp) {
  return fp.lo();
}
template <>
inline Uint128 ToWord<Uint128>(const Fingerprint& fp) {
  return (static_cast<Uint128>(fp.hi()) << 64) | fp.lo();
}

inline Fingerprint FromWord(uint64_t w) { return Fingerprint::From64(w); }
inline Fingerprint FromWord(Uint128 w) {
  return Fingerprint::From128(static_cast<uint64_t>(w >> 64), static_cast<uint64_t>(w));
}

// The low `len` bits set. REQUIRES: 0 <= len <= kWordBits<W>.
template <typename W>
constexpr W LowMask(int len) {
  return len >= kWordBits<W> ? ~W{0} : ((W{1} << len) - 1);
}

}  // namespace neardup::index_internal

#endif  // NEARDUP_INDEX_WORD_H_
