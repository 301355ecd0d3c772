// Copyright 2026 The neardup Authors.
//
// Every error a user meets says what, where and why (issue 25): a table of
// bad invocations (bad option values, unreadable files, bad index files,
// bad records), each with its exit status and what its message must name:
// the option and value, the file (and line, for a record), and the reason,
// e.g. why -k is out of range ("because the method's fingerprints are
// 64-bit"), not only that it is.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/testing/test_util.h"

namespace neardup {
namespace {

using ::neardup::testing::MakeTempDir;
using ::neardup::testing::RunCli;
using ::neardup::testing::WriteFile;

struct BadRun {
  std::vector<std::string> args;  // "@" is replaced by the test's directory
  int exit_code;
  std::vector<std::string> says;  // each must be in stderr ("@" as above)
  std::string stdin_data;
};

std::string At(std::string s, const std::string& dir) {
  for (size_t at = 0; (at = s.find('@', at)) != std::string::npos; at += dir.size()) {
    s.replace(at, 1, dir);
  }
  return s;
}

TEST(MessagesCliTest, EveryBadInvocationSaysWhatWhereAndWhy) {
  const std::string dir = MakeTempDir("cli_messages");
  WriteFile(dir + "/a.jsonl",
            "{\"id\": \"a\", \"text\": \"网页去重是搜索引擎的基础工作之一\"}\n"
            "{\"id\": \"b\", \"text\": \"近似重复的网页会浪费存储和带宽\"}\n");
  WriteFile(dir + "/body.jsonl", "{\"id\": \"a\", \"meta\": 1, \"body\": \"text\"}\n");
  WriteFile(dir + "/broken.jsonl", "{\"id\": \"a\", \"text\": \"one\"}\n{\"id\": \"b\", \"te\n");
  WriteFile(dir + "/bad.idx", "not an index\n");
  WriteFile(dir + "/bad.idx.ids", "not an ids file either\n");
  const auto built = RunCli({"index", "build", "-q", dir + "/a.jsonl", "-o", dir + "/good.idx"});
  ASSERT_EQ(built.exit_code, 0) << built.err;

  const std::vector<BadRun> table = {
      // -k and --max-k: the range and why (the method's width).
      {{"dedup", "-k", "40", "@/a.jsonl"},
       2,
       {"-k 40 is out of range", "between 0 and 32", "fingerprints are 128-bit"}},
      {{"dedup", "--bits", "64", "-k", "20", "@/a.jsonl"},
       2,
       {"-k 20 is out of range", "between 0 and 16",
        "because the method's fingerprints are "
        "64-bit",
        "use a 128-bit method"}},
      {{"dedup", "--method", "minhash", "-k", "3", "@/a.jsonl"},
       2,
       {"-k does not apply to the minhash method", "threshold"}},
      {{"index", "build", "--bits", "64", "--max-k", "20", "@/a.jsonl", "-o", "@/x.idx"},
       2,
       {"--max-k 20 is out of range", "between 0 and 16", "64-bit"}},
      {{"index", "query", "-k", "30", "@/good.idx", "@/a.jsonl"},
       2,
       {"-k 30 is larger than the index's max k", "built for", "--max-k 30"}},
      {{"calibrate", "--method", "minhash", "-k", "500", "@/a.jsonl"},
       2,
       {"-k 500 is out of range",
        "because the minhash method's distance counts the unequal "
        "components"}},
      // Option words: the word given and the words expected.
      {{"dedup", "--mode", "bogus", "@/a.jsonl"}, 2, {"'bogus'", "cluster or stream"}},
      {{"dedup", "--keep", "field:", "@/a.jsonl"}, 2, {"'field:'", "field:NAME"}},
      {{"dedup", "--method", "nosuch", "@/a.jsonl"}, 2, {"unknown method 'nosuch'", "chars5"}},
      {{"dedup", "--normalize", "bogus", "@/a.jsonl"}, 2, {"'bogus'", "nfkc"}},
      {{"dedup", "--recall", "2", "@/a.jsonl"}, 2, {"--recall", "between 0 and 1"}},
      // Files: which one, and why it cannot be used.
      {{"dedup", "@/nosuch.jsonl"}, 1, {"@/nosuch.jsonl", "No such file or directory"}},
      {{"dedup", "@/a.jsonl", "-o", "@/no/dir/out.jsonl"},
       1,
       {"@/no/dir/out.jsonl", "No such file or directory"}},
      {{"index", "query", "@/nosuch.idx", "@/a.jsonl"}, 1, {"@/nosuch.idx", "no such index"}},
      {{"index", "stats", "@/bad.idx"}, 1, {"@/bad.idx"}},
      {{"index", "build", "@/a.jsonl"}, 2, {"index build needs -o IDX", "two files"}},
      // Records: the file, the line and the reason; a run that read nothing
      // says which fields the records have.
      {{"dedup", "@/body.jsonl"}, 1, {"@/body.jsonl:1", "no \"text\" field", "body", "meta"}},
      {{"dedup", "--strict", "@/broken.jsonl"}, 3, {"@/broken.jsonl:2"}},
      {{"dedup", "--keep", "field:nosuch", "@/a.jsonl"},
       2,
       {"field:nosuch", "none of the 2 documents has a field \"nosuch\"", "text"}},
  };
  for (const BadRun& run : table) {
    std::vector<std::string> args;
    std::string line = "neardup";
    for (const std::string& a : run.args) {
      args.push_back(At(a, dir));
      line += " " + a;
    }
    const auto r = RunCli(args, run.stdin_data);
    EXPECT_EQ(r.exit_code, run.exit_code) << line << "\n" << r.err;
    for (const std::string& want : run.says) {
      EXPECT_NE(r.err.find(At(want, dir)), std::string::npos)
          << line << "\nmust say: " << want << "\nsaid: " << r.err;
    }
  }
}

}  // namespace
}  // namespace neardup
