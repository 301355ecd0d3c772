// Copyright 2026 The neardup Authors.
//
// Internal: the library's file operations are the public neardup/file.h
// (neardup-mpi uses them too); this header is kept for the library's
// sources, which include it by its old name.

#ifndef NEARDUP_UTIL_FILE_H_
#define NEARDUP_UTIL_FILE_H_

#include "neardup/file.h"

#endif  // NEARDUP_UTIL_FILE_H_
