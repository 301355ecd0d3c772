// Copyright 2026 The neardup Authors.

#include "text/t2s_converter.h"

#include <unicode/utf8.h>

#include <algorithm>
#include <exception>
#include <functional>
#include <opencc/Config.hpp>
#include <opencc/Conversion.hpp>
#include <opencc/ConversionChain.hpp>
#include <opencc/Converter.hpp>
#include <opencc/Dict.hpp>
#include <opencc/DictEntry.hpp>
#include <opencc/DictGroup.hpp>
#include <opencc/Lexicon.hpp>
#include <opencc/MaxMatchSegmentation.hpp>
#include <unordered_map>
#include <utility>
#include <vector>

namespace neardup::text {
namespace {

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
};

// One OpenCC dictionary (a leaf of a group): its keys with their default
// values, and per first code point the byte lengths of the keys that start
// with it, longest first.
struct Table {
  std::unordered_map<std::string, std::string, StringHash, std::equal_to<>> values;
  std::unordered_map<UChar32, std::vector<size_t>> lengths;
};

// A dictionary as OpenCC matches it: the tables of a group in order; the
// first table with a key that is a prefix of the text gives its longest one.
struct Group {
  std::vector<size_t> tables;
  uint32_t mask = 0;  // bit k: tables[...] holds table k
};

// The first code point of s (valid UTF-8: *length its bytes) or -1.
UChar32 First(std::string_view s, int32_t* length) {
  int32_t i = 0;
  UChar32 c;
  U8_NEXT(s.data(), i, static_cast<int32_t>(s.size()), c);
  *length = i;
  return c;
}

class FastConverter final : public T2sConverter {
 public:
  // Up to 32 tables (a bit each in starts_).
  static constexpr size_t kMaxTables = 32;

  explicit FastConverter(opencc::ConverterPtr opencc) : opencc_(std::move(opencc)) {}

  // False when the configuration has a shape this class does not reproduce.
  bool Build() {
    auto segmentation =
        std::dynamic_pointer_cast<opencc::MaxMatchSegmentation>(opencc_->GetSegmentation());
    if (segmentation == nullptr) return false;
    if (!AddGroup(segmentation->GetDict(), &segmentation_)) return false;
    for (const opencc::ConversionPtr& conversion :
         opencc_->GetConversionChain()->GetConversions()) {
      chain_.emplace_back();
      if (!AddGroup(conversion->GetDict(), &chain_.back())) return false;
    }
    starts_.assign(0x10000, 0);
    for (size_t k = 0; k < tables_.size(); ++k) {
      for (const auto& [first, lengths] : tables_[k].lengths) {
        if (first < 0x10000) starts_[static_cast<size_t>(first)] |= uint32_t{1} << k;
      }
    }
    return true;
  }

  std::string Convert(std::string_view text) const override {
    // OpenCC reads its input as a C string: it stops at the first NUL.
    text = text.substr(0, text.find('\0'));
    std::string out;
    out.reserve(text.size() + text.size() / 8);
    // Max-match segmentation: a key of the segmentation dictionary is a
    // segment; the characters between keys form one segment together.
    size_t pos = 0, run = 0;
    while (pos < text.size()) {
      const std::string_view rest = text.substr(pos);
      int32_t char_length;
      const UChar32 c = First(rest, &char_length);
      if (c < 0) return opencc_->Convert(std::string(text));
      size_t key_length = 0;
      if (Match(segmentation_, rest, c, &key_length) != nullptr) {
        if (run < pos) ConvertSegment(text.substr(run, pos - run), &out);
        ConvertSegment(rest.substr(0, key_length), &out);
        pos += key_length;
        run = pos;
      } else {
        pos += static_cast<size_t>(char_length);
      }
    }
    if (run < pos) ConvertSegment(text.substr(run, pos - run), &out);
    return out;
  }

