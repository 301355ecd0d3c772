// Copyright 2026 The neardup Authors.
//
// DedupJob::Run holds the documents' ids in one block of bytes
// (engine/id_block.h) instead of DedupCorpus::ids: the records, pairs and
// clusters name the same documents, and repeated ids are found by the same
// rule as FindRepeatedIds; Fingerprint alone still fills DedupCorpus::ids.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "engine/id_block.h"
#include "neardup/dedup_job.h"

namespace neardup {
namespace {

TEST(IdBlockTest, HoldsEveryIdAsAppended) {
  const std::vector<std::string> ids = {
      "", "d0", "sr10m.txt:1234567", std::string(1000, 'x'), "网页去重:7", std::string("a\0b", 3),
      ""};
  engine_internal::IdBlock block;
  block.reserve(2);  // fewer than pushed: the offsets grow
  for (const std::string& id : ids) block.push_back(id);
  ASSERT_EQ(block.size(), ids.size());
  for (size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(block[i], ids[i]) << i;
}

// Ends are 32-bit within chunks of 4,096 ids, and 64-bit once a chunk's ids
// take more than the narrow limit (4 GiB; here 400 bytes: at once; 100,000:
// in the fourth chunk): every
// id reads back across chunks and across the switch.
TEST(IdBlockTest, ChunksAndTheSwitchToWideEndsKeepEveryId) {
  std::mt19937_64 rng(9);
  std::vector<std::string> ids;
  for (int i = 0; i < 20000; ++i) {
    ids.push_back("sr10m.txt:" + std::to_string(i) + std::string(rng() % 3, 'x'));
  }
  ids[15000] = std::string(200000, 'y');  // widens at 100,000 (4,096 ids take ~65 KB)
  for (const uint64_t limit : {uint64_t{UINT32_MAX}, uint64_t{400}, uint64_t{100000}}) {
    engine_internal::IdBlock block(limit);
    block.reserve(100);
    for (const std::string& id : ids) block.push_back(id);
    ASSERT_EQ(block.size(), ids.size());
    for (size_t i = 0; i < ids.size(); ++i) ASSERT_EQ(block[i], ids[i]) << limit << " " << i;
  }
}

// Near copies of a few texts under long ids (not held inline by a
// std::string), two documents sharing an id.
std::shared_ptr<const std::vector<Document>> Copies() {
  std::mt19937_64 rng(5);
  auto docs = std::make_shared<std::vector<Document>>();
  for (int t = 0; t < 6; ++t) {
    std::string text;
    for (int w = 0; w < 80; ++w) {
      for (int c = 0; c < 5; ++c) text += static_cast<char>('a' + rng() % 26);
      text += ' ';
    }
    for (int copy = 0; copy < 4; ++copy) {
      Document d;
      d.id = "a-long-document-id/" + std::to_string(t) + "/" + std::to_string(copy);
      d.text = text + (copy == 0 ? "" : "edited " + std::to_string(copy));
      docs->push_back(std::move(d));
    }
  }
  (*docs)[9].id = (*docs)[2].id;
  return docs;
}

TEST(DedupJobIdsTest, RunNamesTheDocumentsItsFingerprintPassRead) {
  const auto docs = Copies();
  std::vector<std::string> ids;
  for (const Document& d : *docs) ids.push_back(d.id);
  DedupJobOptions o;
  o.threads = 1;
  auto job = DedupJob::Create(o);
  ASSERT_TRUE(job.ok()) << job.status().message();
  std::vector<nlohmann::json> records, pairs, clusters;
  DedupJobOutputs outputs;
  outputs.records = [&](std::string_view l) { records.push_back(nlohmann::json::parse(l)); };
  outputs.pairs = [&](std::string_view l) { pairs.push_back(nlohmann::json::parse(l)); };
  outputs.clusters = [&](std::string_view l) { clusters.push_back(nlohmann::json::parse(l)); };
  auto summary = (*job)->Run(DocumentsInput(docs), outputs);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  const DedupResult& r = summary->result;
  ASSERT_EQ(records.size(), docs->size());
  EXPECT_GE(r.summary.duplicates, 12u);
  for (size_t i = 0; i < records.size(); ++i) {
    EXPECT_EQ(records[i]["id"], ids[i]) << i;
    if (r.records[i].duplicate) {
      EXPECT_EQ(records[i]["nearest"], ids[r.records[i].nearest]) << i;
    }
  }
  EXPECT_FALSE(pairs.empty());
  for (const nlohmann::json& p : pairs) {
    EXPECT_NE(std::find(ids.begin(), ids.end(), p["a"]), ids.end()) << p.dump();
    EXPECT_NE(std::find(ids.begin(), ids.end(), p["b"]), ids.end()) << p.dump();
  }
  ASSERT_FALSE(clusters.empty());
  for (const nlohmann::json& c : clusters) {
    for (const nlohmann::json& m : c["members"]) {
      EXPECT_NE(std::find(ids.begin(), ids.end(), m), ids.end()) << c.dump();
    }
  }
  const RepeatedIds want = FindRepeatedIds(ids);
  EXPECT_EQ(want.count, 1u);
  EXPECT_EQ(summary->repeated_ids.count, want.count);
  EXPECT_EQ(summary->repeated_ids.id, want.id);
  EXPECT_EQ(summary->repeated_ids.first, want.first);
  EXPECT_EQ(summary->repeated_ids.first_of, want.first_of);

  // The fingerprint stage alone (neardup-mpi's) fills DedupCorpus::ids.
  auto again = DedupJob::Create(o);
  ASSERT_TRUE(again.ok());
  DedupCorpus corpus;
  ASSERT_TRUE((*again)->Fingerprint(DocumentsInput(docs), &corpus).ok());
  EXPECT_EQ(corpus.ids, ids);
}

// FindRepeatedIds against its definition, pair by pair: the ids that occur
// at an earlier document, the first such document, and where its id first
// occurred (random ids from a small alphabet: many repeats, long runs).
TEST(DedupJobIdsTest, RepeatedIdsMatchTheDefinition) {
  std::mt19937_64 rng(27);
  for (int round = 0; round < 200; ++round) {
    const size_t n = rng() % 60;
    const size_t alphabet = 1 + rng() % 40;
    std::vector<std::string> ids(n);
    for (std::string& id : ids) id = "doc-" + std::to_string(rng() % alphabet);
    RepeatedIds want;
    for (size_t i = 0; i < n; ++i) {
      for (size_t j = 0; j < i; ++j) {
        if (ids[j] != ids[i]) continue;
        if (want.count++ == 0) {
          want.first = i;
          want.first_of = j;
          want.id = ids[i];
        }
        break;
      }
    }
    const RepeatedIds got = FindRepeatedIds(ids);
    EXPECT_EQ(got.count, want.count) << round;
    EXPECT_EQ(got.id, want.id) << round;
    EXPECT_EQ(got.first, want.first) << round;
    EXPECT_EQ(got.first_of, want.first_of) << round;
  }
}

}  // namespace
}  // namespace neardup
