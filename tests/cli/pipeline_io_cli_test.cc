// Copyright 2026 The neardup Authors.
//
// neardup in a data pipeline: --unique-out / --duplicates-out give back the
// original records byte for byte, nested field paths, compressed input
// recognized by content, empty input, compare/explain within one corpus,
// exit statuses of usage errors, an endless line in bounded memory, and an
// index header that names files it should not.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "tests/testing/test_util.h"

namespace neardup {
namespace {

using ::neardup::testing::MakeTempDir;
using ::neardup::testing::ParseJsonLines;
using ::neardup::testing::ReadFile;
using ::neardup::testing::RunCli;
using ::neardup::testing::WriteFile;

const std::string kTextA = "近似重复检测需要稳定的指纹，这是一段很长的文本内容用于测试去重效果";
const std::string kTextB = "毫无关系的第三篇文档讲的是天气和旅行计划以及沿途的风景名胜";
const std::string kTextC = "另一篇完全不同的文章介绍数据库索引的设计原理和常见误区";

// The records of a JSONL corpus: b copies a (a near-duplicate), with every
// kind of field and spelling a re-serialization would change: unknown and
// nested fields, key order, white space, escapes, number spellings, a CRLF.
std::vector<std::string> JsonlRecords() {
  return {
      R"({"id":"a","text":")" + kTextA + R"(","category":"新闻","meta":{"body":")" + kTextC +
          R"(","tags":["x",1.50,{"z":null}]}})",
      R"({ "text" : ")" + kTextA + R"(", "id":"b","score": 1.0e5 ,"u":"\u4e2d\/"})" + "\r",
      R"({"id":"c","text":")" + kTextB + R"(","meta":{"body":")" + kTextB + R"("},"n":[1,2,3]})",
  };
}

std::string Join(const std::vector<std::string>& records, const std::vector<size_t>& which) {
  std::string out;
  for (size_t i : which) out += records[i] + "\n";
  return out;
}

