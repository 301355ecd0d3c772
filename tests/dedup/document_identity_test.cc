// Copyright 2026 The neardup Authors.
//
// dedup_internal::DocumentIdentity: the key identical documents are grouped
// by, the same for neardup dedup and neardup-mpi, for either method.

#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "dedup/stages.h"

namespace neardup {
namespace {

TEST(DocumentIdentityTest, SimHashKeyIsTheFingerprint) {
  std::vector<DedupDocument> docs(2);
  docs[0].fingerprint = Fingerprint::From128(7, 9);
  docs[1].fingerprint = Fingerprint::From64(42);
  const dedup_internal::IdentityKey key = dedup_internal::DocumentIdentity(docs, {}, 0);
  EXPECT_EQ(key(0), (std::pair<uint64_t, uint64_t>(7, 9)));
  EXPECT_EQ(key(1), (std::pair<uint64_t, uint64_t>(0, 42)));
  // GroupIdentical's groups are GroupByKey's on this key.
  const dedup_internal::Groups want = dedup_internal::GroupIdentical(docs);
  const dedup_internal::Groups got = dedup_internal::GroupByKey(docs, key);
  EXPECT_EQ(got.members, want.members);
  EXPECT_EQ(got.of, want.of);
}

TEST(DocumentIdentityTest, MinHashKeyIsTheSignaturesIdentity) {
  const size_t perm = 4;
  std::vector<DedupDocument> docs(3);
  const std::vector<uint32_t> signatures = {1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4};
  const dedup_internal::IdentityKey key = dedup_internal::DocumentIdentity(docs, signatures, perm);
  const std::span<const uint32_t> all(signatures);
  for (size_t i = 0; i < docs.size(); ++i) {
    EXPECT_EQ(key(i), dedup_internal::MinHashIdentity(all.subspan(i * perm, perm)));
  }
  EXPECT_EQ(key(0), key(2));
  EXPECT_NE(key(0), key(1));
}

}  // namespace
}  // namespace neardup
