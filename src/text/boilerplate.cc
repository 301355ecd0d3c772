// Copyright 2026 The neardup Authors.

#include "neardup/boilerplate.h"

#include <xxhash.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <iterator>

#include "util/file.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace neardup {
namespace {

constexpr char kMagic[8] = {'N', 'D', 'L', 'I', 'N', 'E', 'S', '2'};
constexpr size_t kEntryBytes = 16;  // u64 key, u32 documents, u32 tags; then the tags
constexpr char kMagicV1[8] = {'N', 'D', 'L', 'I', 'N', 'E', 'S', '1'};
constexpr size_t kEntryBytesV1 = 12;  // u64 key, u32 documents
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

// Bytes that CanonicalInto() cannot copy as they are: ASCII white space and
// controls (<= 0x20), upper-case ASCII letters, and the lead bytes of U+00A0
// (0xC2) and U+3000 (0xE3) where those characters start (SpaceAt): other
// characters with those lead bytes (U+3002 "。", kana) are copied.
bool Special(const char* s, size_t n, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c <= 0x20 || (c >= 'A' && c <= 'Z')) return true;
  return (c == 0xC2 || c == 0xE3) && SpaceAt(std::string_view(s, n), i) > 0;
}

// The first byte of s[0, n) that is Special, or n. The bytes between are
// copied unchanged: this scan (16 bytes a step with SSE2) and one memcpy per
// run replace a push_back per byte (12 % of the default dedup's CPU at 100k
// documents, where each document is one line, keyed twice).
size_t PlainRun(const char* s, size_t n) {
  size_t i = 0;
#ifdef __SSE2__
  const __m128i space = _mm_set1_epi8(0x20), a = _mm_set1_epi8('A'), z = _mm_set1_epi8(25);
  const __m128i c2 = _mm_set1_epi8(static_cast<char>(0xC2));
  const __m128i a0 = _mm_set1_epi8(static_cast<char>(0xA0));
  const __m128i e3 = _mm_set1_epi8(static_cast<char>(0xE3));
  const __m128i x80 = _mm_set1_epi8(static_cast<char>(0x80));
  for (; i + 18 <= n; i += 16) {  // v1, v2: the bytes after each of v's
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    const __m128i v1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 1));
    const __m128i v2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 2));
    const __m128i letter = _mm_sub_epi8(v, a);
    const __m128i nbsp = _mm_and_si128(_mm_cmpeq_epi8(v, c2), _mm_cmpeq_epi8(v1, a0));
    const __m128i ideographic = _mm_and_si128(
        _mm_cmpeq_epi8(v, e3), _mm_and_si128(_mm_cmpeq_epi8(v1, x80), _mm_cmpeq_epi8(v2, x80)));
    const __m128i special =
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(_mm_min_epu8(v, space), v),
                                  _mm_cmpeq_epi8(_mm_min_epu8(letter, z), letter)),
                     _mm_or_si128(nbsp, ideographic));
    const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(special));
    if (mask != 0) return i + static_cast<size_t>(std::countr_zero(mask));
  }
#endif
  while (i < n && !Special(s, n, i)) ++i;
  return i;
}

