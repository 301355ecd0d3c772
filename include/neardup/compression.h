// Copyright 2026 The neardup Authors.
//
// How an input file is recognized as compressed by its first bytes, whatever
// its name: the one detector of DocumentReader (which decompresses it) and
// of neardup-mpi's input splitting (a compressed file is not split at line
// starts).
//
// Thread safety: a pure function.

#ifndef NEARDUP_COMPRESSION_H_
#define NEARDUP_COMPRESSION_H_

#include <string_view>

namespace neardup {

// "gzip" (1F 8B), "zstd" (28 B5 2F FD), "xz" (FD 37 7A 58 5A 00), "bzip2"
// ("BZh" and a digit 1-9), or "" when `head`, a file's first bytes (6 or
// more when the file has them), starts with none of these.
std::string_view DetectCompression(std::string_view head);

}  // namespace neardup

#endif  // NEARDUP_COMPRESSION_H_
