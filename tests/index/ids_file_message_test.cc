// Copyright 2026 The neardup Authors.
//
// The error for an index whose ids file is missing says why it cannot be
// opened (the OS's reason), not only that it cannot.

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "neardup/document_index.h"
#include "tests/testing/test_util.h"

namespace neardup {
namespace {

TEST(IdsFileMessageTest, MissingIdsFileGivesTheReason) {
  const std::string dir = testing::MakeTempDir("ids_file_message");
  const std::string path = dir + "/i.idx";
  DocumentIndexHeader h;
  h.pipeline_json = R"({"method":"tfidf","bits":64,"topk":20,"t2s":false})";
  PermutedTableOptions o;
  o.bits = 64;
  o.max_k = 3;
  o.build_threads = 1;
  const std::vector<std::string> ids = {"a", "b"};
  const std::vector<Fingerprint> fps = {Fingerprint::From64(1), Fingerprint::From64(2)};
  {
    auto index = DocumentIndex::Build(path, h, o, ids, fps);
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    ASSERT_TRUE((*index)->Commit().ok());
  }
  ASSERT_TRUE(std::filesystem::remove(path + ".ids"));
  auto r = DocumentIndex::Open(path);
  ASSERT_FALSE(r.ok());
  const std::string m = r.status().message();
  EXPECT_TRUE(r.status().IsNotFound()) << m;
  EXPECT_NE(m.find(path + ".ids: cannot open the ids file beside the index: no such file"),
            std::string::npos)
      << m;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace neardup