TEST(PipelineIoCliTest, UniqueAndDuplicatesOutAreTheOriginalJsonlBytes) {
  const std::string dir = MakeTempDir("pio_jsonl");
  const std::vector<std::string> records = JsonlRecords();
  WriteFile(dir + "/in.jsonl", Join(records, {0, 1, 2}));
  const auto r = RunCli({"dedup", dir + "/in.jsonl", "--unique-out", dir + "/u.jsonl",
                         "--duplicates-out", dir + "/d.jsonl", "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto decisions = ParseJsonLines(r.out);
  ASSERT_EQ(decisions.size(), 3u);
  EXPECT_FALSE(decisions[0]["duplicate"]);
  EXPECT_TRUE(decisions[1]["duplicate"]);
  EXPECT_FALSE(decisions[2]["duplicate"]);
  EXPECT_EQ(ReadFile(dir + "/u.jsonl"), Join(records, {0, 2}));
  EXPECT_EQ(ReadFile(dir + "/d.jsonl"), Join(records, {1}));

  // The same from standard input, with a byte order mark and blank lines
  // (not records: neither output holds them).
  const auto s = RunCli({"dedup", "-", "--unique-out", dir + "/u2.jsonl", "--duplicates-out",
                         dir + "/d2.jsonl", "-q"},
                        "\xEF\xBB\xBF" + records[0] + "\n\n  \n" + records[1] + "\n" + records[2]);
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_EQ(ReadFile(dir + "/u2.jsonl"), Join(records, {0, 2}));
  EXPECT_EQ(ReadFile(dir + "/d2.jsonl"), Join(records, {1}));
}

TEST(PipelineIoCliTest, NestedFieldPaths) {
  const std::string dir = MakeTempDir("pio_nested");
  const std::vector<std::string> records = JsonlRecords();
  WriteFile(dir + "/in.jsonl", Join(records, {0, 1, 2}));
  // meta.body: a's is kTextC, c's kTextB; b has none (reported, counted).
  const auto r = RunCli({"dedup", dir + "/in.jsonl", "--text-field", "meta.body", "--unique-out",
                         dir + "/u.jsonl", "--strict"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("in.jsonl:2: no \"meta.body\" field"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("read 2 documents"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("1 without text"), std::string::npos) << r.err;
  EXPECT_EQ(ReadFile(dir + "/u.jsonl"), Join(records, {0, 2}));
  // The fingerprint of a nested text equals that of the same text at the top.
  const auto nested = RunCli({"fingerprint", "--text-field", "meta.body", "-q", "-"},
                             R"({"id":"x","meta":{"body":")" + kTextC + "\"}}\n");
  const auto flat = RunCli({"fingerprint", "-q", "-"}, R"({"id":"x","text":")" + kTextC + "\"}\n");
  ASSERT_EQ(nested.exit_code, 0) << nested.err;
  EXPECT_EQ(nested.out, flat.out);
  // Nested ids, three levels deep; a key with a dot in it wins over a path.
  const auto ids = RunCli({"fingerprint", "--id-field", "a.b.c", "-q", "-"},
                          R"({"a":{"b":{"c":"deep"}},"text":"x"})"
                          "\n"
                          R"({"a.b.c":"flat","a":{"b":{"c":"deep"}},"text":"x"})"
                          "\n"
                          R"({"a":{"b":"not an object"},"text":"x"})"
                          "\n");
  ASSERT_EQ(ids.exit_code, 0) << ids.err;
  const auto lines = ParseJsonLines(ids.out);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0]["id"], "deep");
  EXPECT_EQ(lines[1]["id"], "flat");
  EXPECT_EQ(lines[2]["id"], "-:3");  // the default id
}

TEST(PipelineIoCliTest, LinesRoundTripAsLines) {
  const std::string dir = MakeTempDir("pio_lines");
  const std::vector<std::string> lines = {"  " + kTextA + "\t", kTextB, kTextA + "\r",
                                          "{\"not\": \"json, just a line\"}" + kTextC};
  WriteFile(dir + "/in.txt", Join(lines, {0, 1, 2, 3}));
  const auto r =
      RunCli({"dedup", "--input-format", "lines", dir + "/in.txt", "--unique-out", dir + "/u.txt",
              "--duplicates-out", dir + "/d.txt", "--normalize", "nfkc,ws", "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadFile(dir + "/u.txt"), Join(lines, {0, 1, 3}));
  EXPECT_EQ(ReadFile(dir + "/d.txt"), Join(lines, {2}));
}

TEST(PipelineIoCliTest, FileInputsGiveFileLists) {
  const std::string dir = MakeTempDir("pio_files");
  std::filesystem::create_directories(dir + "/docs/sub");
  WriteFile(dir + "/docs/1.txt", kTextA);
  WriteFile(dir + "/docs/2.txt", kTextB);
  WriteFile(dir + "/docs/sub/3.txt", kTextA + "。");
  const auto r = RunCli({"dedup", dir + "/docs", "--unique-out", dir + "/u.list",
                         "--duplicates-out", dir + "/d.list", "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadFile(dir + "/u.list"), dir + "/docs/1.txt\n" + dir + "/docs/2.txt\n");
  EXPECT_EQ(ReadFile(dir + "/d.list"), dir + "/docs/sub/3.txt\n");
}

// A zstd frame of raw blocks (RFC 8878): what any zstd decoder must read,
// built here so that the test needs no compressor.
std::string ZstdRawFrame(const std::string& content) {
  std::string f = "\x28\xb5\x2f\xfd";
  f += '\x00';  // frame header descriptor: no content size, no checksum, a window descriptor
  f += '\x50';  // window descriptor: 2^(10 + 10) = 1 MiB
  const size_t kBlock = 1 << 16;
  for (size_t pos = 0; pos < content.size() || pos == 0; pos += kBlock) {
    const size_t n = std::min(kBlock, content.size() - pos);
    const bool last = pos + kBlock >= content.size();
    const uint32_t header = static_cast<uint32_t>(n << 3) | (last ? 1u : 0u);  // type 0: raw
    f += static_cast<char>(header & 0xff);
    f += static_cast<char>((header >> 8) & 0xff);
    f += static_cast<char>((header >> 16) & 0xff);
    f.append(content, pos, n);
    if (last) break;
  }
  return f;
}

std::string Gzip(const std::string& content) {
  z_stream zs{};
  deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&zs, content.size()) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(content.data()));
  zs.avail_in = static_cast<uInt>(content.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

TEST(PipelineIoCliTest, CompressedInputIsRecognizedByContent) {
  const std::string dir = MakeTempDir("pio_codec");
  std::string jsonl;
  for (int i = 0; i < 3000; ++i) {  // more than one zstd block, several reads
    jsonl += "{\"id\":\"" + std::to_string(i) + "\",\"text\":\"第" + std::to_string(i * 7919) +
             "篇文档的内容\"}\n";
  }
  const auto plain = RunCli({"fingerprint", "--input-format", "jsonl", "-q", "-"}, jsonl);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(ParseJsonLines(plain.out).size(), 3000u);
  // Names that say nothing (or the wrong thing) about the codec.
  const std::string half = jsonl.substr(0, jsonl.size() / 2);
  const std::string rest = jsonl.substr(jsonl.size() / 2);
  WriteFile(dir + "/a.data", ZstdRawFrame(half) + ZstdRawFrame(rest));  // two frames
  WriteFile(dir + "/b.jsonl", Gzip(half) + Gzip(rest));                 // two members
  WriteFile(dir + "/c.jsonl.zst", ZstdRawFrame(jsonl));
  for (const std::string name : {"a.data", "b.jsonl", "c.jsonl.zst"}) {
    const std::string path = dir + "/" + name;
    const auto r = RunCli({"fingerprint", "--input-format", "jsonl", "-q", path});
    ASSERT_EQ(r.exit_code, 0) << name << ": " << r.err;
    EXPECT_EQ(ParseJsonLines(r.out).size(), 3000u) << name;
    EXPECT_EQ(r.out, plain.out) << name;
    const auto s = RunCli({"fingerprint", "--input-format", "jsonl", "-q", "-"}, ReadFile(path));
    EXPECT_EQ(s.out, plain.out) << name << " on standard input";
  }
  // Auto format: .jsonl.zst is JSONL, and so is compressed standard input.
  const auto a = RunCli({"fingerprint", "-q", dir + "/c.jsonl.zst"});
  EXPECT_EQ(a.out, plain.out);
  const auto z = RunCli({"fingerprint", "-q", "-"}, ReadFile(dir + "/a.data"));
  EXPECT_EQ(z.out, plain.out);
  // --unique-out writes the decompressed records.
  const auto u =
      RunCli({"dedup", "-q", dir + "/c.jsonl.zst", "-k", "0", "--unique-out", dir + "/u.jsonl"});
  ASSERT_EQ(u.exit_code, 0) << u.err;
  EXPECT_EQ(ReadFile(dir + "/u.jsonl"), jsonl);
  // A cut stream is bad input, reported with the line it cut.
  const std::string whole = ZstdRawFrame(jsonl);
  WriteFile(dir + "/cut.zst", whole.substr(0, whole.size() - 1000));
  const auto cut = RunCli({"fingerprint", "--input-format", "jsonl", "--strict", dir + "/cut.zst"});
  EXPECT_EQ(cut.exit_code, 3) << cut.err;
  EXPECT_NE(cut.err.find("truncated zstd stream"), std::string::npos) << cut.err;
  EXPECT_LT(ParseJsonLines(cut.out).size(), 3000u);
  WriteFile(dir + "/garbage.gz", Gzip(half) + "trailing garbage");
  const auto g =
      RunCli({"fingerprint", "--input-format", "jsonl", "--strict", dir + "/garbage.gz"});
  EXPECT_EQ(g.exit_code, 3) << g.err;
  EXPECT_NE(g.err.find("data after the end of the gzip stream"), std::string::npos) << g.err;
}

TEST(PipelineIoCliTest, EmptyInputIsAnEmptyResult) {
  const std::string dir = MakeTempDir("pio_empty");
  WriteFile(dir + "/empty.jsonl", "");
  WriteFile(dir + "/punct.jsonl",
            "{\"id\":\"p\",\"text\":\"！！！。。。\"}\n{\"id\":\"q\",\"text\":\"...,,,\"}\n");
  const std::vector<std::vector<std::string>> runs = {
      {"dedup", dir + "/empty.jsonl"}, {"dedup", "-"}, {"dedup", "--input-format", "jsonl", "-"}};
  for (const auto& args : runs) {
    std::vector<std::string> a = args;
    a.insert(a.end(), {"--unique-out", dir + "/u.jsonl", "--duplicates-out", dir + "/d.jsonl"});
    const auto r = RunCli(a);
    EXPECT_EQ(r.exit_code, 0) << args.back() << ": " << r.err;
    EXPECT_EQ(r.out, "") << args.back();
    EXPECT_NE(r.err.find("read 0 documents"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("0 documents: 0 kept"), std::string::npos) << r.err;
    EXPECT_EQ(ReadFile(dir + "/u.jsonl"), "");
    EXPECT_EQ(ReadFile(dir + "/d.jsonl"), "");
  }
  // Documents without a feature are kept, none is a duplicate of another.
  const auto p = RunCli({"dedup", dir + "/punct.jsonl", "--unique-out", dir + "/u.jsonl"});
  EXPECT_EQ(p.exit_code, 0) << p.err;
  EXPECT_EQ(ParseJsonLines(p.out).size(), 2u);
  EXPECT_EQ(ReadFile(dir + "/u.jsonl"), ReadFile(dir + "/punct.jsonl"));
}

TEST(PipelineIoCliTest, CompareAndExplainTwoIdsOfOneCorpus) {
  const std::string dir = MakeTempDir("pio_compare");
  const std::string corpus = R"({"doc":{"id":"x"},"body":")" + kTextA + "\"}\n" +
                             R"({"doc":{"id":"y"},"body":")" + kTextB + "\"}\n" +
                             R"({"doc":{"id":"z"},"body":")" + kTextA + "。\"}\n";
  WriteFile(dir + "/c.jsonl", corpus);
  const std::vector<std::string> fields = {"--id-field", "doc.id", "--text-field", "body"};
  auto by_id = fields;
  by_id.insert(by_id.begin(), {"compare", "--json", dir + "/c.jsonl", "--id", "z", "--id", "x"});
  const auto r = RunCli(by_id);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The oracle: the same two texts given directly.
  const auto t = RunCli({"compare", "--json", "--text", kTextA + "。", kTextA});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_EQ(nlohmann::json::parse(r.out), nlohmann::json::parse(t.out));
  // From standard input too, and explain.
  auto stdin_args = fields;
  stdin_args.insert(stdin_args.begin(), {"explain", "--id", "x", "--id", "y"});
  const auto e = RunCli(stdin_args, corpus);
  ASSERT_EQ(e.exit_code, 0) << e.err;
  const auto et = RunCli({"explain", "--text", kTextA, kTextB});
  EXPECT_EQ(e.out, et.out);
  // Two files with a nested text field (the first document of each).
  WriteFile(dir + "/1.jsonl", R"({"body":")" + kTextA + "\"}\n");
  WriteFile(dir + "/2.jsonl", R"({"body":")" + kTextC + "\"}\n");
  const auto f =
      RunCli({"compare", "--json", "--text-field", "body", dir + "/1.jsonl", dir + "/2.jsonl"});
  const auto ft = RunCli({"compare", "--json", "--text", kTextA, kTextC});
  ASSERT_EQ(f.exit_code, 0) << f.err;
  EXPECT_EQ(nlohmann::json::parse(f.out), nlohmann::json::parse(ft.out));
  // An id that is not there: an error naming it.
  by_id = fields;
  by_id.insert(by_id.begin(), {"compare", dir + "/c.jsonl", "--id", "x", "--id", "nope"});
  const auto missing = RunCli(by_id);
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("no document with id \"nope\""), std::string::npos) << missing.err;
}

