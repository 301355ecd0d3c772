// Copyright 2026 The neardup Authors.

#include "neardup/store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "neardup/pipeline.h"
#include "neardup/presets.h"
#include "neardup/text.h"
#include "tests/testing/test_util.h"

namespace neardup {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

std::unique_ptr<Store> OpenOrDie(const std::string& path, StoreOptions options = {}) {
  auto store = Store::Open(path, options);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return store.ok() ? std::move(*store) : nullptr;
}

StoreOptions WithChunker(const std::string& spec) {
  StoreOptions options;
  options.chunker = *ParseChunkerSpec(spec);
  return options;
}

const std::vector<std::pair<std::string, std::string>>& TrickyFiles() {
  static const auto* files = new std::vector<std::pair<std::string, std::string>>{
      {"empty", ""},
      {"no_final_newline", "第一段。第二句！\n最后一段没有换行"},
      {"crlf", "甲。乙！\r\n丙？\r\n\r\n丁\r\n"},
      {"invalid_utf8", std::string("ok\xff\xfe\x80 bad。\n\xc3(\n\xe4\xb8", 17)},
      {"nul_bytes", std::string("a\0b\n\0\0\n", 7)},
      {"only_newlines", "\n\n\n"},
      {"lone_cr", "one\rtwo\r"},
  };
  return *files;
}

class StoreRoundTripTest : public ::testing::TestWithParam<std::string> {};

TEST_P(StoreRoundTripTest, EveryFileComesBackByteForByte) {
  const std::string dir = testing::MakeTempDir("roundtrip");
  auto store = OpenOrDie(dir + "/s.db", WithChunker(GetParam()));
  ASSERT_TRUE(store);
  for (const auto& [name, content] : TrickyFiles()) {
    ASSERT_TRUE(store->Add(name, content).ok()) << name;
  }
  // Twice, so that the second round is served by dedup.
  for (const auto& [name, content] : TrickyFiles()) {
    ASSERT_TRUE(store->Add(name + ".2", content).ok()) << name;
  }
  for (const auto& [name, content] : TrickyFiles()) {
    for (const std::string& n : {name, name + ".2"}) {
      Result<std::string> got = store->Get(n);
      ASSERT_TRUE(got.ok()) << n << ": " << got.status().ToString();
      EXPECT_EQ(*got, content) << n;
    }
  }
  auto problems = store->Verify();
  ASSERT_TRUE(problems.ok());
  EXPECT_TRUE(problems->empty());
  auto st = store->Stats();
  ASSERT_TRUE(st.ok());
  uint64_t total = 0;
  for (const auto& f : TrickyFiles()) total += f.second.size();
  EXPECT_EQ(st->files, 2 * TrickyFiles().size());
  EXPECT_EQ(st->bytes_in, 2 * total);
  EXPECT_LE(st->bytes_out, total);  // the second copy costs nothing
}

INSTANTIATE_TEST_SUITE_P(Chunkers, StoreRoundTripTest,
                         ::testing::Values("simhash", "exact-paragraph", "fsp:16", "fsp:4096",
                                           "cdc:64", "cdc:1024"),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& c : s) {
                             if (c == ':' || c == '-') c = '_';
                           }
                           return s;
                         });

// A repetitive but varied payload: lines drawn from a pool, some edited.
std::string MakeLargePayload(size_t bytes, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::string> pool;
  for (int i = 0; i < 3000; ++i) {
    std::string line;
    const int sentences = 2 + static_cast<int>(rng() % 12);
    for (int s = 0; s < sentences; ++s) {
      line += "第" + std::to_string(rng() % 100000) + "句话，内容" + std::to_string(i) + "。";
    }
    pool.push_back(line);
  }
  std::string out;
  out.reserve(bytes + 4096);
  while (out.size() < bytes) {
    std::string line = pool[rng() % pool.size()];
    if (rng() % 8 == 0) line.insert(rng() % line.size() / 3 * 3, "改");
    out += line;
    out += (rng() % 5 == 0) ? "\r\n" : "\n";
  }
  out.resize(bytes);
  return out;
}

TEST(StoreTest, LargeFileRoundTrip) {
  // 100 MB in normal builds; sanitizers make every byte ~10x slower.
  const size_t size = kSanitized ? (size_t{8} << 20) : size_t{100} * 1000 * 1000;
  const std::string dir = testing::MakeTempDir("large");
  auto store = OpenOrDie(dir + "/s.db");
  ASSERT_TRUE(store);
  const std::string payload = MakeLargePayload(size, 42);
  ASSERT_TRUE(store->Add("big", payload).ok());
  Result<std::string> got = store->Get("big");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(*got == payload);
  auto st = store->Stats();
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->bytes_in, size);
  EXPECT_GT(st->dedup_rate, 0.5);  // the payload repeats a small pool of lines
}

