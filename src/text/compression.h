// Copyright 2026 The neardup Authors.
//
// How input files are recognized as compressed, or as archives, by their
// first bytes, whatever their names. The one detector of DocumentReader
// (input_file.cc, reader.cc) and of neardup-mpi's input splitting (a
// compressed file is not split).

#ifndef NEARDUP_SRC_TEXT_COMPRESSION_H_
#define NEARDUP_SRC_TEXT_COMPRESSION_H_

#include <string>
#include <string_view>

namespace neardup {

// "gzip" (1F 8B), "zstd" (28 B5 2F FD), "xz" (FD 37 7A 58 5A 00), "bzip2"
// ("BZh" and a digit 1-9), or "" when `head`, a file's first bytes (6 or
// more when the file has them), starts with none of these.
std::string_view DetectCompression(std::string_view head);

// The magic bytes of an xz stream.
inline constexpr std::string_view kXzMagic{
    "\xFD"
    "7zXZ\0",
    6};

// The archive formats a reader refuses (it reads no archive's members), by
// their magic bytes: "zip", "7z", "tar" (ustar at byte 257), or "" for
// anything else.
std::string_view ArchiveName(std::string_view head);

// Why an archive is refused. `codec`: the compression around it ("gzip"),
// or "".
std::string ArchiveReason(std::string_view archive, std::string_view codec = "");

}  // namespace neardup

#endif  // NEARDUP_SRC_TEXT_COMPRESSION_H_