TEST(PipelineIoCliTest, EveryUsageErrorExitsTwoWithTheParsersMessage) {
  const struct {
    std::vector<std::string> args;
    std::string message;
  } cases[] = {
      {{"dedup", "--no-such-flag"}, "--no-such-flag"},
      {{"dedup", "-k", "abc"}, "abc"},
      {{"dedup", "-k", "-1"}, "-k"},
      {{"dedup", "--threads", "-1"}, "--threads"},
      {{"dedup", "--unique-out"}, "--unique-out"},
      {{"no-such-command"}, "subcommand"},
      {{}, "subcommand"},
      {{"compare", "a"}, "two files"},
      {{"compare", "--id", "a", "-"}, "--id twice"},
      {{"compare", "--id", "a", "--id", "b", "--text", "x"}, "--id twice"},
      {{"dedup", "--input-format", "xml"}, "xml"},
      {{"explain", "--max-document-bytes", "0", "a", "b"}, "--max-document-bytes"},
  };
  for (const auto& c : cases) {
    const auto r = RunCli(c.args);
    std::string joined;
    for (const auto& a : c.args) joined += a + " ";
    EXPECT_EQ(r.exit_code, 2) << joined << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << joined << r.err;
  }
  EXPECT_EQ(RunCli({"dedup", "--help"}).exit_code, 0);
  EXPECT_EQ(RunCli({"--version"}).exit_code, 0);
}