TEST(StoreTest, ExactDuplicateBlocksAreReferenced) {
  const std::string dir = testing::MakeTempDir("exact");
  auto store = OpenOrDie(dir + "/s.db");
  ASSERT_TRUE(store);
  const std::string para = "甲乙丙丁。戊己庚辛！壬癸子丑？\n";
  ASSERT_TRUE(store->Add("a", para + para + para).ok());
  auto st = store->Stats();
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->bytes_out, para.size());
  EXPECT_EQ(st->chunks, 1u);
}

// A block near a stored one is split: only its new sentences are stored.
TEST(StoreTest, SimilarBlockStoresOnlyNewSentences) {
  std::string base, edited;
  for (int i = 0; i < 40; ++i) {
    const std::string s = "这是第" + std::to_string(i) + "个句子，用来测试。";
    base += s;
    edited += (i == 17) ? std::string("这一句是新的内容！") : s;
  }
  base += "\n";
  edited += "\n";
  const std::string dir = testing::MakeTempDir("similar");
  auto store = OpenOrDie(dir + "/s.db");
  ASSERT_TRUE(store);
  ASSERT_TRUE(store->Add("v1", base).ok());
  ASSERT_TRUE(store->Add("v2", edited).ok());
  auto st = store->Stats();
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st->bytes_out, base.size() + std::string("这一句是新的内容！").size());
  EXPECT_EQ(*store->Get("v2"), edited);

  // The exact-paragraph baseline stores the whole edited block again.
  auto exact = OpenOrDie(dir + "/e.db", WithChunker("exact-paragraph"));
  ASSERT_TRUE(exact->Add("v1", base).ok());
  ASSERT_TRUE(exact->Add("v2", edited).ok());
  EXPECT_EQ(exact->Stats()->bytes_out, base.size() + edited.size());
}

// Blocks with equal SimHash but different bytes are never shared.
TEST(StoreTest, SimhashEqualityIsNotByteEquality) {
  const std::string dir = testing::MakeTempDir("noeq");
  StoreOptions options;
  options.near_threshold = 64;  // every block is "near"
  auto store = OpenOrDie(dir + "/s.db", options);
  ASSERT_TRUE(store);
  // Same sentences in a different order: same SimHash (features are a set).
  ASSERT_TRUE(store->Add("a", "一。二。三。\n").ok());
  ASSERT_TRUE(store->Add("b", "三。一。二。\n").ok());
  EXPECT_EQ(*store->Get("a"), "一。二。三。\n");
  EXPECT_EQ(*store->Get("b"), "三。一。二。\n");
}

TEST(StoreTest, RemoveDropsUnreferencedChunks) {
  const std::string dir = testing::MakeTempDir("remove");
  auto store = OpenOrDie(dir + "/s.db");
  ASSERT_TRUE(store);
  ASSERT_TRUE(store->Add("a", "共享段落。第二句。\n只在甲里。还有一句。\n").ok());
  const uint64_t out_a = store->Stats()->bytes_out;
  ASSERT_TRUE(store->Add("b", "共享段落。第二句。\n只在乙里。另外一句！\n").ok());
  EXPECT_GT(store->Stats()->bytes_out, out_a);
  ASSERT_TRUE(store->Remove("b").ok());
  EXPECT_EQ(store->Stats()->bytes_out, out_a);
  EXPECT_TRUE(store->Remove("b").IsNotFound());
  EXPECT_TRUE(store->Get("b").status().IsNotFound());
  ASSERT_TRUE(store->Remove("a").ok());
  auto st = store->Stats();
  EXPECT_EQ(st->bytes_out, 0u);
  EXPECT_EQ(st->chunks, 0u);
  EXPECT_EQ(st->files, 0u);
  // The near index was invalidated by the removal: adding again still works.
  ASSERT_TRUE(store->Add("c", "共享段落。第二句。\n").ok());
  EXPECT_EQ(*store->Get("c"), "共享段落。第二句。\n");
  EXPECT_TRUE(store->Verify()->empty());
}

