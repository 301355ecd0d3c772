// Copyright 2026 The neardup Authors.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <random>
#include <string>
#include <tuple>

#include "neardup/text.h"
#include "tests/testing/test_util.h"
#include "text/json_line.h"
#include "util/utf8.h"

namespace neardup {
namespace {

using ::neardup::testing::MakeTempDir;
using ::neardup::testing::WriteFile;

struct ReadAllResult {
  std::vector<Document> docs;
  std::vector<InputIssue> issues;
  InputStats stats;
};

ReadAllResult ReadAll(std::vector<std::string> inputs, ReadOptions options = {}) {
  ReadAllResult r;
  options.on_issue = [&r](const InputIssue& i) { r.issues.push_back(i); };
  auto reader = DocumentReader::Open(std::move(inputs), options);
  EXPECT_TRUE(reader.ok()) << reader.status().ToString();
  Document doc;
  while ((*reader)->Next(&doc)) r.docs.push_back(doc);
  r.stats = (*reader)->stats();
  return r;
}

TEST(ReaderTest, JsonlFieldsAndDefaultIds) {
  const std::string dir = MakeTempDir("jsonl");
  WriteFile(dir + "/a.jsonl",
            "{\"id\": \"x1\", \"text\": \"第一篇\", \"title\": \"标题\"}\n"
            "\n"
            "{\"text\": \"没有编号\"}\r\n"
            "{\"id\": 42, \"text\": \"数字编号\", \"score\": 3.5}\n");
  ReadOptions options;
  options.extra_fields = {"score"};
  const ReadAllResult r = ReadAll({dir + "/a.jsonl"}, options);
  ASSERT_EQ(r.docs.size(), 3u);
  EXPECT_EQ(r.docs[0].id, "x1");
  EXPECT_EQ(r.docs[0].title, "标题");
  EXPECT_EQ(r.docs[0].line, 1u);
  EXPECT_EQ(r.docs[1].id, dir + "/a.jsonl:3");
  EXPECT_EQ(r.docs[1].text, "没有编号");
  EXPECT_EQ(r.docs[2].id, "42");
  EXPECT_EQ(r.docs[2].fields.at("score"), "3.5");
  EXPECT_TRUE(r.issues.empty());
}

TEST(ReaderTest, MalformedLinesAreReportedWithLineNumbers) {
  const std::string dir = MakeTempDir("malformed");
  WriteFile(dir + "/bad.jsonl",
            "{\"text\": \"好\"}\n"
            "{\"text\": \"缺右括号\"\n"
            "[1, 2]\n"
            "{\"body\": \"no text field\"}\n"
            "{\"text\": 17}\n"
            "{\"text\": \"也好\"}\n");
  const ReadAllResult r = ReadAll({dir + "/bad.jsonl"});
  ASSERT_EQ(r.docs.size(), 2u);
  ASSERT_EQ(r.issues.size(), 4u);
  EXPECT_EQ(r.issues[0].line, 2u);
  EXPECT_EQ(r.issues[0].kind, InputIssue::Kind::kMalformedLine);
  EXPECT_NE(r.issues[0].ToString().find("bad.jsonl:2: malformed JSON"), std::string::npos);
  EXPECT_EQ(r.issues[1].line, 3u);
  EXPECT_EQ(r.issues[2].kind, InputIssue::Kind::kMissingField);
  EXPECT_EQ(r.issues[3].line, 5u);
  EXPECT_EQ(r.stats.malformed, 2u);
  EXPECT_EQ(r.stats.missing_field, 2u);
  EXPECT_EQ(r.stats.documents, 2u);
}

TEST(ReaderTest, InvalidUtf8AndNulAreReplacedAndCounted) {
  const std::string dir = MakeTempDir("utf8");
  WriteFile(dir + "/a.txt", std::string("ab\xff\xfe"
                                        "c\0d\xe4\xb8",
                                        9));
  const ReadAllResult r = ReadAll({dir + "/a.txt"});
  ASSERT_EQ(r.docs.size(), 1u);
  EXPECT_EQ(r.docs[0].text,
            "ab\xEF\xBF\xBD\xEF\xBF\xBD"
            "c\xEF\xBF\xBD"
            "d\xEF\xBF\xBD");
  EXPECT_EQ(r.stats.invalid_utf8, 1u);
  EXPECT_EQ(r.stats.nul_bytes, 1u);
  EXPECT_EQ(r.issues.size(), 2u);
}

// GBK/GB18030 and Big5 input: the first invalid UTF-8 report of a file says
// which encoding ICU's detector takes it for (it said nothing but one
// warning per document before), and ReadOptions::encoding converts it to the
// UTF-8 text of the same documents.
TEST(ReaderTest, LegacyChineseEncodingsAreDetectedAndConverted) {
  const std::string dir = MakeTempDir("reader_encoding");
  const std::string gb_text =
      "近重复检测的测试文本，编码转换。第二句话在这里，用来让检测器有足够的字节。";
  const std::string b5_text =
      "近重複檢測的測試文本，編碼轉換。第二句話在這裡，用來讓檢測器有足夠的位元組。";
  const std::string gb(
      "\xbd\xfc\xd6\xd8\xb8\xb4\xbc\xec\xb2\xe2\xb5\xc4\xb2\xe2\xca\xd4\xce\xc4\xb1\xbe\xa3\xac\xb1"
      "\xe0\xc2\xeb\xd7\xaa\xbb\xbb\xa1\xa3\xb5\xda\xb6\xfe\xbe\xe4\xbb\xb0\xd4\xda\xd5\xe2\xc0\xef"
      "\xa3\xac\xd3\xc3\xc0\xb4\xc8\xc3\xbc\xec\xb2\xe2\xc6\xf7\xd3\xd0\xd7\xe3\xb9\xbb\xb5\xc4\xd7"
      "\xd6\xbd\xda\xa1\xa3");
  const std::string b5(
      "\xaa\xf1\xad\xab\xbd\xc6\xc0\xcb\xb4\xfa\xaa\xba\xb4\xfa\xb8\xd5\xa4\xe5\xa5\xbb\xa1\x41\xbd"
      "\x73\xbd\x58\xc2\xe0\xb4\xab\xa1\x43\xb2\xc4\xa4\x47\xa5\x79\xb8\xdc\xa6\x62\xb3\x6f\xb8\xcc"
      "\xa1\x41\xa5\xce\xa8\xd3\xc5\xfd\xc0\xcb\xb4\xfa\xbe\xb9\xa6\xb3\xa8\xac\xb0\xf7\xaa\xba\xa6"
      "\xec\xa4\xb8\xb2\xd5\xa1\x43");
  std::string gb_file, b5_file;
  for (int i = 0; i < 20; ++i) {
    gb_file += "{\"id\":\"g" + std::to_string(i) + "\",\"text\":\"" + gb + "\"}\n";
    b5_file += "{\"id\":\"b" + std::to_string(i) + "\",\"text\":\"" + b5 + "\"}\n";
  }
  WriteFile(dir + "/gb.jsonl", gb_file);
  WriteFile(dir + "/b5.jsonl", b5_file);
  for (const auto& [file, name, text] :
       {std::tuple<std::string, std::string, std::string>{"gb.jsonl", "GB18030", gb_text},
        {"b5.jsonl", "Big5", b5_text}}) {
    ReadAllResult r = ReadAll({dir + "/" + file});
    ASSERT_EQ(r.docs.size(), 20u) << file;
    size_t hints = 0;
    for (const InputIssue& issue : r.issues) {
      if (issue.reason.find("the file looks like " + name) != std::string::npos &&
          issue.reason.find("--encoding " + name + " converts it") != std::string::npos) {
        ++hints;
      }
    }
    EXPECT_EQ(hints, 1u) << file;  // once per file
    ReadOptions options;
    options.encoding = name;
    r = ReadAll({dir + "/" + file}, options);
    ASSERT_EQ(r.docs.size(), 20u) << file;
    EXPECT_TRUE(r.issues.empty()) << file << ": " << r.issues[0].ToString();
    for (const Document& d : r.docs) EXPECT_EQ(d.text, text) << file;
  }
  ReadOptions unknown;
  unknown.encoding = "no-such-encoding";
  const ReadAllResult r = ReadAll({dir + "/gb.jsonl"}, unknown);
  EXPECT_TRUE(r.docs.empty());
  ASSERT_EQ(r.issues.size(), 1u);
  EXPECT_NE(r.issues[0].reason.find("unknown encoding"), std::string::npos);
}

TEST(ReaderTest, RepairUtf8FollowsMaximalSubparts) {
  std::string s = "\xE0\x80\x80";  // overlong: three replacements
  EXPECT_EQ(RepairUtf8(&s).invalid, 3u);
  s = "\xED\xA0\x80";  // surrogate
  EXPECT_EQ(RepairUtf8(&s).invalid, 3u);
  s = "\xF0\x9F\x98";  // truncated 4-byte sequence: one replacement
  EXPECT_EQ(RepairUtf8(&s).invalid, 1u);
  EXPECT_EQ(s, "\xEF\xBF\xBD");
  s = "正常😀";
  EXPECT_EQ(RepairUtf8(&s).invalid, 0u);
  EXPECT_EQ(s, "正常😀");
}

// The scan's fast paths (eight ASCII bytes at a time, three-byte sequences
// inline) against a byte-by-byte repair over the decoder, on seeded random
// mixes of ASCII, NUL, CJK, the E0/ED edge cases, stray continuation bytes,
// four-byte and truncated sequences.
TEST(ReaderTest, RepairUtf8MatchesByteByByteRepair) {
  const auto oracle = [](std::string_view s, bool replace_nul, uint64_t* invalid, uint64_t* nul) {
    std::string out;
    *invalid = *nul = 0;
    for (size_t i = 0; i < s.size();) {
      if (s[i] == '\0' && replace_nul) {
        out += "\xEF\xBF\xBD";
        ++*nul;
        ++i;
        continue;
      }
      int len, subpart = 1;
      if (utf8::DecodeAt(s, i, &len, &subpart) >= utf8::kInvalidBase) {
        out += "\xEF\xBF\xBD";
        ++*invalid;
        i += static_cast<size_t>(subpart);
      } else {
        out.append(s.substr(i, static_cast<size_t>(len)));
        i += static_cast<size_t>(len);
      }
    }
    return out;
  };
  const std::vector<std::string> pieces = {"a",
                                           "abcdefgh",
                                           std::string(1, '\0'),
                                           "中",
                                           "文字",
                                           "\xE0\xA0\x80",
                                           "\xE0\x80\x80",
                                           "\xED\x9F\xBF",
                                           "\xED\xA0\x80",
                                           "\xEF\xBF\xBF",
                                           "\x80",
                                           "\xBF\xBF",
                                           "\xE4\xB8",
                                           "\xE4",
                                           "\xF0\x9F\x98\x80",
                                           "\xF0\x9F\x98",
                                           "\xC3\xA9",
                                           "\xC0\xAF",
                                           "\xFF",
                                           "\xF4\x90\x80\x80"};
  std::mt19937 rng(15);
  for (int round = 0; round < 3000; ++round) {
    std::string s;
    const int count = static_cast<int>(rng() % 24);
    for (int k = 0; k < count; ++k) s += pieces[rng() % pieces.size()];
    for (const bool replace_nul : {true, false}) {
      uint64_t invalid, nul;
      const std::string expected = oracle(s, replace_nul, &invalid, &nul);
      std::string got = s;
      const Utf8Repair repair = RepairUtf8(&got, replace_nul);
      ASSERT_EQ(got, expected) << round;
      ASSERT_EQ(repair.invalid, invalid) << round;
      ASSERT_EQ(repair.nul, nul) << round;
    }
  }
}

// JSONL lines go through a fast validator when only text, id and title are
// wanted, and through nlohmann otherwise (an extra field forces it). Both
// must give the same documents and the same issues on seeded random lines:
// escapes, surrogate pairs and lone surrogates, nested values, numbers (huge
// ones too), null and numeric ids, repeated keys, raw control characters,
// invalid UTF-8, truncated and malformed lines.
TEST(ReaderTest, JsonlFastPathMatchesNlohmann) {
  const std::vector<std::string> keys = {"\"text\"",       "\"id\"",   "\"title\"",
                                         "\"t\\u0065xt\"", "\"meta\"", "\"x\""};
  const std::vector<std::string> values = {
      "\"正文\"", "\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\"", "\"\\u4e2d\\u6587\"",
      "\"\\ud83d\\ude00 emoji\"", "\"\\ud800 lone\"", "\"\\udc00\"", "\"\\u0000nul\"",
      "\"raw\ttab\"", "\"bad \xFF byte\"", "\"\\x\"", "42", "-0.5e3", "1e400",
      "123456789012345678901", "null", "true", "false", "[1, {\"a\": [\"b\", null]}, \"c\"]",
      "{\"text\": \"inner\"}", "01", "\"unterminated", "{", "[]", "{}", "tru", "\"\xE4\xB8\"",
      // UTF-8 the one-pass validator must judge as
      // the repair does: valid E0/ED/4-byte forms,
      // an overlong and an encoded surrogate.
      "\"\xE0\xA4\x85 \xED\x95\x9C \xF0\x9F\x98\x80\"", "\"\xE0\x80\x80 overlong\"",
      "\"\xED\xA0\x80 surrogate\"", "\"\xE4\xB8\xAD\xE6\x96\x87\xE4\xB8\xAD\xE6\x96\x87\"",
      // Nesting at the limit and one level past it
      // (the line's object counts).
      std::string(kMaxJsonNesting - 1, '[') + std::string(kMaxJsonNesting - 1, ']'),
      std::string(kMaxJsonNesting, '[') + std::string(kMaxJsonNesting, ']')};
  std::mt19937 rng(15);
  std::string lines;
  for (int n = 0; n < 600; ++n) {
    std::string line = rng() % 7 == 0 ? " {" : "{";
    const int members = static_cast<int>(rng() % 5);
    for (int k = 0; k < members; ++k) {
      if (k > 0) line += rng() % 15 == 0 ? " " : ", ";
      line += keys[rng() % keys.size()] + (rng() % 2 ? ": " : ":") + values[rng() % values.size()];
    }
    if (rng() % 3 != 0) line += ", \"text\": " + values[rng() % 4];
    line += rng() % 20 == 0 ? "} x" : " }";
    lines += line + (rng() % 10 == 0 ? "\r\n" : "\n");
  }
  const std::string dir = MakeTempDir("jsonl_fast");
  WriteFile(dir + "/r.jsonl", lines);
  const ReadAllResult fast = ReadAll({dir + "/r.jsonl"});
  ReadOptions slow_options;
  slow_options.extra_fields = {"no such field"};
  const ReadAllResult slow = ReadAll({dir + "/r.jsonl"}, slow_options);
  ASSERT_EQ(fast.docs.size(), slow.docs.size());
  size_t escaped = 0;
  for (size_t i = 0; i < fast.docs.size(); ++i) {
    EXPECT_EQ(fast.docs[i].id, slow.docs[i].id) << i;
    EXPECT_EQ(fast.docs[i].title, slow.docs[i].title) << i;
    EXPECT_EQ(fast.docs[i].text, slow.docs[i].text) << i;
    EXPECT_EQ(fast.docs[i].line, slow.docs[i].line) << i;
    escaped += fast.docs[i].text.find('\n') != std::string::npos;
  }
  EXPECT_GT(fast.docs.size(), 100u);  // the mix keeps many lines
  EXPECT_GT(escaped, 0u);
  ASSERT_EQ(fast.issues.size(), slow.issues.size());
  for (size_t i = 0; i < fast.issues.size(); ++i) {
    EXPECT_EQ(fast.issues[i].ToString(), slow.issues[i].ToString()) << i;
  }
  EXPECT_GT(fast.issues.size(), 50u);
}

TEST(ReaderTest, DirectoriesAreWalkedInNameOrderAndProblemsReported) {
  const std::string dir = MakeTempDir("walk");
  std::filesystem::create_directories(dir + "/sub");
  WriteFile(dir + "/b.txt", "乙");
  WriteFile(dir + "/a.txt", "甲");
  WriteFile(dir + "/sub/c.txt", "丙");
  WriteFile(dir + "/empty.txt", "");
  std::filesystem::create_symlink(dir + "/a.txt", dir + "/link.txt");
  const ReadAllResult r = ReadAll({dir, dir + "/missing.txt"});
  ASSERT_EQ(r.docs.size(), 4u);
  EXPECT_EQ(r.docs[0].text, "甲");
  EXPECT_EQ(r.docs[1].text, "乙");
  EXPECT_EQ(r.docs[2].text, "");
  EXPECT_EQ(r.docs[3].text, "丙");
  EXPECT_EQ(r.docs[3].id, dir + "/sub/c.txt");
  EXPECT_EQ(r.stats.skipped, 1u);
  EXPECT_EQ(r.stats.unreadable, 1u);
  EXPECT_EQ(r.issues.back().source, dir + "/missing.txt");
}

TEST(ReaderTest, UnreadableDirectoryIsReported) {
  const std::string dir = MakeTempDir("noperm");
  std::filesystem::create_directories(dir + "/locked");
  WriteFile(dir + "/locked/x.txt", "x");
  WriteFile(dir + "/y.txt", "y");
  chmod(dir.c_str(), 0755);
  chmod((dir + "/locked").c_str(), 0);
  // Root reads everything: check as the unprivileged user "nobody" in a child.
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(2);
    const ReadAllResult r = ReadAll({dir});
    const bool ok = r.stats.unreadable == 1 && r.docs.size() == 1 && r.docs[0].text == "y" &&
                    r.issues.size() == 1 && r.issues[0].source == dir + "/locked";
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  chmod((dir + "/locked").c_str(), 0755);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: wrong result, 2: cannot become nobody";
}

TEST(ReaderTest, LinesFormat) {
  const std::string dir = MakeTempDir("lines");
  WriteFile(dir + "/l.txt", "第一行\n\n第三行\r\n最后一行没有换行");
  ReadOptions options;
  options.format = InputFormat::kLines;
  const ReadAllResult r = ReadAll({dir + "/l.txt"}, options);
  ASSERT_EQ(r.docs.size(), 3u);
  EXPECT_EQ(r.docs[1].text, "第三行");
  EXPECT_EQ(r.docs[1].id, dir + "/l.txt:3");
  EXPECT_EQ(r.docs[2].text, "最后一行没有换行");
}

TEST(ReaderTest, GzippedManPageIsReadAsRoff) {
  const std::string dir = MakeTempDir("roff");
  const std::string path = dir + "/ls.1.gz";
  gzFile f = gzopen(path.c_str(), "wb");
  const std::string page =
      ".\\\" comment\n.TH LS 1 2022 \"GNU\" 用户命令\n.SH 名称\nls \\- 列出目录内容\n"
      ".TP\n\\fB\\-a\\fP, \\fB\\-\\-all\\fP\n不要忽略以点号起始的条目\n";
  gzwrite(f, page.data(), static_cast<unsigned>(page.size()));
  gzclose(f);
  const ReadAllResult r = ReadAll({path});
  ASSERT_EQ(r.docs.size(), 1u);
  EXPECT_EQ(r.docs[0].title, "LS");
  EXPECT_EQ(r.docs[0].text, "名称\nls - 列出目录内容\n-a, --all\n不要忽略以点号起始的条目\n");
}

TEST(ReaderTest, LongLineIsReportedNotLoaded) {
  const std::string dir = MakeTempDir("long");
  WriteFile(dir + "/l.jsonl",
            "{\"text\": \"" + std::string(3000, 'a') + "\"}\n{\"text\": \"short\"}\n");
  ReadOptions options;
  options.max_document_bytes = 1000;
  ReadAllResult r = ReadAll({dir + "/l.jsonl"}, options);
  ASSERT_EQ(r.docs.size(), 1u);
  EXPECT_EQ(r.docs[0].line, 2u);
  EXPECT_EQ(r.stats.unreadable, 1u);
  // No line break within kLongLineSkipFactor times the limit: the file ends.
  WriteFile(dir + "/l.jsonl",
            "{\"text\": \"" + std::string(4000, 'a') + "\"}\n{\"text\": \"short\"}\n");
  r = ReadAll({dir + "/l.jsonl"}, options);
  EXPECT_EQ(r.docs.size(), 0u);
  ASSERT_EQ(r.issues.size(), 1u);
  EXPECT_EQ(r.issues[0].line, 1u);
  EXPECT_NE(r.issues[0].reason.find("the rest of the file is not read"), std::string::npos);
}

TEST(ReaderTest, NumberTooLargeForADoubleKeepsTheDocument) {
  const std::string dir = MakeTempDir("bignum");
  WriteFile(dir + "/n.jsonl",
            "{\"id\":\"x\",\"text\":\"hello\",\"n\":1e400}\n"
            "{\"id\":-1E400,\"text\":\"big id\",\"score\":[1e999,2]}\n"
            "{\"id\":\"t\",\"text\":1e400}\n"
            "{\"id\":\"fuzz\",\"text\":\"x\",\"n\":1e2222222222222222223e}\n"
            "{\"id\":\"tiny\",\"text\":\"y\",\"n\":1e-400}\n"
            "{\"text\":\"a number is no key\",1e400:1}\n");
  ReadOptions options;
  options.extra_fields = {"n", "score"};
  const ReadAllResult r = ReadAll({dir + "/n.jsonl"}, options);
  ASSERT_EQ(r.docs.size(), 3u);
  EXPECT_EQ(r.docs[0].id, "x");
  EXPECT_EQ(r.docs[0].text, "hello");
  EXPECT_EQ(r.docs[0].fields.at("n"), "1e400");
  EXPECT_EQ(r.docs[1].id, "-1E400");
  EXPECT_EQ(r.docs[1].fields.at("score"), "[\"1e999\",2]");
  EXPECT_EQ(r.docs[2].id, "tiny");
  ASSERT_EQ(r.issues.size(), 3u);
  EXPECT_EQ(r.issues[0].kind, InputIssue::Kind::kMissingField);
  EXPECT_EQ(r.issues[0].line, 3u);
  EXPECT_NE(r.issues[0].reason.find("out of range"), std::string::npos) << r.issues[0].reason;
  EXPECT_EQ(r.issues[1].kind, InputIssue::Kind::kMalformedLine);
  EXPECT_EQ(r.issues[1].line, 4u);
  EXPECT_EQ(r.issues[2].kind, InputIssue::Kind::kMalformedLine);
  EXPECT_EQ(r.issues[2].line, 6u);
}

TEST(ReaderTest, DeeplyNestedValuesAreMalformedNotACrash) {
  const std::string dir = MakeTempDir("deep");
  const size_t depth = 100000;
  const std::string deep = std::string(depth, '[') + std::string(depth, ']');
  WriteFile(dir + "/d.jsonl", "{\"id\":" + deep + ",\"text\":\"a\"}\n" +
                                  "{\"id\":\"ok\",\"text\":\"b\",\"f\":" + deep + "}\n" +
                                  "{\"id\":\"fine\",\"text\":\"c\",\"f\":[[[\"]]]]]]\"]]]}\n" +
                                  "{\"id\":" + std::string(kMaxJsonNesting - 1, '[') +
                                  std::string(kMaxJsonNesting - 1, ']') + ",\"text\":\"d\"}\n");
  ReadOptions options;
  options.extra_fields = {"f"};
  const ReadAllResult r = ReadAll({dir + "/d.jsonl"}, options);
  ASSERT_EQ(r.docs.size(), 2u);
  EXPECT_EQ(r.docs[0].id, "fine");
  EXPECT_EQ(r.docs[0].fields.at("f"), "[[[\"]]]]]]\"]]]");
  EXPECT_EQ(r.docs[1].text, "d");
  EXPECT_EQ(r.stats.malformed, 2u);
  ASSERT_EQ(r.issues.size(), 2u);
  EXPECT_NE(r.issues[0].reason.find("nested deeper than 256"), std::string::npos);
}

TEST(ReaderTest, InvalidUtf8AndLoneSurrogatesInJsonKeepTheDocument) {
  const std::string dir = MakeTempDir("json_utf8");
  WriteFile(dir + "/u.jsonl",
            "{\"id\":\"raw\",\"text\":\"a\xff"
            "b\xC0\xAF"
            "c\"}\n"
            "{\"id\":\"esc\",\"text\":\"x\\uD800y\\uDC00z\\uD83D\\uDE00\"}\n"
            "{\"id\":\"bad\xfe\",\"text\":\"ok\"}\n"
            "{\"id\":\"broken\xff\",\"text\":}\n");
  const ReadAllResult r = ReadAll({dir + "/u.jsonl"});
  ASSERT_EQ(r.docs.size(), 3u);
  EXPECT_EQ(r.docs[0].text,
            "a\xEF\xBF\xBD"
            "b\xEF\xBF\xBD\xEF\xBF\xBD"
            "c");
  EXPECT_EQ(r.docs[1].text,
            "x\xEF\xBF\xBD"
            "y\xEF\xBF\xBD"
            "z😀");
  EXPECT_EQ(r.docs[2].id, "bad\xEF\xBF\xBD");
  EXPECT_EQ(r.stats.invalid_utf8, 3u);
  EXPECT_EQ(r.stats.malformed, 1u);
  for (const InputIssue& issue : r.issues) {
    std::string message = issue.ToString();
    EXPECT_EQ(RepairUtf8(&message).invalid, 0u) << issue.ToString();
  }
}

std::string Gzip(const std::string& data) {
  const std::string dir = MakeTempDir("gz");
  gzFile f = gzopen((dir + "/x.gz").c_str(), "wb");
  gzwrite(f, data.data(), static_cast<unsigned>(data.size()));
  gzclose(f);
  return neardup::testing::ReadFile(dir + "/x.gz");
}

TEST(ReaderTest, TruncatedGzipIsReportedAndItsLastLineDropped) {
  std::string jsonl;
  for (int i = 0; i < 2000; ++i) {
    jsonl += "{\"id\":\"" + std::to_string(i) + "\",\"text\":\"第" + std::to_string(i * 7919) +
             "篇\"}\n";
  }
  const std::string gz = Gzip(jsonl);
  const std::string dir = MakeTempDir("gzcut");
  WriteFile(dir + "/cut.jsonl.gz", gz.substr(0, gz.size() / 2));
  const ReadAllResult r = ReadAll({dir + "/cut.jsonl.gz"});
  ASSERT_GT(r.docs.size(), 0u);
  ASSERT_LT(r.docs.size(), 2000u);
  for (size_t i = 0; i < r.docs.size(); ++i) {
    ASSERT_EQ(r.docs[i].id, std::to_string(i));  // no half line read as a document
  }
  EXPECT_EQ(r.stats.unreadable, 1u);
  EXPECT_EQ(r.stats.malformed, 0u);
  ASSERT_EQ(r.issues.size(), 1u);
  EXPECT_NE(r.issues[0].reason.find("truncated gzip"), std::string::npos) << r.issues[0].reason;

  // The whole file is fine; a cut one-document file is dropped.
  WriteFile(dir + "/whole.jsonl.gz", gz);
  EXPECT_EQ(ReadAll({dir + "/whole.jsonl.gz"}).docs.size(), 2000u);
  WriteFile(dir + "/page.txt.gz", gz.substr(0, gz.size() - 4));
  const ReadAllResult page = ReadAll({dir + "/page.txt.gz"});
  EXPECT_EQ(page.docs.size(), 0u);
  EXPECT_EQ(page.stats.unreadable, 1u);
}

// InputStats::input_bytes counts the bytes read as stored: a compressed
// file's compressed bytes, so that progress against the files' sizes is
// right for compressed input too (issue 25).
TEST(ReaderTest, InputBytesCountCompressedBytesRead) {
  // Text that compresses about 2:1, in lines, well over the reader's buffers.
  std::mt19937_64 rng(25);
  std::string jsonl;
  for (int i = 0; i < 12000; ++i) {
    std::string text;
    for (int j = 0; j < 120; ++j) text += "abcdefghijklmnop"[rng() % 16];
    jsonl += "{\"id\":\"" + std::to_string(i) + "\",\"text\":\"" + text + "\"}\n";
  }
  const std::string dir = MakeTempDir("input_bytes");
  const std::string gz = Gzip(jsonl);
  ASSERT_GT(gz.size(), 768u << 10);
  ASSERT_LT(gz.size(), jsonl.size() * 3 / 4);
  WriteFile(dir + "/a.jsonl.gz", gz);
  const std::string plain = "{\"text\":\"plain\"}\n";
  WriteFile(dir + "/b.jsonl", plain);
  auto reader = DocumentReader::Open({dir + "/a.jsonl.gz", dir + "/b.jsonl"}, {});
  ASSERT_TRUE(reader.ok());
  Document doc;
  uint64_t docs = 0, last = 0;
  while ((*reader)->Next(&doc)) {
    ++docs;
    const uint64_t read = (*reader)->stats().input_bytes;
    EXPECT_GE(read, last);
    last = read;
    if (docs == 6000) {
      // Half the documents: about half the compressed file, give or take
      // the reader's buffers (256 KiB), far from its text's size.
      EXPECT_GT(read, gz.size() / 2 - (256u << 10)) << read << " of " << gz.size();
      EXPECT_LT(read, gz.size() / 2 + (256u << 10)) << read << " of " << gz.size();
    }
  }
  EXPECT_EQ(docs, 12001u);
  // Every byte of both files, as stored.
  EXPECT_EQ((*reader)->stats().input_bytes, gz.size() + plain.size());
}

TEST(ReaderTest, GzipBombStopsAtTheLimit) {
  const std::string dir = MakeTempDir("bomb");
  WriteFile(dir + "/bomb.txt.gz", Gzip(std::string(8 << 20, 'a')));
  WriteFile(dir + "/bomb.jsonl.gz", Gzip(std::string(8 << 20, ' ')));
  ReadOptions options;
  options.max_document_bytes = 1 << 20;
  const ReadAllResult r = ReadAll({dir + "/bomb.txt.gz", dir + "/bomb.jsonl.gz"}, options);
  EXPECT_EQ(r.docs.size(), 0u);
  EXPECT_EQ(r.stats.unreadable, 2u);
  ASSERT_EQ(r.issues.size(), 2u);
  EXPECT_NE(r.issues[0].reason.find("larger than the limit"), std::string::npos);
}

TEST(ReaderTest, SpecialFilesAreSkippedWhileWalkingAndDevicesRefused) {
  alarm(60);  // a reader that blocks on the FIFO fails instead of hanging
  const std::string dir = MakeTempDir("fifo");
  WriteFile(dir + "/a.txt", "甲");
  ASSERT_EQ(mkfifo((dir + "/b.fifo").c_str(), 0600), 0);
  WriteFile(dir + "/c.txt", "丙");
  const ReadAllResult r = ReadAll({dir, "/dev/zero"});
  ASSERT_EQ(r.docs.size(), 2u);
  EXPECT_EQ(r.docs[1].text, "丙");
  EXPECT_EQ(r.stats.skipped, 1u);
  EXPECT_EQ(r.stats.unreadable, 1u);
  EXPECT_EQ(r.issues.back().source, "/dev/zero");
  EXPECT_NE(r.issues.back().reason.find("character device"), std::string::npos);

  // A named FIFO is read.
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const int fd = open((dir + "/b.fifo").c_str(), O_WRONLY);
    const bool ok = fd >= 0 && write(fd, "乙", 3) == 3;
    _exit(ok ? 0 : 1);
  }
  const ReadAllResult named = ReadAll({dir + "/b.fifo"});
  int status = 0;
  waitpid(pid, &status, 0);
  alarm(0);
  ASSERT_EQ(named.docs.size(), 1u);
  EXPECT_EQ(named.docs[0].text, "乙");
}

TEST(ReaderTest, InvalidFileNamesGiveDistinctEscapedIds) {
  const std::string dir = MakeTempDir("names");
  WriteFile(dir + "/\xc4\xe3.txt", "一");
  WriteFile(dir + "/\xba\xc3.txt", "二");
  WriteFile(dir + "/ok.txt", "三");
  const ReadAllResult r = ReadAll({dir});
  ASSERT_EQ(r.docs.size(), 3u);
  EXPECT_EQ(r.docs[0].id, dir + "/ok.txt");  // byte order: 'o' < 0xBA
  EXPECT_EQ(r.docs[1].id, dir + "/\\xBA\\xC3.txt");
  EXPECT_EQ(r.docs[2].id, dir + "/\\xC4\\xE3.txt");
  EXPECT_EQ(r.stats.invalid_utf8, 2u);
  for (const InputIssue& issue : r.issues) {
    std::string message = issue.ToString();
    EXPECT_EQ(RepairUtf8(&message).invalid, 0u);
  }
}

TEST(ReaderTest, StandardInputJsonlIsStreamedNotBoundByTheDocumentLimit) {
  // Auto-detected JSONL on standard input: each line is a document, so the
  // stream may be far larger than max_document_bytes.
  const std::string dir = MakeTempDir("stdin");
  std::string jsonl = "\xEF\xBB\xBF  \n";
  for (int i = 0; i < 100; ++i) jsonl += "{\"text\":\"" + std::string(100, 'a') + "\"}\n";
  WriteFile(dir + "/in.jsonl", jsonl);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const int fd = open((dir + "/in.jsonl").c_str(), O_RDONLY);
    if (fd < 0 || dup2(fd, STDIN_FILENO) < 0) _exit(2);
    ReadOptions options;
    options.max_document_bytes = 1000;
    const ReadAllResult r = ReadAll({"-"}, options);
    _exit(r.docs.size() == 100 && r.issues.empty() && r.docs[99].id == "-:101" ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(ReaderTest, ParseInputFormat) {
  EXPECT_EQ(*ParseInputFormat("jsonl"), InputFormat::kJsonl);
  EXPECT_EQ(*ParseInputFormat("roff"), InputFormat::kRoff);
  EXPECT_TRUE(ParseInputFormat("xml").status().IsInvalidArgument());
}

}  // namespace
}  // namespace neardup

namespace neardup {
namespace {

TEST(ReaderTest, RecordsAreTheInputBytes) {
  const std::string dir = MakeTempDir("reader_records");
  const std::string l1 = R"({"id":"a", "text":"x","meta":{"body":"nested","n":1.50}})";
  const std::string l2 = R"({"text":"y","z":"\u4e2d"})"
                         "\r";
  WriteFile(dir + "/a.jsonl", "\xEF\xBB\xBF" + l1 + "\n\n" + l2 + "\n");
  WriteFile(dir + "/b.txt", "plain");
  ReadOptions options;
  options.keep_records = true;
  ReadAllResult r = ReadAll({dir + "/a.jsonl", dir + "/b.txt"}, options);
  ASSERT_EQ(r.docs.size(), 3u);
  EXPECT_EQ(r.docs[0].record, l1);
  EXPECT_EQ(r.docs[1].record, l2);
  EXPECT_EQ(r.docs[1].text, "y");
  EXPECT_EQ(r.docs[2].record, dir + "/b.txt");
  // Off by default.
  r = ReadAll({dir + "/a.jsonl"});
  ASSERT_EQ(r.docs.size(), 2u);
  EXPECT_EQ(r.docs[0].record, "");
  // Nested paths, for the text and for extra fields.
  options.text_field = "meta.body";
  options.extra_fields = {"meta.n", "meta.missing"};
  r = ReadAll({dir + "/a.jsonl"}, options);
  ASSERT_EQ(r.docs.size(), 1u);
  EXPECT_EQ(r.docs[0].text, "nested");
  EXPECT_EQ(r.docs[0].fields.at("meta.n"), "1.5");
  EXPECT_EQ(r.docs[0].fields.count("meta.missing"), 0u);
  EXPECT_EQ(r.stats.missing_field, 1u);
}

}  // namespace
}  // namespace neardup

namespace neardup {
namespace {

// A random string of long runs of three-byte characters (every lead E0..EF,
// mostly with the continuations each allows), ASCII and two-byte
// characters, with a few bytes overwritten by bytes >= 0x80 (none a quote,
// backslash or control): valid or not at any place of a run.
std::string MixedUtf8(std::mt19937_64& rng) {
  std::string s;
  const size_t chars = rng() % 120;
  for (size_t c = 0; c < chars; ++c) {
    const uint64_t kind = rng() % 20;
    if (kind == 0) {
      s += static_cast<char>('a' + rng() % 26);
    } else if (kind == 1) {
      s += static_cast<char>(0xC2 + rng() % 30);
      s += static_cast<char>(0x80 + rng() % 64);
    } else {
      const auto lead = static_cast<unsigned char>(0xE0 + rng() % 16);
      // Now and then an overlong E0 or a surrogate ED sequence (invalid).
      const bool any = rng() % 64 == 0;
      const unsigned low = lead == 0xE0 && !any ? 0xA0 : 0x80;
      const unsigned high = lead == 0xED && !any ? 0x9F : 0xBF;
      s += static_cast<char>(lead);
      s += static_cast<char>(low + rng() % (high - low + 1));
      s += static_cast<char>(0x80 + rng() % 64);
    }
  }
  for (int bad = static_cast<int>(rng() % 4) - 1; bad > 0 && !s.empty(); --bad) {
    s[rng() % s.size()] = static_cast<char>(0x80 + rng() % 128);
  }
  return s;
}

// The strict fast path takes a line exactly when its text is valid UTF-8,
// however its runs of CJK characters fall against the 30-byte steps.
TEST(FastJsonLineTest, StrictTakesExactlyTheValidUtf8) {
  std::mt19937_64 rng(8);
  size_t valid = 0, invalid = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    const std::string text = MixedUtf8(rng);
    const std::string line = "{\"id\":\"x\",\"text\":\"" + text + "\"}";
    FastJsonLine parser(line, true);
    FastJsonLine::Member t, id, title;
    const bool took = parser.Parse("text", "id", "title", &t, &id, &title);
    const bool want = utf8::IsValid(text);
    ASSERT_EQ(took, want) << "trial " << trial << " size " << text.size();
    if (took) {
      EXPECT_EQ(t.raw, "\"" + text + "\"");
    }
    (want ? valid : invalid) += 1;
  }
  EXPECT_GT(valid, 2000u);
  EXPECT_GT(invalid, 2000u);
}

// Decode says whether the value holds a NUL (the reader then skips its scan
// for one): exactly when a \u0000 escape was decoded.
TEST(FastJsonLineTest, DecodeReportsANulExactlyWhenItDecodesOne) {
  const std::vector<std::pair<std::string, bool>> cases = {
      {R"("plain")", false},        {R"("a\u0000b")", true},
      {R"("\u0000")", true},        {R"("a\\u0000b")", false},
      {R"("\u0001\n\t")", false},   {R"("中文\u4e2d")", false},
      {R"("\ud83d\ude00")", false}, {R"("")", false}};
  for (const auto& [raw, want] : cases) {
    std::string out;
    bool nul = !want;
    ASSERT_TRUE(FastJsonLine::Decode(raw, &out, &nul)) << raw;
    EXPECT_EQ(nul, want) << raw;
    EXPECT_EQ(out.find('\0') != std::string::npos, want) << raw;
  }
}

}  // namespace
}  // namespace neardup