 private:
  bool AddGroup(const opencc::DictPtr& dict, Group* group) {
    if (auto nested = std::dynamic_pointer_cast<opencc::DictGroup>(dict)) {
      for (const opencc::DictPtr& d : nested->GetDicts()) {
        if (!AddGroup(d, group)) return false;
      }
      return true;
    }
    if (tables_.size() == kMaxTables) return false;
    Table table;
    for (const std::unique_ptr<opencc::DictEntry>& entry : *dict->GetLexicon()) {
      const std::string key = entry->Key();
      if (key.empty()) continue;
      if (!table.values.emplace(key, entry->GetDefault()).second) continue;
      int32_t length;
      const UChar32 first = First(key, &length);
      if (first < 0) return false;
      table.lengths[first].push_back(key.size());
    }
    for (auto& [first, lengths] : table.lengths) {
      std::sort(lengths.begin(), lengths.end(), std::greater<>());
      lengths.erase(std::unique(lengths.begin(), lengths.end()), lengths.end());
    }
    group->mask |= uint32_t{1} << tables_.size();
    group->tables.push_back(tables_.size());
    tables_.push_back(std::move(table));
    return true;
  }

  // The value of the longest key of the group's first matching table that is
  // a prefix of `text` (whose first code point is c), or nullptr.
  const std::string* Match(const Group& group, std::string_view text, UChar32 c,
                           size_t* key_length) const {
    if (c < 0x10000 && (starts_[static_cast<size_t>(c)] & group.mask) == 0) return nullptr;
    for (size_t k : group.tables) {
      const Table& table = tables_[k];
      const auto lengths = table.lengths.find(c);
      if (lengths == table.lengths.end()) continue;
      for (size_t length : lengths->second) {
        if (length > text.size()) continue;
        const auto value = table.values.find(text.substr(0, length));
        if (value != table.values.end()) {
          *key_length = length;
          return &value->second;
        }
      }
    }
    return nullptr;
  }

  // Appends the segment converted by each conversion of the chain in turn.
  void ConvertSegment(std::string_view segment, std::string* out) const {
    // One thread_local object (one TLS destructor registration per thread).
    thread_local std::pair<std::string, std::string> buffers;
    std::string* current = &buffers.first;
    std::string* next = &buffers.second;
    current->assign(segment);
    for (const Group& group : chain_) {
      next->clear();
      std::string_view s = *current;
      size_t pos = 0;
      while (pos < s.size()) {
        const std::string_view rest = s.substr(pos);
        int32_t char_length;
        const UChar32 c = First(rest, &char_length);
        size_t key_length = 0;
        const std::string* value = c < 0 ? nullptr : Match(group, rest, c, &key_length);
        if (value != nullptr) {
          next->append(*value);
          pos += key_length;
        } else {
          const size_t length = c < 0 ? 1 : static_cast<size_t>(char_length);
          next->append(rest.substr(0, length));
          pos += length;
        }
      }
      std::swap(current, next);
    }
    out->append(*current);
  }

  opencc::ConverterPtr opencc_;  // for text that is not valid UTF-8
  std::vector<Table> tables_;
  std::vector<uint32_t> starts_;  // BMP: bit k when table k has a key starting with it
  Group segmentation_;
  std::vector<Group> chain_;
};

}  // namespace

Result<std::unique_ptr<T2sConverter>> T2sConverter::Create(const std::string& config) {
  try {
    opencc::Config loader;
    opencc::ConverterPtr opencc = loader.NewFromFile(config);
    auto converter = std::make_unique<FastConverter>(opencc);
    if (!converter->Build()) {
      return Status::NotSupported("OpenCC configuration '" + config +
                                  "' is not a max-match segmentation with a conversion chain");
    }
    return std::unique_ptr<T2sConverter>(std::move(converter));
  } catch (const std::exception& e) {
    return Status::NotFound("cannot load OpenCC configuration '" + config + "': " + e.what());
  }
}

}  // namespace neardup::text
