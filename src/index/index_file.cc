// Copyright 2026 The neardup Authors.

#include "index/index_file.h"

#include <xxhash.h>

#include <cstring>
#include <limits>

#include "util/file.h"

namespace neardup::index_internal {
namespace {

void PutU32(std::string* s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void PutU64(std::string* s, uint64_t v) {
  for (int i = 0; i < 8; ++i) s->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
uint32_t GetU32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}
uint64_t GetU64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

Status Bad(std::string_view name, const std::string& why) {
  return Status::Corruption(std::string(name) + ": " + why);
}

}  // namespace

Status WriteIndexFileContents(const std::string& path, const IndexFileHeader& header,
                              const std::vector<IndexEntry>& entries, uint64_t* checksum) {
  NEARDUP_ASSIGN_OR_RETURN(auto out, file::WritableFile::Create(path));
  XXH3_state_t* state = XXH3_createState();
  if (state == nullptr) return Status::ResourceExhausted("XXH3_createState failed");
  XXH3_64bits_reset(state);

  std::string buf;
  buf.append(kIndexMagic, sizeof(kIndexMagic));
  PutU32(&buf, kIndexVersion);
  PutU32(&buf, static_cast<uint32_t>(header.type));
  PutU32(&buf, static_cast<uint32_t>(header.bits));
  PutU32(&buf, static_cast<uint32_t>(header.max_k));
  PutU32(&buf, static_cast<uint32_t>(header.blocks));
  PutU32(&buf, 0);  // flags, reserved
  PutU64(&buf, entries.size());
  constexpr size_t kChunk = 1 << 20;
  Status status;
  auto flush = [&]() {
    XXH3_64bits_update(state, buf.data(), buf.size());
    if (status.ok()) status = out->Append(buf);
    buf.clear();
  };
  for (const IndexEntry& e : entries) {
    PutU64(&buf, e.id);
    PutU64(&buf, e.fingerprint.lo());
    if (header.bits == 128) PutU64(&buf, e.fingerprint.hi());
    if (buf.size() >= kChunk) flush();
  }
  flush();
  const uint64_t digest = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  PutU64(&buf, digest);
  if (status.ok()) status = out->Append(buf);
  if (status.ok()) status = out->Sync();
  if (status.ok()) status = out->Close();
  if (!status.ok()) {
    out.reset();
    (void)file::RemoveFile(path);
    return status;
  }
  if (checksum != nullptr) *checksum = digest;
  return Status::OK();
}

Status WriteIndexFile(const std::string& path, const IndexFileHeader& header,
                      const std::vector<IndexEntry>& entries) {
  const std::string tmp = path + ".tmp";
  NEARDUP_RETURN_IF_ERROR(WriteIndexFileContents(tmp, header, entries, nullptr));
  Status s = file::RenameFile(tmp, path);
  if (!s.ok()) {
    (void)file::RemoveFile(tmp);
    return s;
  }
  return file::SyncParentDir(path);
}

uint64_t StoredChecksum(std::string_view bytes) {
  if (bytes.size() < kIndexFooterSize) return 0;
  return GetU64(bytes.data() + bytes.size() - kIndexFooterSize);
}

Result<IndexFileContents> ParseIndexFile(std::string_view bytes, std::string_view name) {
  if (bytes.size() < sizeof(kIndexMagic) ||
      std::memcmp(bytes.data(), kIndexMagic, sizeof(kIndexMagic)) != 0) {
    return Bad(name, "not a neardup index file (bad magic)");
  }
  if (bytes.size() < kIndexHeaderSize + kIndexFooterSize) {
    return Bad(name, "truncated: " + std::to_string(bytes.size()) + " bytes, header needs " +
                         std::to_string(kIndexHeaderSize + kIndexFooterSize));
  }
  const char* p = bytes.data();
  const uint32_t version = GetU32(p + 8);
  if (version != kIndexVersion) {
    return Status::NotSupported(std::string(name) + ": unsupported index file version " +
                                std::to_string(version) + " (this build reads version " +
                                std::to_string(kIndexVersion) + ")");
  }
  const uint32_t type = GetU32(p + 12);
  const uint32_t bits = GetU32(p + 16);
  const uint32_t max_k = GetU32(p + 20);
  const uint32_t blocks = GetU32(p + 24);
  const uint32_t flags = GetU32(p + 28);
  const uint64_t count = GetU64(p + 32);
  if (bits != 64 && bits != 128) {
    // Checked before the size so that the entry width is known; a flipped bit
    // here reads as corruption, which it is.
    return Bad(name, "fingerprint width " + std::to_string(bits) + " is neither 64 nor 128");
  }
  const uint64_t entry_size = bits == 64 ? 16 : 24;
  const uint64_t payload = bytes.size() - kIndexHeaderSize - kIndexFooterSize;
  if (count > payload / entry_size || count * entry_size != payload) {
    return Bad(name, "size mismatch: header says " + std::to_string(count) + " entries (" +
                         std::to_string(kIndexHeaderSize + kIndexFooterSize) + " + " +
                         std::to_string(entry_size) + " bytes each) but the file has " +
                         std::to_string(bytes.size()) + " bytes (truncated or corrupt)");
  }
  const uint64_t stored = GetU64(p + bytes.size() - kIndexFooterSize);
  const uint64_t actual = XXH3_64bits(p, bytes.size() - kIndexFooterSize);
  if (stored != actual) return Bad(name, "checksum mismatch (corrupt file)");
  if (flags != 0) return Bad(name, "reserved flags are not zero");
  if (count > std::numeric_limits<uint32_t>::max() - 2) {
    return Bad(name, "too many entries: " + std::to_string(count));
  }

  IndexFileContents c;
  c.header.bits = static_cast<int>(bits);
  if (type == static_cast<uint32_t>(IndexType::kLinearScan)) {
    c.header.type = IndexType::kLinearScan;
    if (max_k != bits || blocks != 0) {
      return Bad(name, "linear-scan header with max_k " + std::to_string(max_k) + ", blocks " +
                           std::to_string(blocks));
    }
  } else if (type == static_cast<uint32_t>(IndexType::kPermutedTable)) {
    c.header.type = IndexType::kPermutedTable;
    if (max_k > bits / 4) return Bad(name, "max_k " + std::to_string(max_k) + " out of range");
    if (blocks <= max_k || blocks > bits) {
      return Bad(name, "block count " + std::to_string(blocks) + " out of range");
    }
  } else {
    return Status::NotSupported(std::string(name) + ": unknown index type " + std::to_string(type));
  }
  c.header.max_k = static_cast<int>(max_k);
  c.header.blocks = static_cast<int>(blocks);

  c.ids.resize(count);
  c.fps.resize(count);
  const char* e = p + kIndexHeaderSize;
  for (uint64_t i = 0; i < count; ++i, e += entry_size) {
    c.ids[i] = GetU64(e);
    const uint64_t lo = GetU64(e + 8);
    c.fps[i] = bits == 64 ? Fingerprint::From64(lo) : Fingerprint::From128(GetU64(e + 16), lo);
  }
  return c;
}

}  // namespace neardup::index_internal
