// Copyright 2026 The neardup Authors.
//
// Cluster-mode dedup's memory grows with the documents, not with the pairs:
// a million identical documents (5 * 10^11 pairs) and a million documents
// sharing a thousand templates (5 * 10^8 pairs) stay under a fixed bound.
// Each case runs in a child process under an address-space limit, so a
// regression fails the test (bad_alloc) instead of exhausting the machine.

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "neardup/dedup.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define NEARDUP_MEMORY_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define NEARDUP_MEMORY_TEST_SANITIZED 1
#endif
#endif

namespace neardup {
namespace {

constexpr size_t kDocuments = 1'000'000;
// The stated bound: peak resident memory that Dedup adds for 10^6 documents
// (its records alone are about 56 MB).
constexpr uint64_t kMaxGrowthBytes = uint64_t{400} << 20;
// The child's address-space limit: far above the bound, far below what a
// pair list of either case would need.
constexpr rlim_t kAddressSpaceLimit = rlim_t{4} << 30;

// A field of /proc/self/status in bytes ("VmHWM:   1234 kB"), or 0.
uint64_t ProcStatusBytes(const std::string& field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field + ":", 0) == 0) {
      return std::stoull(line.substr(field.size() + 1)) * 1024;
    }
  }
  return 0;
}

// Runs Dedup(docs, options) in a child process; `check` says whether the
// result is right. Returns the growth of the child's peak resident memory
// during the call; fails the test when the child fails or dies.
void RunInChild(const std::vector<DedupDocument>& docs, const DedupOptions& options,
                const std::function<bool(const DedupResult&)>& check, uint64_t* growth) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::fflush(nullptr);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    const rlimit limit{kAddressSpaceLimit, kAddressSpaceLimit};
    setrlimit(RLIMIT_AS, &limit);
    // "5" resets VmHWM to the current resident size (Linux >= 4.0).
    { std::ofstream("/proc/self/clear_refs") << "5"; }
    const uint64_t before = std::max(ProcStatusBytes("VmHWM"), ProcStatusBytes("VmRSS"));
    auto result = Dedup(docs, options);
    const uint64_t after = ProcStatusBytes("VmHWM");
    if (!result.ok()) {
      std::fprintf(stderr, "Dedup failed: %s\n", result.status().message().c_str());
      _exit(2);
    }
    if (!check(*result)) _exit(3);
    const uint64_t grew = after > before ? after - before : 0;
    if (write(fds[1], &grew, sizeof grew) != static_cast<ssize_t>(sizeof grew)) _exit(4);
    _exit(0);
  }
  close(fds[1]);
  uint64_t grew = 0;
  const ssize_t got = read(fds[0], &grew, sizeof grew);
  close(fds[0]);
  int wstatus = 0;
  ASSERT_EQ(waitpid(pid, &wstatus, 0), pid);
  ASSERT_TRUE(WIFEXITED(wstatus)) << "child killed by signal "
                                  << (WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0)
                                  << " (out of memory under the address-space limit?)";
  ASSERT_EQ(WEXITSTATUS(wstatus), 0) << "2: Dedup failed, 3: wrong result";
  ASSERT_EQ(got, static_cast<ssize_t>(sizeof grew));
  *growth = grew;
}

class DedupMemoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
#ifdef NEARDUP_MEMORY_TEST_SANITIZED
    GTEST_SKIP() << "memory bounds are not meaningful under sanitizers";
#endif
  }
};

TEST_F(DedupMemoryTest, MillionIdenticalDocuments) {
  const Fingerprint fp = Fingerprint::From64(0x0123456789abcdefULL);
  std::vector<DedupDocument> docs(kDocuments);
  for (DedupDocument& d : docs) d.fingerprint = fp;
  DedupOptions opt;
  opt.k = 3;
  opt.threads = 2;
  uint64_t growth = 0;
  RunInChild(
      docs, opt,
      [](const DedupResult& r) {
        if (r.summary.documents != kDocuments || r.summary.duplicates != kDocuments - 1 ||
            r.summary.clusters != 1 || !r.pairs.empty()) {
          return false;
        }
        for (size_t i = 0; i < kDocuments; ++i) {
          const DedupRecord& rec = r.records[i];
          if (rec.cluster != 0 || rec.nearest != 0 || rec.duplicate != (i != 0) ||
              rec.distance != 0) {
            return false;
          }
          if (i != 0 && (rec.nearest_within_k != size_t{0} || rec.distance_within_k != 0)) {
            return false;
          }
        }
        return true;
      },
      &growth);
  std::printf("peak memory growth for %zu identical documents: %.1f MB\n", kDocuments,
              growth / 1048576.0);
  EXPECT_LT(growth, kMaxGrowthBytes);
}

