// Copyright 2026 The neardup Authors.

#include "neardup/boilerplate.h"

#include <xxhash.h>

#include <algorithm>
#include <cstring>

#include "util/file.h"

namespace neardup {
namespace {

constexpr char kMagic[8] = {'N', 'D', 'L', 'I', 'N', 'E', 'S', '1'};
constexpr size_t kEntryBytes = 12;  // u64 key, u32 count
// Strip() leaves out at most 90 % of a document's (canonical) line text,
// i.e. at most this many times what it keeps; beyond it the document is
// fingerprinted whole.
constexpr size_t kMaxLeftOutPerKept = 9;

// The length of the white space character at s[i] (ASCII space and controls
// \t \n \v \f \r, U+00A0, U+3000), or 0.
size_t SpaceAt(std::string_view s, size_t i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  if (c == ' ' || (c >= '\t' && c <= '\r')) return 1;
  if (c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0xA0) return 2;
  if (c == 0xE3 && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
      static_cast<unsigned char>(s[i + 2]) == 0x80) {
    return 3;
  }
  return 0;
}

void CanonicalInto(std::string_view line, std::string* out) {
  out->clear();
  bool pending_space = false;
  for (size_t i = 0; i < line.size();) {
    const size_t space = SpaceAt(line, i);
    if (space > 0) {
      pending_space = !out->empty();
      i += space;
      continue;
    }
    if (pending_space) out->push_back(' ');
    pending_space = false;
    char c = line[i++];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    out->push_back(c);
  }
}

// The key of a line's canonical form; 0 for a blank line.
uint64_t LineKey(std::string_view line, std::string* scratch) {
  CanonicalInto(line, scratch);
  if (scratch->empty()) return 0;
  const uint64_t h = XXH3_64bits(scratch->data(), scratch->size());
  return h == 0 ? 1 : h;
}

// Calls f(line) for each '\n'-separated line (without the '\n').
template <typename F>
void ForEachLine(std::string_view text, F f) {
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    f(text.substr(start, end - start), start, end);
    start = end + 1;
  }
}

size_t Slot(uint64_t key, size_t mask) {
  // The keys are already hashes; mix anyway so that a sorted load spreads.
  return static_cast<size_t>((key * 0x9E3779B97F4A7C15ULL) >> 17) & mask;
}

void PutU64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}
void PutU32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}
uint64_t GetU64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}
uint32_t GetU32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

}  // namespace

Result<BoilerplateMode> ParseBoilerplateMode(std::string_view name) {
  if (name == "off") return BoilerplateMode::kOff;
  if (name == "lines") return BoilerplateMode::kLines;
  return Status::InvalidArgument("unknown boilerplate mode '" + std::string(name) +
                                 "' (expected off or lines)");
}

const char* BoilerplateModeName(BoilerplateMode mode) {
  return mode == BoilerplateMode::kLines ? "lines" : "off";
}

std::string CanonicalLine(std::string_view line) {
  std::string out;
  CanonicalInto(line, &out);
  return out;
}