TEST(StoreTest, AddingANameAgainReplacesIt) {
  const std::string dir = testing::MakeTempDir("replace");
  auto store = OpenOrDie(dir + "/s.db");
  ASSERT_TRUE(store->Add("a", "旧的内容。\n").ok());
  ASSERT_TRUE(store->Add("a", "新的内容。\n").ok());
  EXPECT_EQ(*store->Get("a"), "新的内容。\n");
  EXPECT_EQ(store->Stats()->bytes_out, std::string("新的内容。\n").size());
  EXPECT_EQ(store->List()->size(), 1u);
}

TEST(StoreTest, ListIsSortedAndDescribesFiles) {
  const std::string dir = testing::MakeTempDir("list");
  auto store = OpenOrDie(dir + "/s.db", WithChunker("cdc:64"));
  ASSERT_TRUE(store->Add("b", "xyz").ok());
  ASSERT_TRUE(store->Add("a", "").ok());
  auto files = store->List();
  ASSERT_TRUE(files.ok());
  ASSERT_EQ(files->size(), 2u);
  EXPECT_EQ((*files)[0].name, "a");
  EXPECT_EQ((*files)[0].sha256_hex,
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ((*files)[1].chunker, "cdc:64");
  EXPECT_EQ((*files)[1].size, 3u);
}

TEST(StoreTest, ReopenKeepsEverythingAndMixesChunkers) {
  const std::string dir = testing::MakeTempDir("reopen");
  {
    auto store = OpenOrDie(dir + "/s.db");
    ASSERT_TRUE(store->Add("a", "第一句。第二句。\n").ok());
  }
  auto store = OpenOrDie(dir + "/s.db", WithChunker("fsp:32"));
  ASSERT_TRUE(store->Add("b", "第一句。第二句。\n").ok());
  EXPECT_EQ(*store->Get("a"), "第一句。第二句。\n");
  EXPECT_EQ(*store->Get("b"), "第一句。第二句。\n");
  EXPECT_TRUE(store->Verify()->empty());
}

TEST(StoreTest, ZstdShrinksTheDatabaseButNotBytesOut) {
  const std::string dir = testing::MakeTempDir("zstd");
  const std::string payload = MakeLargePayload(4 << 20, 3);
  StoreOptions plain;
  plain.compression = StoreCompression::kNone;
  auto a = OpenOrDie(dir + "/plain.db", plain);
  auto b = OpenOrDie(dir + "/zstd.db");
  ASSERT_TRUE(a->Add("p", payload).ok());
  ASSERT_TRUE(b->Add("p", payload).ok());
  auto sa = a->Stats();
  auto sb = b->Stats();
  EXPECT_EQ(sa->bytes_out, sb->bytes_out);
  EXPECT_EQ(sa->stored_bytes, sa->bytes_out);
  EXPECT_LT(sb->stored_bytes, sb->bytes_out);
  EXPECT_EQ(*b->Get("p"), payload);
}

void ExecSql(const std::string& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
}

TEST(StoreTest, TamperedChunkIsCorruption) {
  const std::string dir = testing::MakeTempDir("tamper");
  const std::string path = dir + "/s.db";
  {
    StoreOptions options;
    options.compression = StoreCompression::kNone;
    auto store = OpenOrDie(path, options);
    ASSERT_TRUE(store->Add("a", "第一段。\n第二段。\n").ok());
    ASSERT_TRUE(store->Add("b", "别的。\n").ok());
  }
  // Same length, different bytes: only the digest can tell.
  // "第一段。\n" becomes "第二段。\n".
  ExecSql(path, "UPDATE chunks SET data = X'E7ACACE4BA8CE6AEB5E380820A' WHERE id = 1");
  auto store = OpenOrDie(path);
  Result<std::string> got = store->Get("a");
  EXPECT_TRUE(got.status().IsCorruption()) << got.status().ToString();
  EXPECT_EQ(*store->Get("b"), "别的。\n");
  auto problems = store->Verify();
  ASSERT_TRUE(problems.ok());
  bool file_a = false;
  for (const auto& p : *problems) file_a = file_a || p.name == "a";
  EXPECT_TRUE(file_a);
  EXPECT_GE(problems->size(), 2u);  // the chunk and the file

  // Wrong reference counts are reported too.
  ExecSql(path, "UPDATE chunks SET refs = refs + 5 WHERE id = 2");
  problems = store->Verify();
  bool refs = false;
  for (const auto& p : *problems) refs = refs || p.reason.find("references") != std::string::npos;
  EXPECT_TRUE(refs);

  // A recipe that is garbage.
  ExecSql(path, "UPDATE files SET recipe = X'FFFFFFFFFFFFFFFFFFFFFF' WHERE name = 'b'");
  EXPECT_TRUE(store->Get("b").status().IsCorruption());
}

// SQLite does not run the busy handler while it converts a file to WAL, so
// stores opened at the same moment failed with "database is locked" (seen in
// StoreCrashTest.TwoWritersAtOnce). Threads open fresh stores at once.
TEST(StoreTest, StoresOpenedAtTheSameMomentAllOpen) {
  const std::string dir = testing::MakeTempDir("same_moment");
  constexpr int kStores = 12, kThreads = 6;
  for (int s = 0; s < kStores; ++s) {
    const std::string path = dir + "/s" + std::to_string(s) + ".db";
    std::atomic<int> ready{0};
    std::vector<std::string> errors(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        ready.fetch_add(1);
        while (ready.load() < kThreads) std::this_thread::yield();
        auto store = Store::Open(path);
        if (!store.ok()) errors[t] = store.status().ToString();
      });
    }
    for (auto& th : threads) th.join();
    for (int t = 0; t < kThreads; ++t) EXPECT_EQ(errors[t], "") << path << " thread " << t;
    auto store = Store::Open(path);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    auto problems = (*store)->Verify();
    ASSERT_TRUE(problems.ok());
    EXPECT_TRUE(problems->empty());
  }
}

