// Copyright 2026 The neardup Authors.

#include <openssl/evp.h>

#include <cassert>
#include <cstring>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "neardup/fingerprint.h"

namespace neardup {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

uint64_t ReadBigEndian64(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | p[i];
  return v;
}

// Adds +w to v[j] where bit j of `word` is set and -w where it is clear.
// Branch-free: the compiler vectorizes this loop.
inline void Accumulate64(uint64_t word, double w, double* v) {
  for (int j = 0; j < 64; ++j) {
    const double sign = static_cast<double>(static_cast<int>((word >> j) & 1u) * 2 - 1);
    v[j] += sign * w;
  }
}

}  // namespace

Result<Fingerprint> Fingerprint::FromHex(std::string_view hex) {
  if (hex.size() != 16 && hex.size() != 32) {
    return Status::InvalidArgument("fingerprint must have 16 or 32 hex digits, got " +
                                   std::to_string(hex.size()) + ": '" + std::string(hex) + "'");
  }
  uint64_t words[2] = {0, 0};
  for (size_t i = 0; i < hex.size(); ++i) {
    const int d = HexValue(hex[i]);
    if (d < 0) {
      return Status::InvalidArgument("fingerprint has a non-hex character at position " +
                                     std::to_string(i) + ": '" + std::string(hex) + "'");
    }
    uint64_t& w = words[i / 16];
    w = (w << 4) | static_cast<uint64_t>(d);
  }
  if (hex.size() == 16) return From64(words[0]);
  return From128(words[0], words[1]);
}

std::string Fingerprint::ToHex() const {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(static_cast<size_t>(bits_ / 4), '0');
  size_t pos = out.size();
  for (int j = 0; j < bits_; j += 4) {
    const uint64_t word = j < 64 ? lo_ : hi_;
    out[--pos] = kDigits[(word >> (j % 64)) & 0xf];
  }
  return out;
}

FeatureHash HashFeature(std::string_view text, int bits, FeatureHashAlgorithm algorithm) {
  assert(bits == 64 || bits == 128);
  FeatureHash h;
  if (algorithm == FeatureHashAlgorithm::kMd5) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_Digest(text.data(), text.size(), digest, &len, EVP_md5(), nullptr);
    if (bits == 64) {
      h.lo = ReadBigEndian64(digest);
    } else {
      h.hi = ReadBigEndian64(digest);
      h.lo = ReadBigEndian64(digest + 8);
    }
    return h;
  }
  if (bits == 64) {
    h.lo = XXH3_64bits(text.data(), text.size());
  } else {
    const XXH128_hash_t x = XXH3_128bits(text.data(), text.size());
    h.hi = x.high64;
    h.lo = x.low64;
  }
  return h;
}

SimHasher::SimHasher(int bits) : bits_(bits) { assert(bits == 64 || bits == 128); }

void SimHasher::Add(const FeatureHash& hash, double weight) {
  Accumulate64(hash.lo, weight, v_.data());
  if (bits_ == 128) Accumulate64(hash.hi, weight, v_.data() + 64);
  ++count_;
}

Fingerprint SimHasher::Finish() const {
  uint64_t words[2] = {0, 0};
  for (int j = 0; j < bits_; ++j) {
    if (v_[j] > 0) words[j / 64] |= uint64_t{1} << (j % 64);
  }
  return bits_ == 64 ? Fingerprint::From64(words[0]) : Fingerprint::From128(words[1], words[0]);
}

void SimHasher::Reset() {
  v_.fill(0.0);
  count_ = 0;
}

}  // namespace neardup
