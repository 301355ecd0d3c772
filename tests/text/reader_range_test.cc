// Copyright 2026 The neardup Authors.
//
// ReadOptions::range_begin / range_end / range_first_line (a file read in
// pieces, as neardup-mpi reads a large JSONL file) against the oracle of one
// read of the whole file: the pieces, cut at random line starts, give the
// same documents (ids, texts, line numbers, records) and the same issues
// (file and line), in the same order.

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "neardup/text.h"
#include "tests/testing/test_util.h"

namespace neardup {
namespace {

struct Read {
  std::vector<Document> docs;
  std::vector<InputIssue> issues;
  InputStats stats;
};

Read ReadWith(const std::string& path, ReadOptions options) {
  Read r;
  options.keep_records = true;
  options.on_issue = [&r](const InputIssue& i) { r.issues.push_back(i); };
  auto reader = DocumentReader::Open({path}, options);
  EXPECT_TRUE(reader.ok()) << reader.status().ToString();
  Document doc;
  while ((*reader)->Next(&doc)) r.docs.push_back(doc);
  r.stats = (*reader)->stats();
  return r;
}

// A JSONL file of `lines` seeded random lines: documents with and without
// ids, blank lines, CRLF endings, malformed lines, invalid UTF-8.
std::string RandomJsonl(std::mt19937_64& rng, int lines) {
  std::string out;
  for (int i = 0; i < lines; ++i) {
    const std::string text = "text " + std::to_string(rng() % 1000) + " of line " +
                             std::to_string(i) + std::string(rng() % 40, 'x');
    switch (rng() % 8) {
      case 0:
        out += "\n";
        break;
      case 1:
        out += "{\"id\": \"broken\", \"text\": \n";
        break;
      case 2:
        out += "{\"text\": \"" + text + "\"}\r\n";
        break;
      case 3:
        out += "{\"id\": \"u" + std::to_string(i) + "\", \"text\": \"bad \xff bytes\"}\n";
        break;
      default:
        out += "{\"id\": \"d" + std::to_string(i) + "\", \"text\": \"" + text + "\"}\n";
    }
  }
  return out;
}

TEST(ReaderRangeTest, PiecesCutAtLineStartsReadAsTheWholeFile) {
  const std::string dir = testing::MakeTempDir("reader_range");
  std::mt19937_64 rng(20261123);
  for (int trial = 0; trial < 20; ++trial) {
    std::string content = RandomJsonl(rng, 1 + static_cast<int>(rng() % 200));
    if (trial % 2 == 1) content.pop_back();  // no final line break
    const std::string path = dir + "/in.jsonl";
    testing::WriteFile(path, content);
    const Read whole = ReadWith(path, {});
    // Line starts; cut at a random subset of them.
    std::vector<uint64_t> starts = {0};
    for (size_t i = 0; i + 1 < content.size(); ++i) {
      if (content[i] == '\n' && rng() % 4 == 0) starts.push_back(i + 1);
    }
    starts.push_back(content.size());
    Read pieces;
    for (size_t p = 0; p + 1 < starts.size(); ++p) {
      ReadOptions options;
      options.range_begin = starts[p];
      options.range_end = starts[p + 1];
      // The oracle's line number: line breaks before the piece, plus one.
      options.range_first_line =
          1 + static_cast<uint64_t>(std::count(
                  content.begin(), content.begin() + static_cast<ptrdiff_t>(starts[p]), '\n'));
      Read r = ReadWith(path, options);
      pieces.docs.insert(pieces.docs.end(), r.docs.begin(), r.docs.end());
      pieces.issues.insert(pieces.issues.end(), r.issues.begin(), r.issues.end());
      pieces.stats.files += r.stats.files;
      pieces.stats.malformed += r.stats.malformed;
      pieces.stats.invalid_utf8 += r.stats.invalid_utf8;
    }
    ASSERT_EQ(pieces.docs.size(), whole.docs.size()) << "trial " << trial;
    for (size_t i = 0; i < whole.docs.size(); ++i) {
      EXPECT_EQ(pieces.docs[i].id, whole.docs[i].id);
      EXPECT_EQ(pieces.docs[i].text, whole.docs[i].text);
      EXPECT_EQ(pieces.docs[i].line, whole.docs[i].line);
      EXPECT_EQ(pieces.docs[i].record, whole.docs[i].record);
    }
    ASSERT_EQ(pieces.issues.size(), whole.issues.size()) << "trial " << trial;
    for (size_t i = 0; i < whole.issues.size(); ++i) {
      EXPECT_EQ(pieces.issues[i].ToString(), whole.issues[i].ToString());
    }
    // The file counts once (in its first piece).
    EXPECT_EQ(pieces.stats.files, 1u);
    EXPECT_EQ(pieces.stats.malformed, whole.stats.malformed);
    EXPECT_EQ(pieces.stats.invalid_utf8, whole.stats.invalid_utf8);
  }
}

TEST(ReaderRangeTest, ARangeOfACompressedFileIsUnreadable) {
  const std::string dir = testing::MakeTempDir("reader_range_gz");
  const std::string path = dir + "/in.jsonl";
  testing::WriteFile(path, std::string("\x1f\x8b\x08\x00", 4) + "not really gzip\n");
  ReadOptions options;
  options.range_begin = 0;
  options.range_end = 10;
  const Read r = ReadWith(path, options);
  EXPECT_TRUE(r.docs.empty());
  ASSERT_EQ(r.issues.size(), 1u);
  EXPECT_NE(r.issues[0].ToString().find("byte range of a compressed file"), std::string::npos)
      << r.issues[0].ToString();
  EXPECT_EQ(r.stats.unreadable, 1u);
}

}  // namespace
}  // namespace neardup