TEST(StoreTest, OpenRejectsWhatIsNotAStore) {
  const std::string dir = testing::MakeTempDir("notstore");
  testing::WriteFile(dir + "/text.db", std::string(5000, 'x'));
  auto a = Store::Open(dir + "/text.db");
  EXPECT_TRUE(a.status().IsCorruption()) << a.status().ToString();
  ExecSql(dir + "/other.db", "CREATE TABLE t(x)");
  auto b = Store::Open(dir + "/other.db");
  EXPECT_TRUE(b.status().IsCorruption()) << b.status().ToString();
  ExecSql(dir + "/future.db",
          "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
          "INSERT INTO meta VALUES ('format', 'neardup-store'), ('schema_version', '99')");
  auto c = Store::Open(dir + "/future.db");
  EXPECT_TRUE(c.status().IsNotSupported()) << c.status().ToString();
  StoreOptions no_create;
  no_create.create_if_missing = false;
  EXPECT_TRUE(Store::Open(dir + "/missing.db", no_create).status().IsNotFound());
  StoreOptions bad;
  bad.near_threshold = 65;
  EXPECT_TRUE(Store::Open(dir + "/x.db", bad).status().IsInvalidArgument());
  auto store = OpenOrDie(dir + "/ok.db");
  EXPECT_TRUE(store->Add("", "x").IsInvalidArgument());
}

// (content, simhash) of every chunk that has a fingerprint. REQUIRES: the
// store was written without compression.
std::vector<std::pair<std::string, uint64_t>> FingerprintedBlocks(const std::string& db_path) {
  std::vector<std::pair<std::string, uint64_t>> out;
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db,
                               "SELECT data, simhash FROM chunks WHERE simhash IS NOT NULL AND "
                               "codec = 0 ORDER BY id",
                               -1, &stmt, nullptr),
            SQLITE_OK);
  while (sqlite3_step(stmt) == SQLITE_ROW) {
    const auto* data = static_cast<const char*>(sqlite3_column_blob(stmt, 0));
    out.emplace_back(std::string(data, static_cast<size_t>(sqlite3_column_bytes(stmt, 0))),
                     static_cast<uint64_t>(sqlite3_column_int64(stmt, 1)));
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return out;
}

std::string QueryText(const std::string& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr), SQLITE_OK);
  std::string out;
  if (sqlite3_step(stmt) == SQLITE_ROW) {
    out = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return out;
}

// Blocks of several sentences, each stored whole with its fingerprint:
// full-width and ASCII ends, upper case, closers, white space, CRLF, repeated
// sentences, invalid UTF-8.
const std::vector<std::string>& FingerprintTexts() {
  static const auto* texts = new std::vector<std::string>{
      "今天天气很好。我们去公园散步吧！你觉得怎么样？\n",
      "他说：“好的。”然后就走了。FULL－WIDTH Ｌｅｔｔｅｒｓ！\r\n",
      "  Leading spaces. Trailing ones!   Mixed CASE words?\n",
      "重复的句子。重复的句子。不一样的句子！\n",
      std::string("ok\xff\xfe bad。second\x80 sentence!\n"),
      "第一句；还是第一句。第二句？！第三句\n",
  };
  return *texts;
}