std::vector<uint64_t> DocumentLineKeys(std::string_view text, const Normalizer* normalizer) {
  std::vector<uint64_t> keys;
  std::string scratch;
  const std::string normalized = normalizer ? normalizer->Normalize(text) : std::string();
  ForEachLine(normalizer ? std::string_view(normalized) : text,
              [&](std::string_view line, size_t, size_t) {
                const uint64_t key = LineKey(line, &scratch);
                if (key != 0) keys.push_back(key);
              });
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

uint32_t LineStats::Count(uint64_t key) const {
  if (size_ == 0 || key == 0) return 0;
  const size_t mask = keys_.size() - 1;
  for (size_t i = Slot(key, mask);; i = (i + 1) & mask) {
    if (keys_[i] == key) return counts_[i];
    if (keys_[i] == 0) return 0;
  }
}

size_t LineStats::LinesAtLeast(uint32_t min_docs) const {
  size_t n = 0;
  for (size_t i = 0; i < keys_.size(); ++i) n += keys_[i] != 0 && counts_[i] >= min_docs;
  return n;
}

void LineStats::Grow() {
  std::vector<uint64_t> old_keys(std::max<size_t>(64, keys_.size() * 2), 0);
  std::vector<uint32_t> old_counts(old_keys.size(), 0);
  old_keys.swap(keys_);
  old_counts.swap(counts_);
  const size_t mask = keys_.size() - 1;
  for (size_t j = 0; j < old_keys.size(); ++j) {
    if (old_keys[j] == 0) continue;
    size_t i = Slot(old_keys[j], mask);
    while (keys_[i] != 0) i = (i + 1) & mask;
    keys_[i] = old_keys[j];
    counts_[i] = old_counts[j];
  }
}

void LineStats::Increment(uint64_t key, uint32_t by) {
  if ((size_ + 1) * 2 > keys_.size()) Grow();  // load factor <= 1/2
  const size_t mask = keys_.size() - 1;
  size_t i = Slot(key, mask);
  while (keys_[i] != 0 && keys_[i] != key) i = (i + 1) & mask;
  if (keys_[i] == 0) {
    keys_[i] = key;
    ++size_;
  }
  const uint64_t sum = static_cast<uint64_t>(counts_[i]) + by;
  counts_[i] = sum > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(sum);
}

std::string LineStats::Serialize() const {
  std::vector<std::pair<uint64_t, uint32_t>> entries;
  entries.reserve(size_);
  for (size_t i = 0; i < keys_.size(); ++i) {
    if (keys_[i] != 0) entries.emplace_back(keys_[i], counts_[i]);
  }
  std::sort(entries.begin(), entries.end());
  std::string out(kMagic, sizeof(kMagic));
  PutU64(&out, documents_);
  PutU64(&out, entries.size());
  for (const auto& [key, count] : entries) {
    PutU64(&out, key);
    PutU32(&out, count);
  }
  PutU64(&out, XXH3_64bits(out.data(), out.size()));
  return out;
}

Result<LineStats> LineStats::Deserialize(std::string_view bytes, std::string_view name) {
  const std::string where(name);
  if (bytes.size() < sizeof(kMagic) || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return Status::InvalidArgument(where + ": not a neardup line statistics file");
  }
  const size_t header = sizeof(kMagic) + 16;
  if (bytes.size() < header + 8) return Status::Corruption(where + ": truncated header");
  const uint64_t entries = GetU64(bytes.data() + sizeof(kMagic) + 8);
  if (entries > (bytes.size() - header - 8) / kEntryBytes ||
      header + entries * kEntryBytes + 8 != bytes.size()) {
    return Status::Corruption(where + ": size " + std::to_string(bytes.size()) +
                              " does not match its " + std::to_string(entries) + " entries");
  }
  const size_t body = bytes.size() - 8;
  if (XXH3_64bits(bytes.data(), body) != GetU64(bytes.data() + body)) {
    return Status::Corruption(where + ": checksum mismatch");
  }
  LineStats stats;
  stats.documents_ = GetU64(bytes.data() + sizeof(kMagic));
  uint64_t previous = 0;
  for (uint64_t e = 0; e < entries; ++e) {
    const char* p = bytes.data() + header + e * kEntryBytes;
    const uint64_t key = GetU64(p);
    const uint32_t count = GetU32(p + 8);
    if (key <= previous || count == 0 || count > stats.documents_) {
      return Status::Corruption(where + ": entry " + std::to_string(e) +
                                " is out of order or counts more documents than the file");
    }
    previous = key;
    stats.Increment(key, count);
  }
  return stats;
}

Status LineStats::Save(const std::string& path) const {
  // Written beside and renamed over: a reader never sees half a file.
  const std::string temp = path + ".tmp";
  NEARDUP_ASSIGN_OR_RETURN(auto file, file::WritableFile::Create(temp));
  NEARDUP_RETURN_IF_ERROR(file->Append(Serialize()));
  NEARDUP_RETURN_IF_ERROR(file->Sync());
  NEARDUP_RETURN_IF_ERROR(file->Close());
  NEARDUP_RETURN_IF_ERROR(file::RenameFile(temp, path));
  return file::SyncParentDir(path);
}

Result<LineStats> LineStats::Load(const std::string& path) {
  NEARDUP_ASSIGN_OR_RETURN(auto bytes, file::ReadWholeFile(path));
  return Deserialize(bytes, path);
}

void LineCounter::AddKeys(const std::vector<uint64_t>& keys) {
  ++stats_.documents_;
  for (uint64_t key : keys) stats_.Increment(key, 1);
}

void LineCounter::Merge(const LineStats& other) {
  stats_.documents_ += other.documents_;
  for (size_t i = 0; i < other.keys_.size(); ++i) {
    if (other.keys_[i] != 0) stats_.Increment(other.keys_[i], other.counts_[i]);
  }
}

BoilerplateFilter::BoilerplateFilter(const LineStats& stats, const BoilerplateOptions& options,
                                     const Normalizer* normalizer)
    : stats_(stats), options_(options), normalizer_(normalizer) {
  if (options_.mode != BoilerplateMode::kOff) {
    flagged_ = stats_.LinesAtLeast(static_cast<uint32_t>(std::max(options_.min_docs, 1)));
  }
}

std::string BoilerplateFilter::Strip(std::string_view text, size_t* dropped) const {
  if (options_.mode == BoilerplateMode::kOff || flagged_ == 0) return std::string(text);
  const uint32_t min_docs = static_cast<uint32_t>(std::max(options_.min_docs, 1));
  std::string out;
  std::string scratch;
  // With a normalizer, line i is keyed by line i of the normalized text when
  // normalization kept the line count (it keeps '\n'), else line by line.
  std::vector<std::string_view> normalized_lines;
  std::string normalized;
  if (normalizer_ != nullptr) {
    normalized = normalizer_->Normalize(text);
    ForEachLine(normalized,
                [&](std::string_view line, size_t, size_t) { normalized_lines.push_back(line); });
  }
  size_t line_count = 0;
  ForEachLine(text, [&](std::string_view, size_t, size_t) { ++line_count; });
  const bool aligned = normalized_lines.size() == line_count;
  size_t index = 0;
  size_t left_out = 0, left_out_bytes = 0, kept_bytes = 0;
  ForEachLine(text, [&](std::string_view line, size_t start, size_t end) {
    uint64_t key = 0;
    if (normalizer_ == nullptr) {
      key = LineKey(line, &scratch);
    } else if (aligned) {
      key = LineKey(normalized_lines[index], &scratch);
    } else {
      key = LineKey(normalizer_->Normalize(line), &scratch);
    }
    ++index;
    if (key != 0 && stats_.Count(key) >= min_docs) {
      ++left_out;
      left_out_bytes += scratch.size();
      return;
    }
    kept_bytes += scratch.size();
    out.append(text.substr(start, std::min(end + 1, text.size()) - start));
  });
  // Little or nothing of its own: a reprint of a frequent document (with a
  // line or two added), not a template.
  if (left_out == 0 || left_out_bytes > kMaxLeftOutPerKept * kept_bytes) {
    return std::string(text);
  }
  if (dropped != nullptr) *dropped += left_out;
  return out;
}

}  // namespace neardup
