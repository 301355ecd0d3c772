// Copyright 2026 The neardup Authors.
//
// Fuzzes the version 2 index file (doc/index_format.md, "Version 2"), the
// file a DocumentIndex commits and then uses in place from a memory mapping.
// Open checks only the header and the metadata, so a damaged section must
// give wrong answers or errors, never a crash or a read out of the mapping;
// Verify must catch what Open does not.
//
// Four valid fixture files are written once: 64 and 128 bits, exact tables
// and bit-sampling bands. The first input byte picks a fixture (bits 0-1) and
// a mode (bits 2-3):
//   0: the rest of the input is the whole file;
//   1: the fixture with the rest applied as edits (records of a 4-byte offset
//      and a byte XORed there), trailer checksum kept, so Open accepts the
//      file whenever the edits miss the header and metadata; the fixture's
//      ids file goes beside it and DocumentIndex::Open reads the pair too;
//   2: as 1, then the trailer checksum is recomputed, so the fuzzer reaches
//      the metadata's field checks;
//   3: the fixture cut at the length in input bytes 1-4, then as 2.
// Checks beyond "no crash, no sanitizer report": every row a query returns is
// in range, within k and at its true distance; when Verify accepts the file,
// exact tables find exactly the rows a linear scan finds; ids and names read
// back stay within the file.

#include <unistd.h>
#include <xxhash.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "index/index_file_v2.h"
#include "index/mask_tables.h"
#include "neardup/document_index.h"

