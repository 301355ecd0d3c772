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

#include "neardup/compression.h"

namespace neardup {

// DetectCompression: neardup/compression.h (public: neardup-mpi splits inputs
// by it).

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
