// Copyright 2026 The neardup Authors.
//
// neardup store ...: exit codes, outputs and bad input, end to end.

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <zip.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/testing/test_util.h"

namespace neardup {
namespace {

using testing::RunCli;

std::string MakeDocxFile(const std::string& dir, const std::string& paragraphs_xml) {
  const std::string path = dir + "/doc.docx";
  const std::string xml =
      "<w:document xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\">"
      "<w:body>" +
      paragraphs_xml + "</w:body></w:document>";
  int error = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
  EXPECT_NE(z, nullptr);
  zip_source_t* src = zip_source_buffer(z, xml.data(), xml.size(), 0);
  zip_file_add(z, "word/document.xml", src, 0);
  EXPECT_EQ(zip_close(z), 0);
  return path;
}

// `store add` of /dev/zero or a FIFO is refused at once ("not a regular
// file"), the good file beside it is stored. Run under a 1 GiB address-space
// limit and a 60 s timeout: the old reader read /dev/zero without end and
// waited on the FIFO for a writer.
TEST(StoreCliTest, DevicesAndFifosAreRefusedNotRead) {
  if (testing::Sanitized()) GTEST_SKIP() << "address-space limits and sanitizers do not mix";
  const std::string dir = testing::MakeTempDir("cli_store_devices");
  const std::string fifo = dir + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  testing::WriteFile(dir + "/good.txt", "一份正常的文本");
  const std::string cmd = "ulimit -v 1048576; timeout 60 '" + std::string(NEARDUP_CLI_PATH) +
                          "' store add --store '" + dir + "/s.db' /dev/zero '" + fifo + "' '" +
                          dir + "/good.txt' > '" + dir + "/out' 2> '" + dir + "/err' < /dev/null";
  const int status = std::system(("/bin/sh -c \"" + cmd + "\"").c_str());
  ASSERT_TRUE(WIFEXITED(status));
  const int code = WEXITSTATUS(status);
  const std::string err = testing::ReadFile(dir + "/err");
  EXPECT_NE(code, 124) << "timed out\n" << err;
  EXPECT_NE(code, 0) << err;
  EXPECT_NE(err.find("/dev/zero: not a regular file"), std::string::npos) << err;
  EXPECT_NE(err.find("fifo: not a regular file"), std::string::npos) << err;
  const auto r = RunCli({"store", "ls", "--store", dir + "/s.db"});
  EXPECT_NE(r.out.find("good.txt"), std::string::npos) << r.out << r.err;
}

TEST(StoreCliTest, LsEscapesControlCharactersInNames) {
  const std::string dir = testing::MakeTempDir("cli_store_names");
  const std::string store = dir + "/s.db";
  // One file whose name holds a newline, a tab and a backslash: `ls` must show
  // one line for it, not two names.
  const std::string odd = dir + "/two\nlines\tand\\slash.txt";
  testing::WriteFile(odd, "内容。");
  auto r = RunCli({"store", "add", "--store", store, odd});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = RunCli({"store", "ls", "--store", store});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, dir + "/two\\nlines\\tand\\\\slash.txt\n");
  r = RunCli({"store", "get", "--store", store, odd});
  EXPECT_EQ(r.out, "内容。");
  std::filesystem::remove_all(dir);
}

TEST(StoreCliTest, AddGetLsStatsVerifyRm) {
  const std::string dir = testing::MakeTempDir("cli_store");
  const std::string store = dir + "/s.db";
  const std::string a = dir + "/a.txt", b = dir + "/b.txt";
  testing::WriteFile(a, "第一段。第二句！\r\n第三段没有换行");
  testing::WriteFile(b, std::string("bytes \xff\xfe\n", 9));
  const std::string docx =
      MakeDocxFile(dir,
                   "<w:p><w:r><w:t>文档第一段。</w:t></w:r></w:p><w:p><w:r><w:t>二</w:t>"
                   "</w:r></w:p>");

  auto r = RunCli({"store", "add", "--store", store, a, b, docx});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("added " + docx), std::string::npos);

