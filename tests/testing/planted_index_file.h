// Writes planted rows (hamming_oracle.h) as an index file of version 2 or 3
// with the tables of `spec`, and opens it: the filter and probe index tests'
// one way to get an index file. Failures are test failures.
#ifndef NEARDUP_TESTS_TESTING_PLANTED_INDEX_FILE_H_
#define NEARDUP_TESTS_TESTING_PLANTED_INDEX_FILE_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "index/index_file_v2.h"
#include "index/mask_tables.h"
#include "tests/testing/hamming_oracle.h"

namespace neardup::testing {

inline std::shared_ptr<const index_internal::IndexFileV2> WritePlantedIndexFile(
    const PlantedRows& d, const index_internal::TablesSpec& spec, const std::string& path,
    uint32_t version = index_internal::IndexFileV2Meta{}.version) {
  index_internal::IndexFileV2Meta meta;
  meta.version = version;
  meta.spec = spec;
  meta.rows = d.ids.size();
  std::vector<std::string_view> views(d.names.begin(), d.names.end());
  uint64_t checksum = 0;
  const Status written = index_internal::WriteIndexFileV2(
      path, meta, index_internal::IndexFileV2Rows{d.ids, d.lo, d.hi, views}, 1, &checksum);
  EXPECT_TRUE(written.ok()) << written.ToString();
  auto mapped = index_internal::MappedFile::Open(path);
  EXPECT_TRUE(mapped.ok()) << mapped.status().ToString();
  auto file = index_internal::IndexFileV2::Open(*mapped, path);
  EXPECT_TRUE(file.ok()) << file.status().ToString();
  return std::shared_ptr<const index_internal::IndexFileV2>(std::move(*file));
}

}  // namespace neardup::testing

#endif  // NEARDUP_TESTS_TESTING_PLANTED_INDEX_FILE_H_