// Stops the run, naming the broken check (libFuzzer keeps the input).
#define FUZZ_FAIL_IF(cond)                                                                   \
  do {                                                                                       \
    if (cond) {                                                                              \
      std::fprintf(stderr, "index_v2_fuzz: check failed at line %d: %s\n", __LINE__, #cond); \
      std::abort();                                                                          \
    }                                                                                        \
  } while (0)

namespace {

namespace ix = neardup::index_internal;

struct Fixture {
  std::string bytes;      // the index file
  std::string ids_bytes;  // its ids file ("" when written without one)
  std::vector<neardup::Fingerprint> fps;
};

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::vector<neardup::Fingerprint> RandomFingerprints(int bits, int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<neardup::Fingerprint> fps;
  for (int i = 0; i < n; ++i) {
    // Pairs of near copies, so queries have matches at small distances.
    if (i % 2 == 1) {
      neardup::Fingerprint f = fps.back();
      const uint64_t flip = 1ULL << (rng() % 64);
      fps.push_back(bits == 64 ? neardup::Fingerprint::From64(f.lo() ^ flip)
                               : neardup::Fingerprint::From128(f.hi(), f.lo() ^ flip));
    } else {
      fps.push_back(bits == 64 ? neardup::Fingerprint::From64(rng())
                               : neardup::Fingerprint::From128(rng(), rng()));
    }
  }
  return fps;
}

// A DocumentIndex committed as version `version` (2 or 3) with exact tables
// (tables_only: at this size the cost model would pick the scan, which has
// no tables to damage), with its ids file.
Fixture MakeDocumentIndexFixture(int bits, int max_k, uint64_t seed, int version) {
  Fixture f;
  f.fps = RandomFingerprints(bits, 40, seed);
  std::vector<std::string> ids;
  for (size_t i = 0; i < f.fps.size(); ++i) ids.push_back("doc-" + std::to_string(i));
  const std::string path = neardup::fuzz::TempDir() + "/fixture" + std::to_string(seed) + ".idx";
  neardup::DocumentIndexHeader h;
  h.pipeline_json = bits == 64 ? R"({"bits":64})" : R"({"bits":128})";
  h.tables.file_version = version;
  h.tables.tables_only = true;
  neardup::PermutedTableOptions o;
  o.bits = bits;
  o.max_k = max_k;
  o.build_threads = 1;
  auto index = neardup::DocumentIndex::Build(path, h, o, ids, f.fps);
  FUZZ_FAIL_IF(!index.ok() || !(*index)->Commit().ok());
  index->reset();
  f.bytes = ReadAll(path);
  f.ids_bytes = ReadAll(path + ".ids");
  FUZZ_FAIL_IF(ix::IndexFileVersion(f.bytes) != static_cast<uint32_t>(version));
  return f;
}

// A version 2 or 3 file with bit-sampling band tables (chosen for a large
// index, with a directory sized for the few rows written), without an ids
// file.
Fixture MakeBandsFixture(int bits, int max_k, uint64_t seed, uint32_t version) {
  Fixture f;
  f.fps = RandomFingerprints(bits, 40, seed);
  ix::IndexFileV2Meta meta;
  meta.version = version;
  meta.policy.tables_only = true;  // not the scan, which the model picks at 128 bits
  meta.spec = ix::ChooseTables(1000000, bits, max_k, meta.policy);
  FUZZ_FAIL_IF(meta.spec.kind != ix::TablesKind::kBands);
  meta.spec.dir_bits = ix::DirBitsFor(f.fps.size());
  meta.rows = f.fps.size();
  std::vector<uint64_t> ids, lo, hi;
  std::vector<std::string> names;
  for (size_t i = 0; i < f.fps.size(); ++i) {
    ids.push_back(i * 3 + 1);
    lo.push_back(f.fps[i].lo());
    if (bits == 128) hi.push_back(f.fps[i].hi());
    names.push_back("band-" + std::to_string(i));
  }
  std::vector<std::string_view> views(names.begin(), names.end());
  const std::string path = neardup::fuzz::TempDir() + "/bands" + std::to_string(seed) + ".idx";
  uint64_t checksum = 0;
  FUZZ_FAIL_IF(!ix::WriteIndexFileV2(path, meta, {ids, lo, hi, views}, 1, &checksum).ok());
  f.bytes = ReadAll(path);
  return f;
}

const std::vector<Fixture>& Fixtures() {
  static const std::vector<Fixture>* fixtures = new std::vector<Fixture>{
      MakeDocumentIndexFixture(64, 3, 1, 3), MakeDocumentIndexFixture(128, 8, 2, 2),
      MakeBandsFixture(64, 8, 3, 2), MakeBandsFixture(128, 24, 4, 3)};
  return *fixtures;
}

uint64_t Get64(const std::string& s, size_t at) {
  uint64_t v;
  std::memcpy(&v, s.data() + at, 8);
  return v;  // little-endian host (x86-64, aarch64)
}

// Recomputes the trailer checksum over the header and the metadata, when the
// trailer's offsets lie within the file.
void FixChecksum(std::string* s) {
  if (s->size() < 16 + 24) return;
  const size_t end = s->size() - 24;
  const uint64_t m = Get64(*s, end), len = Get64(*s, end + 8);
  if (m > end || len > end - m) return;
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  XXH3_64bits_update(state, s->data(), 16);
  XXH3_64bits_update(state, s->data() + m, len);
  const uint64_t sum = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  std::memcpy(s->data() + end + 16, &sum, 8);
}

int Distance(const ix::TablesView& v, size_t row, uint64_t q_hi, uint64_t q_lo) {
  uint64_t x_hi = 0, x_lo = 0;
  FUZZ_FAIL_IF(!v.RowFingerprint(row, &x_hi, &x_lo));
  return std::popcount(x_lo ^ q_lo) + std::popcount(x_hi ^ q_hi);
}

// oracle: the metadata is the writer's (modes 0 and 1: a checksum the
// fuzzer did not recompute), so Verify accepting the file means its tables
// are the ones written for it.
void CheckFile(const ix::IndexFileV2& file, const std::vector<neardup::Fingerprint>& queries,
               bool oracle) {
  const ix::TablesView& v = file.tables();
  const bool verified = file.Verify().ok();
  // The spans a query reads must lie within what the view claims.
  uint64_t last_hi, last_lo;
  FUZZ_FAIL_IF(v.n > 0 && !v.RowFingerprint(v.n - 1, &last_hi, &last_lo));
  const size_t rows = file.rows() < 4096 ? file.rows() : 4096;
  for (size_t i = 0; i < rows; ++i) {
    const auto name = file.Name(i);
    FUZZ_FAIL_IF(verified && !name);
    if (name) {
      const auto found = file.FindName(*name);
      FUZZ_FAIL_IF(verified && found.empty());
      for (uint32_t r : found) {
        FUZZ_FAIL_IF(r >= file.rows());
      }
    }
    if (i < file.ids().size()) {
      const auto at = file.FindId(file.ids()[i]);
      FUZZ_FAIL_IF(at && *at >= file.rows());
      FUZZ_FAIL_IF(verified && !at);
    }
  }
  const int max_k = file.meta().spec.max_k;
  std::vector<uint32_t> found;
  std::vector<int> dists;
  for (const auto& q : queries) {
    const uint64_t q_hi = v.bits == 128 ? q.hi() : 0;
    for (int k : {0, max_k / 2, max_k}) {
      found.clear();
      dists.clear();
      ix::QueryTables(v, q_hi, q.lo(), k, &found, &dists);
      FUZZ_FAIL_IF(found.size() != dists.size());
      std::vector<bool> seen(v.n, false);
      for (size_t j = 0; j < found.size(); ++j) {
        FUZZ_FAIL_IF(found[j] >= v.n);
        // Each row once, when the tables are intact: a damaged table may
        // list a row twice (a wrong answer, which Verify reports).
        FUZZ_FAIL_IF(verified && seen[found[j]]);
        seen[found[j]] = true;
        FUZZ_FAIL_IF(dists[j] > k || dists[j] != Distance(v, found[j], q_hi, q.lo()));
      }
      // A file that passes Verify with the writer's metadata is the file
      // that was written (edits that leave every checksum intact touch
      // padding only): exact tables then find every row within k, as a
      // linear scan does.
      if (oracle && verified && file.meta().spec.kind == ix::TablesKind::kExact) {
        size_t want = 0;
        for (size_t r = 0; r < v.n; ++r) want += Distance(v, r, q_hi, q.lo()) <= k ? 1 : 0;
        FUZZ_FAIL_IF(want != found.size());
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0 || size > (1 << 16)) return 0;
  const auto& fixtures = Fixtures();
  const Fixture& fixture = fixtures[data[0] & 3];
  const int mode = (data[0] >> 2) & 3;
  std::string bytes;
  size_t pos = 1;
  if (mode == 0) {
    bytes.assign(reinterpret_cast<const char*>(data) + 1, size - 1);
  } else {
    bytes = fixture.bytes;
    if (mode == 3) {
      if (size < 5) return 0;
      uint32_t cut;
      std::memcpy(&cut, data + 1, 4);
      bytes.resize(cut % (bytes.size() + 1));
      pos = 5;
    }
    for (; pos + 5 <= size && !bytes.empty(); pos += 5) {
      uint32_t at;
      std::memcpy(&at, data + pos, 4);
      bytes[at % bytes.size()] ^= static_cast<char>(data[pos + 4]);
    }
    if (mode >= 2) FixChecksum(&bytes);
  }
  const std::string path = neardup::fuzz::WriteTemp("input.idx", bytes);
  auto mapped = ix::MappedFile::Open(path);
  if (!mapped.ok()) return 0;
  auto file = ix::IndexFileV2::Open(*mapped, "fuzz-input");
  if (file.ok()) {
    std::vector<neardup::Fingerprint> queries(fixture.fps.begin(), fixture.fps.begin() + 4);
    queries.push_back((*file)->meta().spec.bits == 128 ? neardup::Fingerprint::From128(0, 0)
                                                       : neardup::Fingerprint::From64(0));
    // A query must have the file's width, whatever the fixture's was.
    for (auto& q : queries) {
      if ((*file)->tables().bits == 64) q = neardup::Fingerprint::From64(q.lo());
    }
    CheckFile(**file, queries, mode <= 1);
  } else if (file.status().message().empty()) {
    __builtin_trap();
  }
  // The pair through the public API: the fixture's ids file names the
  // trailer checksum, which mode 1 keeps.
  if (mode == 1 && !fixture.ids_bytes.empty()) {
    neardup::fuzz::WriteTemp("input.idx.ids", fixture.ids_bytes);
    auto index = neardup::DocumentIndex::Open(path);
    if (index.ok()) {
      std::vector<neardup::DocumentMatch> matches;
      for (size_t i = 0; i < 4; ++i) {
        const neardup::Fingerprint& q = fixture.fps[i];
        const neardup::Status s = (*index)->Query(q, (*index)->max_k(), &matches);
        if (!s.ok()) continue;
        for (const auto& m : matches) {
          FUZZ_FAIL_IF(m.distance < 0 || m.distance > (*index)->max_k());
        }
      }
      (void)(*index)->Stats();
      (void)(*index)->Verify();
    } else if (index.status().message().empty()) {
      __builtin_trap();
    }
  }
  return 0;
}