// 1000 random templates; document i is template i % 1000 with bit
// (i / 1000) % 8 flipped (none for 0): 8 distinct fingerprints per template,
// all within 2 of each other, 1000 documents per cluster.
TEST_F(DedupMemoryTest, MillionDocumentsSharingTemplates) {
  constexpr size_t kTemplates = 1000;
  std::mt19937_64 rng(42);
  std::vector<uint64_t> templates(kTemplates);
  for (uint64_t& t : templates) t = rng();
  std::vector<DedupDocument> docs(kDocuments);
  auto variant = [](size_t i) { return static_cast<int>((i / kTemplates) % 8); };
  for (size_t i = 0; i < kDocuments; ++i) {
    uint64_t w = templates[i % kTemplates];
    if (variant(i) != 0) w ^= uint64_t{1} << variant(i);
    docs[i].fingerprint = Fingerprint::From64(w);
  }
  // Random templates are far apart, so the clusters are the templates.
  for (size_t a = 0; a < kTemplates; ++a) {
    for (size_t b = a + 1; b < kTemplates; ++b) {
      ASSERT_GT(std::popcount(templates[a] ^ templates[b]), 3 + 4);
    }
  }
  DedupOptions opt;
  opt.k = 3;
  opt.threads = 2;
  uint64_t growth = 0;
  RunInChild(
      docs, opt,
      [&variant](const DedupResult& r) {
        if (r.summary.duplicates != kDocuments - kTemplates || r.summary.clusters != kTemplates ||
            r.summary.clusters_with_duplicates != kTemplates) {
          return false;
        }
        for (size_t i = 0; i < kDocuments; ++i) {
          const DedupRecord& rec = r.records[i];
          const size_t t = i % kTemplates;
          const int d = variant(i) == 0 ? 0 : 1;
          if (rec.cluster != t || rec.nearest != t || rec.duplicate != (i != t) ||
              rec.distance != (i == t ? 0 : d)) {
            return false;
          }
          if (i != t && (rec.nearest_within_k != t || rec.distance_within_k != d)) return false;
        }
        return true;
      },
      &growth);
  std::printf("peak memory growth for %zu template-sharing documents: %.1f MB\n", kDocuments,
              growth / 1048576.0);
  EXPECT_LT(growth, kMaxGrowthBytes);
}

// The exact join of 4,950 distinct fingerprints within 4 bits of each other
// (a template with 2 of its first 100 bits flipped, every way): 12 million
// pairs, 290 MB as a list. Cluster mode without pairs keeps a spanning forest
// of them (PermutedTableIndex::SelfJoinStream), so memory stays with the
// documents.
TEST_F(DedupMemoryTest, ExactJoinOfManyDistinctNearCopiesKeepsNoPairList) {
  std::mt19937_64 rng(5);
  const uint64_t hi = rng(), lo = rng();
  std::vector<DedupDocument> docs;
  for (int a = 0; a < 100; ++a) {
    for (int b = a + 1; b < 100; ++b) {
      uint64_t h = hi, l = lo;
      for (int bit : {a, b}) {
        if (bit < 64) {
          l ^= uint64_t{1} << bit;
        } else {
          h ^= uint64_t{1} << (bit - 64);
        }
      }
      docs.push_back({Fingerprint::From128(h, l)});
    }
  }
  DedupOptions opt;
  opt.cluster_rule = ClusterRule::kComponents;  // the rule under test
  opt.k = 4;
  opt.join = DedupJoin::kExact;
  opt.threads = 2;
  uint64_t growth = 0;
  const size_t n = docs.size();
  RunInChild(
      docs, opt,
      [n](const DedupResult& r) {
        return r.summary.clusters == 1 && r.summary.duplicates == n - 1 &&
               r.join.confirmed == n * (n - 1) / 2 && !r.join.banded;
      },
      &growth);
  std::printf("peak memory growth for %zu near copies (%zu pairs): %.1f MB\n", n, n * (n - 1) / 2,
              growth / 1048576.0);
  EXPECT_LT(growth, uint64_t{64} << 20);
}

// The pair sink receives what collect_pairs stores, in the same order,
// without the caller holding them.
TEST(DedupPairSinkTest, SinkMatchesCollectedPairs) {
  std::mt19937_64 rng(7);
  std::vector<DedupDocument> docs;
  std::vector<Fingerprint> seeds;
  for (int i = 0; i < 2000; ++i) {
    DedupDocument d;
    if (!seeds.empty() && rng() % 2 == 0) {
      uint64_t w = seeds[rng() % seeds.size()].lo();
      const int flips = static_cast<int>(rng() % 4);
      for (int f = 0; f < flips; ++f) w ^= uint64_t{1} << (rng() % 64);
      d.fingerprint = Fingerprint::From64(w);
    } else {
      d.fingerprint = Fingerprint::From64(rng());
      seeds.push_back(d.fingerprint);
    }
    d.empty = rng() % 25 == 0;
    docs.push_back(d);
  }
  for (DedupMode mode : {DedupMode::kCluster, DedupMode::kStream}) {
    DedupOptions opt;
    opt.k = 3;
    opt.mode = mode;
    opt.collect_pairs = true;
    auto collected = Dedup(docs, opt);
    ASSERT_TRUE(collected.ok());
    ASSERT_GT(collected->pairs.size(), 100u);
    std::vector<DedupPair> sunk;
    opt.collect_pairs = false;
    opt.pair_sink = [&sunk](const DedupPair& p) { sunk.push_back(p); };
    auto streamed = Dedup(docs, opt);
    ASSERT_TRUE(streamed.ok());
    EXPECT_TRUE(streamed->pairs.empty());
    EXPECT_EQ(sunk, collected->pairs);
  }
}

}  // namespace
}  // namespace neardup