// Runs neardup with `args` reading `total` bytes of `byte` (no newline) from
// a pipe; returns the exit status, stderr, peak RSS (KiB) and seconds.
struct EndlessRun {
  int exit_code = -1;
  std::string err;
  long max_rss_kib = 0;
  double seconds = 0;
};

EndlessRun RunOnEndlessInput(const std::vector<std::string>& args, char byte, size_t total,
                             const std::string& err_path) {
  // Everything the child needs, before fork().
  std::string path = NEARDUP_CLI_PATH;
  std::vector<std::string> copy = args;
  std::vector<char*> argv;
  argv.push_back(path.data());
  for (std::string& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  int in[2];
  EndlessRun run;
  if (pipe(in) != 0) return run;
  const int err_fd = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int null_fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(null_fd, 1);
    dup2(err_fd, 2);
    close(in[0]);
    close(in[1]);
    execv(path.c_str(), argv.data());
    _exit(127);
  }
  close(in[0]);
  close(err_fd);
  close(null_fd);
  // The child stops reading: writing then fails with EPIPE, not a signal.
  struct sigaction ignore {
  }, old{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &old);
  const std::string block(1 << 16, byte);
  for (size_t sent = 0; sent < total;) {
    const ssize_t n = write(in[1], block.data(), std::min(block.size(), total - sent));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  close(in[1]);
  sigaction(SIGPIPE, &old, nullptr);
  int status = 0;
  struct rusage usage {};
  wait4(pid, &status, 0, &usage);
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  run.max_rss_kib = usage.ru_maxrss;
  run.err = ReadFile(err_path);
  return run;
}

// ASan's shadow memory and quarantine add a fixed amount to every process.
#if defined(__SANITIZE_ADDRESS__)
constexpr long kRssSlackKib = 96 * 1024;
#else
constexpr long kRssSlackKib = 0;
#endif

TEST(PipelineIoCliTest, AnEndlessLineEndsInBoundedMemory) {
  const std::string dir = MakeTempDir("pio_endless");
  constexpr size_t kTotal = size_t{200} << 20;  // 200 MB, more than the 64 MiB default limit
  // NUL bytes, then printable garbage, both without a newline; JSONL and lines.
  const struct {
    std::vector<std::string> args;
    char byte;
  } cases[] = {
      {{"dedup", "--input-format", "jsonl", "--strict", "-"}, '\0'},
      {{"fingerprint", "--input-format", "lines", "--strict", "-"}, 'x'},
      {{"dedup", "--strict", "-"}, '{'},  // auto: JSONL by its first byte
  };
  for (const auto& c : cases) {
    const EndlessRun run = RunOnEndlessInput(c.args, c.byte, kTotal, dir + "/err.txt");
    EXPECT_EQ(run.exit_code, 3) << c.args[0] << ": " << run.err;
    EXPECT_NE(run.err.find("-:1: line longer than the limit of 67108864 bytes"), std::string::npos)
        << run.err;
    // The line is held up to the limit, never the whole stream.
    EXPECT_LT(run.max_rss_kib, 200 * 1024 + kRssSlackKib) << c.args[0];
  }
  // A small limit: a small footprint.
  const EndlessRun small = RunOnEndlessInput(
      {"dedup", "--input-format", "jsonl", "--max-document-bytes", "1000000", "-"}, '\0', kTotal,
      dir + "/err.txt");
  // Nothing read, the one record skipped: a failure (the status rule).
  EXPECT_EQ(small.exit_code, 1) << small.err;
  EXPECT_NE(small.err.find("-:1: line longer than the limit of 1000000 bytes"), std::string::npos)
      << small.err;
  EXPECT_NE(small.err.find("read 0 documents"), std::string::npos) << small.err;
  EXPECT_LT(small.max_rss_kib, 64 * 1024 + kRssSlackKib);
  EXPECT_NE(small.err.find("no line break within 4000000 bytes; the rest of the file is not read"),
            std::string::npos)
      << small.err;
  // A long line followed by a good one: it is skipped and the next one read
  // when its line break comes within 4 times the limit; else the file ends.
  const std::string path = dir + "/long.jsonl";
  WriteFile(path, "{\"text\":\"" + std::string(2000, 'a') + "\"}\n{\"text\":\"b\"}\n");
  const auto r = RunCli({"fingerprint", "--max-document-bytes", "1000", path});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ParseJsonLines(r.out).size(), 1u);
  EXPECT_NE(r.err.find("long.jsonl:1: line longer than the limit of 1000 bytes"), std::string::npos)
      << r.err;
  WriteFile(path, "{\"text\":\"" + std::string(5000, 'a') + "\"}\n{\"text\":\"b\"}\n");
  const auto e = RunCli({"fingerprint", "--max-document-bytes", "1000", path});
  EXPECT_EQ(e.exit_code, 1) << e.err;  // nothing read, a record skipped
  EXPECT_EQ(e.out, "");
  EXPECT_NE(e.err.find("long.jsonl:1: line longer than the limit of 1000 bytes "
                       "(max_document_bytes) and no line break within 4000 bytes; the rest of "
                       "the file is not read"),
            std::string::npos)
      << e.err;
}

