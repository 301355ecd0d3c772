// Copyright 2026 The neardup Authors.
//
// neardup-mpi's work directory (work_dir.h).

#include "work_dir.h"

#include <xxhash.h>

#include <cstdio>
#include <functional>

#include "mpi_comm.h"
#include "shard.h"

namespace neardup::mpi {

std::string ShardPath(const std::string& dir, const Unit& unit) {
  char name[64];
  if (unit.pieces == 1) {
    std::snprintf(name, sizeof name, "/shards/input-%06llu.shard",
                  static_cast<unsigned long long>(unit.input));
  } else {
    // The same input cut into as many pieces has the same byte ranges (the
    // cut depends on its size, the count and its bytes): a --resume at
    // another P reuses a piece only then.
    std::snprintf(name, sizeof name, "/shards/input-%06llu-piece-%04llu-of-%04llu.shard",
                  static_cast<unsigned long long>(unit.input),
                  static_cast<unsigned long long>(unit.piece),
                  static_cast<unsigned long long>(unit.pieces));
  }
  return dir + name;
}

std::string RangePath(const std::string& dir, size_t range, size_t ranges) {
  char name[64];
  std::snprintf(name, sizeof name, "/join/range-%04zu-of-%04zu.pairs", range, ranges);
  return dir + name;
}

Status WriteMarker(const std::string& dir, const std::string& stage) {
  return WriteFileAtomically(dir + "/" + stage + ".done", stage);
}

Result<std::vector<std::string>> Strings(std::string_view bytes) {
  std::vector<std::string> out;
  if (!ReadStrings(bytes, &out)) return Status::Corruption("malformed string exchange");
  return out;
}

std::string PartPath(const std::string& dir, int rank, const char* what) {
  char name[64];
  std::snprintf(name, sizeof name, "/parts/rank-%04d.%s", rank, what);
  return dir + name;
}

Result<std::string> PartsDigest(const std::vector<std::string>& paths) {
  std::string digest;
  std::string buffer(1u << 20, '\0');
  for (const std::string& path : paths) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) return Status::NotFound(path + ": no such part");
    XXH3_state_t* state = XXH3_createState();
    XXH3_64bits_reset(state);
    uint64_t size = 0;
    size_t n = 0;
    while ((n = std::fread(buffer.data(), 1, buffer.size(), f)) > 0) {
      XXH3_64bits_update(state, buffer.data(), n);
      size += n;
    }
    const bool failed = std::ferror(f) != 0;
    std::fclose(f);
    const uint64_t words[2] = {size, XXH3_64bits_digest(state)};
    XXH3_freeState(state);
    if (failed) return Status::IOError(path + ": read error");
    AppendPod(words, &digest);
  }
  return digest;
}

namespace {

// Reads the file at `path` in 1 MiB pieces into `write`.
Status ReadPieces(const std::string& path, const std::function<bool(std::string_view)>& write) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return Status::IOError(path + ": cannot open a part of the output");
  std::string buffer(1u << 20, '\0');
  size_t n = 0;
  bool written = true;
  while (written && (n = std::fread(buffer.data(), 1, buffer.size(), f)) > 0) {
    written = write(std::string_view(buffer.data(), n));
  }
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) return Status::IOError(path + ": read error");
  if (!written) return Status::IOError(std::string("write error: ") + std::strerror(errno));
  return Status::OK();
}

}  // namespace

Status CopyInto(const std::string& path, cli::Output* out) {
  return ReadPieces(path, [out](std::string_view piece) {
    out->Write(piece);  // its error is Close's
    return true;
  });
}

Status CopyInto(const std::string& path, std::FILE* out, const std::string& name) {
  const Status s = ReadPieces(path, [out](std::string_view piece) {
    return std::fwrite(piece.data(), 1, piece.size(), out) == piece.size();
  });
  if (!s.ok() && s.message().starts_with("write error")) {
    return Status::IOError("cannot write " + name + ": " + s.message());
  }
  return s;
}

}  // namespace neardup::mpi