void CanonicalInto(std::string_view line, std::string* out) {
  // The canonical form is never longer than the line.
  out->resize(line.size());
  char* const begin = out->data();
  char* d = begin;
  const char* s = line.data();
  const size_t n = line.size();
  bool pending_space = false;
  for (size_t i = 0; i < n;) {
    const size_t run = PlainRun(s + i, n - i);
    if (run > 0) {
      if (pending_space) *d++ = ' ';
      pending_space = false;
      std::memcpy(d, s + i, run);
      d += run;
      i += run;
      if (i == n) break;
    }
    const size_t space = SpaceAt(line, i);
    if (space > 0) {
      pending_space = d != begin;
      i += space;
      continue;
    }
    if (pending_space) *d++ = ' ';
    pending_space = false;
    char c = s[i++];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    *d++ = c;
  }
  out->resize(static_cast<size_t>(d - begin));
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

uint32_t LineGroupTag(const std::vector<uint64_t>& keys) {
  uint32_t tag = UINT32_MAX;
  for (uint64_t key : keys) {
    // A mix other than Slot()'s, so that the tag is not the slot order.
    uint64_t x = key ^ (key >> 31);
    x *= 0xBF58476D1CE4E5B9ULL;
    tag = std::min(tag, static_cast<uint32_t>(x >> 32));
  }
  return tag;
}

size_t LineStats::Find(uint64_t key) const {
  if (size_ == 0 || key == 0) return keys_.size();
  const size_t mask = keys_.size() - 1;
  for (size_t i = Slot(key, mask);; i = (i + 1) & mask) {
    if (keys_[i] == key) return i;
    if (keys_[i] == 0) return keys_.size();
  }
}

uint32_t LineStats::Count(uint64_t key) const {
  const size_t i = Find(key);
  return i == keys_.size() ? 0 : counts_[i];
}

uint32_t LineStats::Documents(uint64_t key) const {
  const size_t i = Find(key);
  return i == keys_.size() ? 0 : docs_[i];
}

size_t LineStats::LinesAtLeast(uint32_t min_docs) const {
  size_t n = 0;
  for (size_t i = 0; i < keys_.size(); ++i) n += keys_[i] != 0 && counts_[i] >= min_docs;
  return n;
}

void LineStats::CopyLineTo(size_t i, LineStats* out) const {
  const size_t j = out->Insert(keys_[i]);
  out->counts_[j] = counts_[i];
  out->docs_[j] = docs_[i];
  out->tag0_[j] = tag0_[i];
  out->saturated_[j] = saturated_[i];
  if (auto it = more_tags_.find(keys_[i]); it != more_tags_.end()) {
    out->more_tags_.emplace(keys_[i], it->second);
  }
}

LineStats LineStats::AtLeast(uint32_t min_count) const {
  LineStats out;
  out.documents_ = documents_;
  for (size_t i = 0; i < keys_.size(); ++i) {
    if (keys_[i] == 0 || counts_[i] < min_count) continue;
    CopyLineTo(i, &out);
  }
  return out;
}

size_t LineStats::KeyPart(uint64_t key, size_t parts) {
  // Ranges of (2^64 - 1) / parts + 1 keys: the last may be shorter.
  return parts <= 1 ? 0 : static_cast<size_t>(key / (UINT64_MAX / parts + 1));
}

std::vector<LineStats> LineStats::SplitByKey(size_t parts) const {
  std::vector<LineStats> out(std::max<size_t>(parts, 1));
  for (LineStats& part : out) part.documents_ = documents_;
  for (size_t i = 0; i < keys_.size(); ++i) {
    if (keys_[i] != 0) CopyLineTo(i, &out[KeyPart(keys_[i], out.size())]);
  }
  return out;
}

Result<LineStats> LineStats::Union(const std::vector<LineStats>& parts) {
  LineStats out;
  if (parts.empty()) return out;
  out.documents_ = parts[0].documents_;
  for (size_t p = 0; p < parts.size(); ++p) {
    const LineStats& part = parts[p];
    if (part.documents_ != out.documents_) {
      return Status::InvalidArgument("line counts of part " + std::to_string(p) + " count " +
                                     std::to_string(part.documents_) + " documents, part 0 " +
                                     std::to_string(out.documents_));
    }
    for (size_t i = 0; i < part.keys_.size(); ++i) {
      if (part.keys_[i] == 0) continue;
      if (out.Find(part.keys_[i]) != out.keys_.size()) {
        return Status::InvalidArgument("line counts of part " + std::to_string(p) +
                                       " repeat a line of an earlier part");
      }
      part.CopyLineTo(i, &out);
    }
  }
  return out;
}

void LineStats::Grow() {
  const size_t slots = std::max<size_t>(64, keys_.size() * 2);
  std::vector<uint64_t> old_keys(slots, 0);
  std::vector<uint32_t> old_counts(slots, 0), old_docs(slots, 0), old_tag0(slots, 0);
  std::vector<bool> old_saturated(slots, false);
  old_keys.swap(keys_);
  old_counts.swap(counts_);
  old_docs.swap(docs_);
  old_tag0.swap(tag0_);
  old_saturated.swap(saturated_);
  const size_t mask = keys_.size() - 1;
  for (size_t j = 0; j < old_keys.size(); ++j) {
    if (old_keys[j] == 0) continue;
    size_t i = Slot(old_keys[j], mask);
    while (keys_[i] != 0) i = (i + 1) & mask;
    keys_[i] = old_keys[j];
    counts_[i] = old_counts[j];
    docs_[i] = old_docs[j];
    tag0_[i] = old_tag0[j];
    saturated_[i] = old_saturated[j];
  }
}

size_t LineStats::Insert(uint64_t key) {
  if ((size_ + 1) * 2 > keys_.size()) Grow();  // load factor <= 1/2
  const size_t mask = keys_.size() - 1;
  size_t i = Slot(key, mask);
  while (keys_[i] != 0 && keys_[i] != key) i = (i + 1) & mask;
  if (keys_[i] == 0) {
    keys_[i] = key;
    ++size_;
  }
  return i;
}

void LineStats::Add(uint64_t key, uint32_t docs, const uint32_t* tags, size_t tag_count) {
  const size_t i = Insert(key);
  const uint64_t sum = static_cast<uint64_t>(docs_[i]) + docs;
  docs_[i] = sum > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(sum);
  if (!saturated_[i] && tag_count == 1) {
    // One document (counting): no temporary vectors.
    const uint32_t tag = tags[0];
    if (counts_[i] == 0 || (counts_[i] == 1 && tag0_[i] == tag)) {
      tag0_[i] = tag;
      counts_[i] = 1;
      return;
    }
    std::vector<uint32_t>& mine = more_tags_[key];
    if (counts_[i] == 1) mine.push_back(tag0_[i]);
    const auto at = std::lower_bound(mine.begin(), mine.end(), tag);
    if (at == mine.end() || *at != tag) mine.insert(at, tag);
    if (mine.size() >= kGroupCap) {
      saturated_[i] = true;
      more_tags_.erase(key);
      counts_[i] = docs_[i];
    } else {
      counts_[i] = static_cast<uint32_t>(mine.size());
    }
    return;
  }
  if (!saturated_[i]) {
    if (tag_count == 0) {
      saturated_[i] = true;  // the other side counts documents
    } else {
      // The union of the line's tags and `tags`, both sorted.
      std::vector<uint32_t> mine;
      if (counts_[i] == 1) {
        mine.push_back(tag0_[i]);
      } else if (counts_[i] > 1) {
        mine = std::move(more_tags_[key]);
      }
      std::vector<uint32_t> all;
      all.reserve(mine.size() + tag_count);
      std::set_union(mine.begin(), mine.end(), tags, tags + tag_count, std::back_inserter(all));
      if (all.size() >= kGroupCap) {
        saturated_[i] = true;
      } else if (all.size() == 1) {
        tag0_[i] = all[0];
        counts_[i] = 1;
      } else {
        counts_[i] = static_cast<uint32_t>(all.size());
        more_tags_[key] = std::move(all);
      }
    }
    if (saturated_[i]) more_tags_.erase(key);
  }
  if (saturated_[i]) counts_[i] = docs_[i];
}

std::string LineStats::Serialize() const {
  std::vector<size_t> slots;
  slots.reserve(size_);
  for (size_t i = 0; i < keys_.size(); ++i) {
    if (keys_[i] != 0) slots.push_back(i);
  }
  std::sort(slots.begin(), slots.end(), [&](size_t a, size_t b) { return keys_[a] < keys_[b]; });
  std::string out(kMagic, sizeof(kMagic));
  PutU64(&out, documents_);
  PutU64(&out, slots.size());
  for (size_t i : slots) {
    PutU64(&out, keys_[i]);
    PutU32(&out, docs_[i]);
    if (saturated_[i]) {
      PutU32(&out, 0);
    } else if (counts_[i] == 1) {
      PutU32(&out, 1);
      PutU32(&out, tag0_[i]);
    } else {
      const std::vector<uint32_t>& tags = more_tags_.at(keys_[i]);
      PutU32(&out, static_cast<uint32_t>(tags.size()));
      for (uint32_t t : tags) PutU32(&out, t);
    }
  }
  PutU64(&out, XXH3_64bits(out.data(), out.size()));
  return out;
}

Result<LineStats> LineStats::Deserialize(std::string_view bytes, std::string_view name) {
  const std::string where(name);
  const bool v1 = bytes.size() >= sizeof(kMagicV1) &&
                  std::memcmp(bytes.data(), kMagicV1, sizeof(kMagicV1)) == 0;
  if (!v1 &&
      (bytes.size() < sizeof(kMagic) || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0)) {
    return Status::InvalidArgument(where + ": not a neardup line statistics file");
  }
  const size_t header = sizeof(kMagic) + 16;
  if (bytes.size() < header + 8) return Status::Corruption(where + ": truncated header");
  const size_t body = bytes.size() - 8;
  if (XXH3_64bits(bytes.data(), body) != GetU64(bytes.data() + body)) {
    return Status::Corruption(where + ": checksum mismatch");
  }
  const uint64_t entries = GetU64(bytes.data() + sizeof(kMagic) + 8);
  const size_t min_entry = v1 ? kEntryBytesV1 : kEntryBytes;
  if (entries > (body - header) / min_entry || (v1 && header + entries * kEntryBytesV1 != body)) {
    return Status::Corruption(where + ": size " + std::to_string(bytes.size()) +
                              " does not match its " + std::to_string(entries) + " entries");
  }
  LineStats stats;
  stats.documents_ = GetU64(bytes.data() + sizeof(kMagic));
  uint64_t previous = 0;
  size_t at = header;
  std::vector<uint32_t> tags;
  for (uint64_t e = 0; e < entries; ++e) {
    const auto bad = [&](const std::string& why) {
      return Status::Corruption(where + ": entry " + std::to_string(e) + " " + why);
    };
    if (body - at < min_entry) return bad("is cut short");
    const uint64_t key = GetU64(bytes.data() + at);
    const uint32_t docs = GetU32(bytes.data() + at + 8);
    at += min_entry;
    tags.clear();
    if (!v1) {
      const uint32_t tag_count = GetU32(bytes.data() + at - 4);
      if (tag_count >= kGroupCap || (body - at) / 4 < tag_count) {
        return bad("has a bad number of group tags");
      }
      for (uint32_t t = 0; t < tag_count; ++t) tags.push_back(GetU32(bytes.data() + at + 4 * t));
      at += 4 * size_t{tag_count};
      if (!std::is_sorted(tags.begin(), tags.end()) ||
          std::adjacent_find(tags.begin(), tags.end()) != tags.end() || tags.size() > docs) {
        return bad("has group tags out of order or more than its documents");
      }
    }
    if (key <= previous || docs == 0 || docs > stats.documents_) {
      return bad("is out of order or counts more documents than the file");
    }
    previous = key;
    stats.Add(key, docs, tags.data(), tags.size());
  }
  if (at != body) {
    return Status::Corruption(where + ": size " + std::to_string(bytes.size()) +
                              " does not match its " + std::to_string(entries) + " entries");
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
  const uint32_t tag = LineGroupTag(keys);
  for (uint64_t key : keys) stats_.Add(key, 1, &tag, 1);
}

void LineCounter::Merge(const LineStats& other) {
  stats_.documents_ += other.documents_;
  for (size_t i = 0; i < other.keys_.size(); ++i) {
    const uint64_t key = other.keys_[i];
    if (key == 0) continue;
    if (other.saturated_[i]) {
      stats_.Add(key, other.docs_[i], nullptr, 0);
    } else if (other.counts_[i] == 1) {
      stats_.Add(key, other.docs_[i], &other.tag0_[i], 1);
    } else {
      const std::vector<uint32_t>& tags = other.more_tags_.at(key);
      stats_.Add(key, other.docs_[i], tags.data(), tags.size());
    }
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
  std::string out;
  if (!StripInto(text, &out, dropped)) return std::string(text);
  return out;
}

bool BoilerplateFilter::StripInto(std::string_view text, std::string* out, size_t* dropped) const {
  if (options_.mode == BoilerplateMode::kOff || flagged_ == 0) return false;
  // One line (no '\n' but a last one): never stripped, since leaving it out
  // would leave nothing of the document's own (the rule below); not keyed.
  const size_t newline = text.find('\n');
  if (newline == std::string_view::npos || newline + 1 >= text.size()) return false;
  const uint32_t min_docs = static_cast<uint32_t>(std::max(options_.min_docs, 1));
  thread_local std::string scratch;
  // With a normalizer, line i is keyed by line i of the normalized text when
  // normalization kept the line count (it keeps '\n'), else line by line.
  std::vector<std::string_view> normalized_lines;
  std::string normalized;
  bool aligned = false;
  if (normalizer_ != nullptr) {
    normalized = normalizer_->Normalize(text);
    ForEachLine(normalized,
                [&](std::string_view line, size_t, size_t) { normalized_lines.push_back(line); });
    size_t line_count = 0;
    ForEachLine(text, [&](std::string_view, size_t, size_t) { ++line_count; });
    aligned = normalized_lines.size() == line_count;
  }
  size_t index = 0;
  size_t left_out = 0, left_out_bytes = 0, kept_bytes = 0;
  // Lines are contiguous (each starts after the previous one's '\n'): the
  // kept lines before the first one left out are the text's prefix up to
  // it, copied only once a line is left out.
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
      if (left_out++ == 0) out->assign(text.substr(0, start));
      left_out_bytes += scratch.size();
      return;
    }
    kept_bytes += scratch.size();
    if (left_out > 0) out->append(text.substr(start, std::min(end + 1, text.size()) - start));
  });
  // Little or nothing of its own: a reprint of a frequent document (with a
  // line or two added), not a template.
  if (left_out == 0 || left_out_bytes > kMaxLeftOutPerKept * kept_bytes) return false;
  if (dropped != nullptr) *dropped += left_out;
  return true;
}

}  // namespace neardup
