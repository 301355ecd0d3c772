// Copyright 2026 The neardup Authors.

#include "shard.h"

#include <xxhash.h>

#include <cstring>
#include <type_traits>

#include "neardup/file.h"

namespace neardup::mpi {
namespace {

// Version 2: no records, and the short-document sets (version 1 held the
// records; its shards are computed again).
constexpr char kMagic[8] = {'N', 'D', 'M', 'P', 'I', 'S', 'H', '2'};

template <typename T>
void Put(const T& v, std::string* out) {
  out->append(reinterpret_cast<const char*>(&v), sizeof v);
}

// Reads sequentially; ok() turns false on the first read past the end.
class Cursor {
 public:
  explicit Cursor(std::string_view bytes) : bytes_(bytes) {}
  template <typename T>
  T Get() {
    T v{};
    if (!ok_ || bytes_.size() - at_ < sizeof v) {
      ok_ = false;
      return v;
    }
    std::memcpy(&v, bytes_.data() + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  std::string_view Take(uint64_t n) {
    if (!ok_ || bytes_.size() - at_ < n) {
      ok_ = false;
      return {};
    }
    const std::string_view s = bytes_.substr(at_, n);
    at_ += n;
    return s;
  }
  bool ok() const { return ok_; }
  bool at_end() const { return at_ == bytes_.size(); }

 private:
  std::string_view bytes_;
  size_t at_ = 0;
  bool ok_ = true;
};

}  // namespace

PackedDocument Pack(const DedupDocument& d) {
  PackedDocument p;
  p.hi = d.fingerprint.hi();
  p.lo = d.fingerprint.lo();
  p.length = d.length;
  p.score = d.score.value_or(0);
  p.flags = (d.empty ? 1u : 0u) | (d.score ? 2u : 0u) | (d.fingerprint.bits() == 128 ? 4u : 0u);
  return p;
}

DedupDocument Unpack(const PackedDocument& p) {
  DedupDocument d;
  d.fingerprint = (p.flags & 4) != 0 ? Fingerprint::From128(p.hi, p.lo) : Fingerprint::From64(p.lo);
  d.empty = (p.flags & 1) != 0;
  d.length = p.length;
  if ((p.flags & 2) != 0) d.score = p.score;
  return d;
}

std::vector<uint64_t> StatsWords(const InputStats& s) {
  return {s.files,         s.documents,    s.bytes,     s.unreadable, s.malformed,
          s.missing_field, s.invalid_utf8, s.nul_bytes, s.skipped};
}

InputStats StatsFromWords(const uint64_t* w) {
  InputStats s;
  s.files = w[0];
  s.documents = w[1];
  s.bytes = w[2];
  s.unreadable = w[3];
  s.malformed = w[4];
  s.missing_field = w[5];
  s.invalid_utf8 = w[6];
  s.nul_bytes = w[7];
  s.skipped = w[8];
  return s;
}

void AppendStrings(const std::vector<std::string>& strings, std::string* out) {
  for (const std::string& s : strings) {
    Put<uint64_t>(s.size(), out);
    out->append(s);
  }
}

bool ReadStrings(std::string_view bytes, std::vector<std::string>* out) {
  Cursor c(bytes);
  while (!c.at_end()) {
    const auto n = c.Get<uint64_t>();
    const std::string_view s = c.Take(n);
    if (!c.ok()) return false;
    out->emplace_back(s);
  }
  return true;
}

std::string EncodeShard(const Shard& shard) {
  const DedupCorpus& c = shard.corpus;
  std::string out(kMagic, sizeof kMagic);
  Put<uint64_t>(c.docs.size(), &out);
  for (const uint64_t w : StatsWords(shard.stats)) Put(w, &out);
  Put(shard.boilerplate_dropped, &out);
  Put(c.bad_scores, &out);
  for (const DedupDocument& d : c.docs) Put(Pack(d), &out);
  Put<uint64_t>(c.signatures.size(), &out);
  out.append(reinterpret_cast<const char*>(c.signatures.data()),
             c.signatures.size() * sizeof(uint32_t));
  Put<uint64_t>(c.sketches.size(), &out);  // verified pairs: 0 or one per document
  out.append(reinterpret_cast<const char*>(c.sketches.data()),
             c.sketches.size() * sizeof(JaccardSketch));
  Put<uint64_t>(c.short_sets.size(), &out);  // the short-document rule: 0 or one per document
  for (const std::vector<uint64_t>& set : c.short_sets) {
    Put<uint64_t>(set.size(), &out);
    out.append(reinterpret_cast<const char*>(set.data()), set.size() * sizeof(uint64_t));
  }
  std::string strings;
  AppendStrings(c.ids, &strings);
  Put<uint64_t>(strings.size(), &out);
  out += strings;
  return out;
}

Result<Shard> DecodeShard(std::string_view bytes, const std::string& name, size_t num_perm) {
  const auto corrupt = [&name](const char* why) {
    return Status::Corruption(name + ": not a neardup-mpi shard of this run (" + why + ")");
  };
  Cursor c(bytes);
  const std::string_view magic = c.Take(sizeof kMagic);
  if (!c.ok() || magic != std::string_view(kMagic, sizeof kMagic)) return corrupt("magic");
  Shard shard;
  const auto n = c.Get<uint64_t>();
  uint64_t words[kStatsWords];
  for (uint64_t& w : words) w = c.Get<uint64_t>();
  shard.stats = StatsFromWords(words);
  shard.boilerplate_dropped = c.Get<uint64_t>();
  shard.corpus.bad_scores = c.Get<uint64_t>();
  if (!c.ok() || n > bytes.size() / sizeof(PackedDocument)) return corrupt("size");
  shard.corpus.docs.reserve(n);
  for (uint64_t i = 0; i < n; ++i) shard.corpus.docs.push_back(Unpack(c.Get<PackedDocument>()));
  const auto signatures = c.Get<uint64_t>();
  if (!c.ok() || signatures != n * num_perm) return corrupt("signatures");
  const std::string_view sig = c.Take(signatures * sizeof(uint32_t));
  if (!c.ok()) return corrupt("signatures");
  shard.corpus.signatures.resize(signatures);
  // (memcpy of nothing from a null pointer is undefined: guard the empty case)
  if (!sig.empty()) std::memcpy(shard.corpus.signatures.data(), sig.data(), sig.size());
  const auto sketches = c.Get<uint64_t>();
  if (!c.ok() || (sketches != 0 && sketches != n)) return corrupt("sketches");
  const std::string_view sk = c.Take(sketches * sizeof(JaccardSketch));
  if (!c.ok()) return corrupt("sketches");
  shard.corpus.sketches.resize(sketches);
  if (!sk.empty()) std::memcpy(shard.corpus.sketches.data(), sk.data(), sk.size());
  const auto short_sets = c.Get<uint64_t>();
  if (!c.ok() || (short_sets != 0 && short_sets != n)) return corrupt("short sets");
  shard.corpus.short_sets.resize(short_sets);
  for (std::vector<uint64_t>& set : shard.corpus.short_sets) {
    const auto size = c.Get<uint64_t>();
    if (!c.ok() || size > bytes.size() / sizeof(uint64_t)) return corrupt("short sets");
    const std::string_view elements = c.Take(size * sizeof(uint64_t));
    if (!c.ok()) return corrupt("short sets");
    set.resize(size);
    if (size > 0) std::memcpy(set.data(), elements.data(), elements.size());
  }
  const auto string_bytes = c.Get<uint64_t>();
  const std::string_view strings = c.Take(string_bytes);
  if (!c.ok() || !c.at_end()) return corrupt("size");
  if (!ReadStrings(strings, &shard.corpus.ids) || shard.corpus.ids.size() != n) {
    return corrupt("ids");
  }
  return shard;
}

std::string EncodePairs(const std::vector<IdPair>& pairs) {
  std::string out;
  out.reserve(pairs.size() * 20);
  for (const IdPair& p : pairs) {
    Put(p.a, &out);
    Put(p.b, &out);
    Put<int32_t>(p.distance, &out);
  }
  return out;
}

Result<std::vector<IdPair>> DecodePairs(std::string_view bytes, const std::string& name) {
  if (bytes.size() % 20 != 0) return Status::Corruption(name + ": not a list of pairs");
  std::vector<IdPair> pairs(bytes.size() / 20);
  Cursor c(bytes);
  for (IdPair& p : pairs) {
    p.a = c.Get<uint64_t>();
    p.b = c.Get<uint64_t>();
    p.distance = c.Get<int32_t>();
  }
  return pairs;
}

Status WriteFileAtomically(const std::string& path, std::string_view payload) {
  const std::string tmp = path + ".tmp";
  NEARDUP_ASSIGN_OR_RETURN(auto f, file::WritableFile::Create(tmp));
  NEARDUP_RETURN_IF_ERROR(f->Append(payload));
  const uint64_t sum = XXH3_64bits(payload.data(), payload.size());
  NEARDUP_RETURN_IF_ERROR(f->Append(std::string_view(reinterpret_cast<const char*>(&sum), 8)));
  NEARDUP_RETURN_IF_ERROR(f->Sync());
  NEARDUP_RETURN_IF_ERROR(f->Close());
  NEARDUP_RETURN_IF_ERROR(file::RenameFile(tmp, path));
  return file::SyncParentDir(path);
}

Result<std::string> ReadChecked(const std::string& path) {
  NEARDUP_ASSIGN_OR_RETURN(std::string bytes, file::ReadWholeFile(path));
  if (bytes.size() < 8) return Status::Corruption(path + ": truncated (no checksum)");
  uint64_t sum = 0;
  std::memcpy(&sum, bytes.data() + bytes.size() - 8, 8);
  bytes.resize(bytes.size() - 8);
  if (XXH3_64bits(bytes.data(), bytes.size()) != sum) {
    return Status::Corruption(path + ": checksum mismatch (a torn or foreign file)");
  }
  return bytes;
}

}  // namespace neardup::mpi
