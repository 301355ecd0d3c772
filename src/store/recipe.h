// Copyright 2026 The neardup Authors.
//
// A file's recipe in the store (doc/store_format.md): the list of chunk
// ranges that reassemble it, each entry three LEB128 varints (chunk id,
// offset, length). A recipe read from a store is hostile input: DecodeRecipe
// checks every varint and id.

#ifndef NEARDUP_STORE_RECIPE_H_
#define NEARDUP_STORE_RECIPE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace neardup::store_internal {

// Bytes [offset, offset + length) of chunk `chunk_id` (ids are >= 1).
struct RecipeEntry {
  int64_t chunk_id = 0;
  uint64_t offset = 0;
  uint64_t length = 0;
};

// Appends `v` as an unsigned LEB128 varint (1 to 10 bytes).
void PutVarint(uint64_t v, std::string* out);
// Reads one varint from the front of *in and advances it. False (with *in
// advanced by an unspecified amount) when *in ends first or the value
// exceeds 64 bits.
bool GetVarint(std::string_view* in, uint64_t* v);

std::string EncodeRecipe(const std::vector<RecipeEntry>& entries);
// Replaces *entries with the decoded recipe. False on a truncated or
// overlong varint or a chunk id of 0 or above INT64_MAX.
bool DecodeRecipe(std::string_view in, std::vector<RecipeEntry>* entries);

}  // namespace neardup::store_internal

#endif  // NEARDUP_STORE_RECIPE_H_