// The store's seed-004 block fingerprint is the `sentence` preset's
// fingerprint: one function, not two.
TEST(StoreTest, BlockFingerprintIsTheSentencePreset) {
  const std::string dir = testing::MakeTempDir("preset");
  StoreOptions options;
  options.compression = StoreCompression::kNone;
  options.near_threshold = 0;  // keep every block whole, with its fingerprint
  auto store = OpenOrDie(dir + "/s.db", options);
  ASSERT_TRUE(store);
  for (size_t i = 0; i < FingerprintTexts().size(); ++i) {
    ASSERT_TRUE(store->Add("f" + std::to_string(i), FingerprintTexts()[i]).ok());
  }
  auto preset = FindPreset("sentence");
  ASSERT_TRUE(preset.ok());
  auto pipeline = Pipeline::Create(preset->pipeline);
  ASSERT_TRUE(pipeline.ok());
  const auto blocks = FingerprintedBlocks(dir + "/s.db");
  ASSERT_EQ(blocks.size(), FingerprintTexts().size());
  for (size_t i = 0; i < blocks.size(); ++i) {
    EXPECT_EQ(blocks[i].first, FingerprintTexts()[i]);
    std::string text = blocks[i].first;
    (void)RepairUtf8(&text, /*replace_nul=*/false);  // the preset's input is UTF-8
    const DocumentFingerprint fp = (*pipeline)->Fingerprint(text);
    EXPECT_EQ(fp.fingerprint.bits(), 64);
    EXPECT_EQ(blocks[i].second, fp.fingerprint.lo()) << blocks[i].first;
  }
}

// A schema 1 store (fingerprints of the store's old sentence SimHash) is
// migrated on open: every fingerprint is recomputed, the files stay as they were.
TEST(StoreTest, SchemaOneStoreIsMigratedOnOpen) {
  const std::string dir = testing::MakeTempDir("migrate");
  const std::string path = dir + "/s.db";
  StoreOptions options;
  options.compression = StoreCompression::kNone;
  options.near_threshold = 0;
  {
    auto store = OpenOrDie(path, options);
    ASSERT_TRUE(store);
    for (size_t i = 0; i < FingerprintTexts().size(); ++i) {
      ASSERT_TRUE(store->Add("f" + std::to_string(i), FingerprintTexts()[i]).ok());
    }
  }
  const auto expected = FingerprintedBlocks(path);
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(QueryText(path, "SELECT value FROM meta WHERE key = 'schema_version'"), "2");
  ExecSql(path,
          "UPDATE chunks SET simhash = ~simhash WHERE simhash IS NOT NULL;"
          "UPDATE meta SET value = '1' WHERE key = 'schema_version'");
  ASSERT_NE(FingerprintedBlocks(path), expected);
  {
    auto store = OpenOrDie(path, options);
    ASSERT_TRUE(store);
    EXPECT_EQ(QueryText(path, "SELECT value FROM meta WHERE key = 'schema_version'"), "2");
    EXPECT_EQ(FingerprintedBlocks(path), expected);
    for (size_t i = 0; i < FingerprintTexts().size(); ++i) {
      EXPECT_EQ(*store->Get("f" + std::to_string(i)), FingerprintTexts()[i]);
    }
    EXPECT_TRUE(store->Verify()->empty());
  }
}

TEST(StoreTest, ParseChunkerSpec) {
  EXPECT_EQ(ParseChunkerSpec("simhash")->kind, ChunkerKind::kSimhash);
  EXPECT_EQ(ParseChunkerSpec("exact-paragraph")->kind, ChunkerKind::kExactParagraph);
  EXPECT_EQ(ParseChunkerSpec("fsp:4096")->size, 4096u);
  EXPECT_EQ(ParseChunkerSpec("cdc:1024")->kind, ChunkerKind::kContentDefined);
  EXPECT_EQ(ParseChunkerSpec("cdc:1024")->ToString(), "cdc:1024");
  for (const char* bad : {"", "fsp", "fsp:", "fsp:8", "cdc:32", "cdc:12x", "rabin:4", "fsp:-1"}) {
    EXPECT_TRUE(ParseChunkerSpec(bad).status().IsInvalidArgument()) << bad;
  }
}

}  // namespace
}  // namespace neardup
