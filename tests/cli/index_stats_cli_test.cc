// Copyright 2026 The neardup Authors.
//
// `neardup index stats` of an index of probe tables (the default method's
// kind from 65,536 fingerprints, doc/index_format.md): its JSON and its
// text output state the layout the cost model chose: L tables of b-bit
// keys, the probe radius r, the filter words' threshold t, the recall at
// d = max k that layout has, and its table bytes per fingerprint.

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "index/probe_tables.h"
#include "tests/testing/hamming_oracle.h"
#include "tests/testing/test_util.h"

namespace neardup {
namespace {

using ::neardup::testing::MakeTempDir;
using ::neardup::testing::RunCli;
using ::neardup::testing::WriteFile;

TEST(IndexStatsCliTest, ProbeTablesStateTheirLayout) {
  constexpr size_t kRows = 66000;  // above 65,536: probe tables at k = 28
  constexpr int kK = 28;
  const std::string dir = MakeTempDir("index_stats_probe");
  std::mt19937_64 rng(26);
  std::string input;
  for (size_t i = 0; i < kRows; ++i) {
    input += "{\"id\": \"d" + std::to_string(i) + "\", \"fingerprint\": \"" +
             testing::RandomFingerprint(128, rng).ToHex() + "\"}\n";
  }
  WriteFile(dir + "/fp.jsonl", input);
  const std::string idx = dir + "/p.idx";
  auto r = RunCli({"index", "build", "--fingerprints", dir + "/fp.jsonl", "-o", idx, "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;

  r = RunCli({"index", "stats", idx, "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["bits"], 128);
  ASSERT_EQ(j["max_k"], kK);
  const auto& t = j["tables"];
  ASSERT_EQ(t["kind"], "probe") << r.out;

  // The layout ChooseTables picks for these rows at the default recall.
  const index_internal::ProbeTablesSpec want =
      index_internal::ChooseProbeTables(kRows, kK, 0.99, index_internal::kMaxProbeBytes);
  ASSERT_GT(want.tables, 0);
  EXPECT_EQ(t["tables"], want.tables);
  EXPECT_EQ(t["key_bits"], want.key_bits);
  EXPECT_EQ(t["probe_radius"], want.radius);
  EXPECT_EQ(t["filter_threshold"], want.threshold);
  EXPECT_DOUBLE_EQ(t["bytes_per_fingerprint"].get<double>(), want.bytes_per_fingerprint);

  // And the printed fields are a layout whose recall at d = k is the one
  // printed, whose tables take 12 bytes a row and table plus directories.
  index_internal::ProbeTablesSpec printed;
  printed.tables = t["tables"].get<int>();
  printed.key_bits = t["key_bits"].get<int>();
  printed.radius = t["probe_radius"].get<int>();
  printed.threshold = t["filter_threshold"].get<int>();
  EXPECT_NEAR(index_internal::ProbeTablesRecall(printed, kK), t["recall_at_k"].get<double>(),
              1e-12);
  EXPECT_GE(t["recall_at_k"].get<double>(), 0.99);
  EXPECT_NEAR(t["bytes_per_fingerprint"].get<double>(),
              printed.tables * (12.0 + 4.0 * (std::ldexp(1.0, printed.key_bits) + 1) / kRows),
              1e-9);
  for (const char* name : {"band_bits", "seed", "low_word_threshold", "blocks"}) {
    EXPECT_FALSE(t.contains(name)) << name;
  }

  // The text output is the same object, indented.
  r = RunCli({"index", "stats", idx});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\n  \"tables\": {"), std::string::npos) << r.out;
  EXPECT_EQ(nlohmann::json::parse(r.out)["tables"], t);
}

}  // namespace
}  // namespace neardup