  r = RunCli({"store", "get", "--store", store, a});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, testing::ReadFile(a));
  r = RunCli({"store", "get", "--store", store, b, "-o", dir + "/b.out"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(testing::ReadFile(dir + "/b.out"), testing::ReadFile(b));
  // docx: the store keeps and returns the extracted text.
  r = RunCli({"store", "get", "--store", store, docx});
  EXPECT_EQ(r.out, "文档第一段。\n二\n");

  r = RunCli({"store", "ls", "--store", store});
  EXPECT_EQ(r.out, a + "\n" + b + "\n" + docx + "\n");

  r = RunCli({"store", "stats", "--store", store, "--json"});
  ASSERT_EQ(r.exit_code, 0);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["files"], 3);
  EXPECT_EQ(j["bytes_in"].get<uint64_t>(),
            testing::ReadFile(a).size() + 9 + std::string("文档第一段。\n二\n").size());
  for (const char* key : {"bytes_out", "dedup_rate", "db_bytes"}) EXPECT_TRUE(j.contains(key));
  EXPECT_GT(j["db_bytes"].get<uint64_t>(), 0u);

  r = RunCli({"store", "verify", "--store", store});
  EXPECT_EQ(r.exit_code, 0) << r.err;

  r = RunCli({"store", "rm", "--store", store, b, dir + "/nope"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("nope"), std::string::npos);
  r = RunCli({"store", "ls", "--store", store});
  EXPECT_EQ(r.out, a + "\n" + docx + "\n");
}

TEST(StoreCliTest, ErrorsNameTheFileAndReason) {
  const std::string dir = testing::MakeTempDir("cli_store_err");
  const std::string store = dir + "/s.db";
  const std::string good = dir + "/good.txt";
  testing::WriteFile(good, "好。\n");
  const std::string bad_docx = dir + "/bad.docx";
  testing::WriteFile(bad_docx, "PK\x03\x04 this is not really a zip archive at all");
  const std::string scan = dir + "/scan.pdf";
  testing::WriteFile(scan, "%PDF-1.4\n% nothing else\n");
  auto r = RunCli({"store", "add", "--store", store, good, bad_docx, dir + "/missing.txt", scan});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(bad_docx), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ZIP"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(dir + "/missing.txt"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(scan), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("added " + good), std::string::npos);

  r = RunCli({"store", "add", "--store", store, "--chunker", "rabin:9", good});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown chunker"), std::string::npos);

  r = RunCli({"store", "get", "--store", dir + "/none.db", "x"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("none.db"), std::string::npos);

  for (const char* sub : {"add", "get", "ls", "rm", "stats", "verify"}) {
    r = RunCli({"store", sub, "--help"});
    EXPECT_EQ(r.exit_code, 0) << sub;
    EXPECT_NE(r.out.find("--store"), std::string::npos) << sub;
  }
}

TEST(StoreCliTest, VerifyFailsOnADamagedStore) {
  const std::string dir = testing::MakeTempDir("cli_store_bad");
  const std::string store = dir + "/s.db";
  const std::string a = dir + "/a.txt", b = dir + "/b.txt";
  testing::WriteFile(a, "甲。乙。\n");
  testing::WriteFile(b, "丙。丁。\n");
  ASSERT_EQ(RunCli({"store", "add", "--store", store, "--no-compress", a, b}).exit_code, 0);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(store.c_str(), &db), SQLITE_OK);
  // Flip the chunk that holds a.txt's paragraph to other bytes of equal length.
  ASSERT_EQ(sqlite3_exec(db,
                         "UPDATE chunks SET data = X'E794B2E38082E4B999E38082' || X'0B' "
                         "WHERE id = 1",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  auto r = RunCli({"store", "verify", "--store", store});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("BAD " + a), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("BAD " + b), std::string::npos) << r.err;
  r = RunCli({"store", "get", "--store", store, a});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("SHA-256 mismatch"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace neardup
