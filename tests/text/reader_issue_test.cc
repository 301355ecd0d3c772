// Copyright 2026 The neardup Authors.
//
// Every kind of bad input the reader meets is reported as
// "FILE:LINE: REASON" (InputIssue::ToString) when it lies in a line of a
// line format, and as "FILE: REASON" when it concerns the whole file: the
// file, where in it, and why (issue 25, the sweep of input error messages).

#include <bzlib.h>
#include <gtest/gtest.h>
#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

#include <string>
#include <vector>

#include "neardup/text.h"
#include "tests/testing/test_util.h"

namespace neardup {
namespace {

using ::neardup::testing::MakeTempDir;
using ::neardup::testing::WriteFile;

std::string Gzip(const std::string& data) {
  std::string out(compressBound(static_cast<uLong>(data.size())) + 32, '\0');
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

std::string Zstd(const std::string& data) {
  std::string out(ZSTD_compressBound(data.size()), '\0');
  const size_t n = ZSTD_compress(out.data(), out.size(), data.data(), data.size(), 3);
  EXPECT_FALSE(ZSTD_isError(n));
  out.resize(n);
  return out;
}

std::string Xz(const std::string& data) {
  std::string out(lzma_stream_buffer_bound(data.size()), '\0');
  size_t pos = 0;
  EXPECT_EQ(lzma_easy_buffer_encode(6, LZMA_CHECK_CRC64, nullptr,
                                    reinterpret_cast<const uint8_t*>(data.data()), data.size(),
                                    reinterpret_cast<uint8_t*>(out.data()), &pos, out.size()),
            LZMA_OK);
  out.resize(pos);
  return out;
}

std::string Bzip2(const std::string& data) {
  std::string out(data.size() + data.size() / 100 + 600, '\0');
  auto size = static_cast<unsigned>(out.size());
  EXPECT_EQ(BZ2_bzBuffToBuffCompress(out.data(), &size, const_cast<char*>(data.data()),
                                     static_cast<unsigned>(data.size()), 9, 0, 0),
            BZ_OK);
  out.resize(size);
  return out;
}

std::vector<InputIssue> Issues(const std::string& path, ReadOptions options = {}) {
  std::vector<InputIssue> issues;
  options.on_issue = [&issues](const InputIssue& i) { issues.push_back(i); };
  auto reader = DocumentReader::Open({path}, options);
  EXPECT_TRUE(reader.ok());
  Document doc;
  while ((*reader)->Next(&doc)) {
  }
  return issues;
}

struct Case {
  std::string name;     // the file's name in the test directory
  std::string content;  // what it holds
  uint64_t line;        // where the one issue is (0: the whole file)
  std::string reason;   // the start of its reason
};

// Lines of JSONL, each with a text field.
std::string Jsonl(int n) {
  std::string out;
  for (int i = 1; i <= n; ++i) {
    out += "{\"id\":\"" + std::to_string(i) + "\",\"text\":\"第" + std::to_string(i * 7919) +
           "篇\"}\n";
  }
  return out;
}

TEST(ReaderIssueTest, EveryBadInputNamesFileLineAndReason) {
  const std::string dir = MakeTempDir("reader_issues");
  const std::string ok = "{\"text\":\"好\"}\n";
  const std::string many = Jsonl(3000);
  std::vector<Case> cases = {
      {"bad_json.jsonl", ok + "{\"text\": oops}\n", 2, "malformed JSON: "},
      {"not_object.jsonl", ok + ok + "[1, 2]\n", 3, "expected a JSON object, got array"},
      {"missing.jsonl", "{\"body\":\"x\"}\n", 1, "no \"text\" field"},
      {"wrong_type.jsonl", ok + "{\"text\": 17}\n", 2, "field \"text\" is number, not a string"},
      {"invalid_utf8.jsonl", ok + "{\"text\":\"bad\xFF\"}\n", 2,
       "invalid UTF-8: 1 sequence(s) replaced"},
      {"nul.jsonl", ok + ok + "{\"text\":\"a\\u0000b\"}\n", 3, "1 NUL byte(s) replaced"},
      {"nul.lines", std::string("a\nb\0c\n", 6), 2, "1 NUL byte(s) replaced"},
      {"too_deep.jsonl", ok + std::string(300, '[') + "\n", 2, "malformed JSON: "},
      {"long.jsonl", ok + "{\"text\":\"" + std::string(200, 'x') + "\"}\n" + ok, 2,
       "line longer than the limit of 100 bytes"},
      // Cut in the middle: the line being read is named (and dropped).
      {"cut.jsonl.gz", Gzip(many).substr(0, Gzip(many).size() / 2), 0, "truncated gzip stream"},
      {"cut.jsonl.zst", Zstd(many).substr(0, Zstd(many).size() / 2), 0, "truncated zstd stream"},
      {"cut.jsonl.xz", Xz(many).substr(0, Xz(many).size() / 2), 0, "truncated xz stream"},
      {"cut.jsonl.bz2", Bzip2(many).substr(0, Bzip2(many).size() / 2), 0, "truncated bzip2 stream"},
      // Cut in the trailer: every line was read whole, the stream is still
      // incomplete; the line after the last one read is named.
      {"trailer.jsonl.gz", Gzip(many).substr(0, Gzip(many).size() - 4), 3001,
       "truncated gzip stream"},
      {"trailer.jsonl.xz", Xz(many).substr(0, Xz(many).size() - 4), 3001, "truncated xz stream"},
      {"corrupt.jsonl.gz", Gzip(many).substr(0, 40) + std::string(64, '\xAA'), 0,
       "corrupt gzip data"},
      // The whole file is the document, or the file is refused whole.
      {"cut.txt.gz", Gzip("一篇文章").substr(0, 12), 0, "truncated gzip stream"},
      {"member.zip", std::string("PK\x03\x04\x14\x00\x00\x00", 8) + "empty.jsonl", 0,
       "a zip archive: "},
  };
  for (const Case& c : cases) WriteFile(dir + "/" + c.name, c.content);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ReadOptions options;
    if (c.name == "nul.lines") options.format = InputFormat::kLines;
    if (c.name == "long.jsonl") options.max_document_bytes = 100;
    const std::vector<InputIssue> issues = Issues(dir + "/" + c.name, options);
    ASSERT_EQ(issues.size(), 1u);
    const InputIssue& issue = issues[0];
    const std::string path = dir + "/" + c.name;
    if (c.line == 0 && c.name.starts_with("cut.jsonl")) {
      // Where a stream cut mid-way stops depends on the codec's blocks (a
      // bzip2 or zstd block may hold the whole file): the line where reading
      // stopped is named, and when it was read in part, it is dropped.
      EXPECT_GE(issue.line, 1u);
      EXPECT_LE(issue.line, 3000u);
      if (issue.line > 1) {
        EXPECT_NE(issue.reason.find("; the incomplete line is dropped"), std::string::npos)
            << issue.reason;
      }
    } else if (c.name == "corrupt.jsonl.gz") {
      EXPECT_EQ(issue.line, 1u);
    } else {
      EXPECT_EQ(issue.line, c.line);
    }
    const std::string where =
        path + (issue.line > 0 ? ":" + std::to_string(issue.line) : std::string()) + ": ";
    EXPECT_EQ(issue.ToString().substr(0, where.size() + c.reason.size()), where + c.reason)
        << issue.ToString();
  }
}

}  // namespace
}  // namespace neardup
