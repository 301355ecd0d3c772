// Copyright 2026 The neardup Authors.

#include "store/recipe.h"

#include <limits>

namespace neardup::store_internal {

void PutVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

bool GetVarint(std::string_view* in, uint64_t* v) {
  uint64_t result = 0;
  for (int shift = 0; shift <= 63 && !in->empty(); shift += 7) {
    const auto byte = static_cast<unsigned char>(in->front());
    in->remove_prefix(1);
    if (shift == 63 && byte > 1) return false;
    result |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *v = result;
      return true;
    }
  }
  return false;
}

std::string EncodeRecipe(const std::vector<RecipeEntry>& entries) {
  std::string out;
  out.reserve(entries.size() * 6);
  for (const RecipeEntry& e : entries) {
    PutVarint(static_cast<uint64_t>(e.chunk_id), &out);
    PutVarint(e.offset, &out);
    PutVarint(e.length, &out);
  }
  return out;
}

bool DecodeRecipe(std::string_view in, std::vector<RecipeEntry>* entries) {
  entries->clear();
  while (!in.empty()) {
    uint64_t id = 0;
    RecipeEntry e;
    if (!GetVarint(&in, &id) || !GetVarint(&in, &e.offset) || !GetVarint(&in, &e.length)) {
      return false;
    }
    if (id == 0 || id > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
    e.chunk_id = static_cast<int64_t>(id);
    entries->push_back(e);
  }
  return true;
}

}  // namespace neardup::store_internal
