// Copyright 2026 The neardup Authors.
//
// SHA-256 (OpenSSL EVP) for the store's content addressing.

#ifndef NEARDUP_STORE_SHA256_H_
#define NEARDUP_STORE_SHA256_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace neardup::store_internal {

using Sha256Digest = std::array<uint8_t, 32>;

// The SHA-256 digest of `data`. Aborts only if OpenSSL cannot provide SHA-256.
Sha256Digest Sha256(std::string_view data);

// 64 lower-case hex digits.
std::string DigestHex(const Sha256Digest& digest);

inline std::string_view DigestBytes(const Sha256Digest& digest) {
  return {reinterpret_cast<const char*>(digest.data()), digest.size()};
}

}  // namespace neardup::store_internal

#endif  // NEARDUP_STORE_SHA256_H_