TEST(PipelineIoCliTest, AnIndexHeaderCannotMakeTheToolOpenOrEchoAnyFile) {
  const std::string dir = MakeTempDir("pio_hostile_index");
  WriteFile(dir + "/in.jsonl", "{\"id\":\"a\",\"text\":\"" + kTextA + "\"}\n");
  const auto b =
      RunCli({"index", "build", "-q", "--method", "chars5", dir + "/in.jsonl", "-o", dir + "/idx"});
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const std::string secret = "root:$6$" + std::string(40, 'S') + ":19000:0:99999:7:::\n";
  WriteFile(dir + "/secret", secret);
  const std::string ids = ReadFile(dir + "/idx.ids");
  const size_t at = ids.find("weights=tf,");
  ASSERT_NE(at, std::string::npos) << ids.substr(0, 300);
  const std::string original = ReadFile(dir + "/idx");
  const struct {
    std::string method_change;  // replaces "weights=tf,"
    std::string message;
  } cases[] = {
      {"weights=tfidf,idf=" + dir + "/secret,", "without its digest"},
      {"weights=tfidf,idf=" + dir + "/secret,idf_digest=0123456789abcdef,", "has changed"},
      {"weights=tfidf,idf=/dev/zero,idf_digest=0123456789abcdef,", "not a regular file"},
      {"weights=improved,marker_words=" + dir + "/secret,", "without its digest"},
  };
  for (const auto& c : cases) {
    std::string hostile = ids;
    hostile.replace(at, std::string("weights=tf,").size(), c.method_change);
    WriteFile(dir + "/h.ids", hostile);
    WriteFile(dir + "/h", original);
    const auto q = RunCli({"index", "query", dir + "/h", dir + "/in.jsonl"});
    EXPECT_NE(q.exit_code, 0) << c.method_change;
    EXPECT_NE(q.err.find(c.message), std::string::npos) << q.err;
    EXPECT_EQ(q.err.find("SSSS"), std::string::npos) << q.err;
  }
  // Named on the command line, the file is read, and its error quotes a
  // short escaped excerpt of it, not the line.
  const auto f =
      RunCli({"fingerprint", "--method", "tfidf", "--idf", dir + "/secret", dir + "/in.jsonl"});
  EXPECT_EQ(f.exit_code, 1) << f.err;
  EXPECT_NE(f.err.find("secret:1: expected 'word idf', got 'root:$6$"), std::string::npos) << f.err;
  EXPECT_EQ(f.err.find(std::string(20, 'S')), std::string::npos) << f.err;
  WriteFile(dir + "/ctl", "a\x1b[2J\\b 1\x01 2\n");
  const auto c =
      RunCli({"fingerprint", "--method", "tfidf", "--idf", dir + "/ctl", dir + "/in.jsonl"});
  EXPECT_NE(c.err.find("got 'a\\x1b[2J\\\\b 1\\x01 2'"), std::string::npos) << c.err;
}

}  // namespace
}  // namespace neardup
