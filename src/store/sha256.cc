// Copyright 2026 The neardup Authors.

#include "store/sha256.h"

#include <openssl/evp.h>

#include <cstdlib>
#include <memory>

namespace neardup::store_internal {
namespace {

struct MdCtxDeleter {
  void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
};

}  // namespace

Sha256Digest Sha256(std::string_view data) {
  // One context per thread, reused: creating one per call costs more than
  // hashing a short sentence.
  thread_local std::unique_ptr<EVP_MD_CTX, MdCtxDeleter> ctx(EVP_MD_CTX_new());
  Sha256Digest digest{};
  unsigned int len = 0;
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1 ||
      EVP_DigestUpdate(ctx.get(), data.data(), data.size()) != 1 ||
      EVP_DigestFinal_ex(ctx.get(), digest.data(), &len) != 1 || len != digest.size()) {
    std::abort();  // OpenSSL without SHA-256: nothing sensible can continue.
  }
  return digest;
}

std::string DigestHex(const Sha256Digest& digest) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(64);
  for (uint8_t b : digest) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
  return out;
}

}  // namespace neardup::store_internal
