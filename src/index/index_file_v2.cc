// Copyright 2026 The neardup Authors.

#include "index/index_file_v2.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <numeric>

#include "index/index_file.h"
#include "index/probe_tables.h"
#include "util/file.h"

namespace neardup::index_internal {
namespace {

constexpr size_t kHeaderBytes = 16;   // magic, version, flags
constexpr size_t kTrailerBytes = 24;  // meta offset, meta length, checksum
constexpr size_t kAlign = 64;
constexpr size_t kFixedMetaBytes = 104;
constexpr size_t kMaskBytes = 24;
constexpr size_t kSectionBytes = 24;
constexpr uint32_t kMaxTables = 4096;
constexpr size_t kFixedSections = 6;  // ids, lo, hi, name offsets, names, name order

void Put32(std::string* s, uint32_t v) { s->append(reinterpret_cast<const char*>(&v), 4); }
void Put64(std::string* s, uint64_t v) { s->append(reinterpret_cast<const char*>(&v), 8); }
void PutF64(std::string* s, double v) { s->append(reinterpret_cast<const char*>(&v), 8); }
uint32_t Get32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
uint64_t Get64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
double GetF64(const char* p) {
  double v;
  std::memcpy(&v, p, 8);
  return v;
}

// Buffered writes to a WritableFile, with each section's checksum.
class SectionWriter {
 public:
  explicit SectionWriter(file::WritableFile* out) : out_(out), state_(XXH3_createState()) {}
  ~SectionWriter() { XXH3_freeState(state_); }

  Status Write(const void* data, size_t n) {
    const char* p = static_cast<const char*>(data);
    if (in_section_) XXH3_64bits_update(state_, p, n);
    offset_ += n;
    while (n > 0) {
      const size_t take = std::min(n, kBuffer - buffer_.size());
      buffer_.append(p, take);
      p += take;
      n -= take;
      if (buffer_.size() == kBuffer) NEARDUP_RETURN_IF_ERROR(Flush());
    }
    return Status::OK();
  }
  Status Pad() {
    static const char zeros[kAlign] = {};
    return Write(zeros, (kAlign - offset_ % kAlign) % kAlign);
  }
  Status Begin() {
    NEARDUP_RETURN_IF_ERROR(Pad());
    XXH3_64bits_reset(state_);
    in_section_ = true;
    start_ = offset_;
    return Status::OK();
  }
  void End(std::string* meta) {
    in_section_ = false;
    Put64(meta, start_);
    Put64(meta, offset_ - start_);
    Put64(meta, XXH3_64bits_digest(state_));
  }
  Status Flush() {
    if (buffer_.empty()) return Status::OK();
    NEARDUP_RETURN_IF_ERROR(out_->Append(buffer_));
    buffer_.clear();
    return Status::OK();
  }
  uint64_t offset() const { return offset_; }

 private:
  static constexpr size_t kBuffer = size_t{1} << 20;
  file::WritableFile* out_;
  XXH3_state_t* state_;
  std::string buffer_;
  uint64_t offset_ = 0;
  uint64_t start_ = 0;
  bool in_section_ = false;
};

Status Bad(const std::string& name, const std::string& why) {
  return Status::Corruption(name + ": " + why);
}

template <typename T>
std::span<const T> As(std::string_view bytes, uint64_t offset, uint64_t length) {
  return std::span<const T>(reinterpret_cast<const T*>(bytes.data() + offset),
                            static_cast<size_t>(length / sizeof(T)));
}

}  // namespace

namespace {

// Reads the file open as `fd` (`size` bytes) into anonymous memory backed by
// transparent huge pages where the kernel has them; read-only afterwards.
Result<char*> ReadIntoHugePages(int fd, size_t size, size_t* mapped, const std::string& path) {
  constexpr size_t kHugePage = size_t{2} << 20;
  *mapped = (size + kHugePage - 1) / kHugePage * kHugePage;
  void* p = ::mmap(nullptr, *mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return Status::IOError(path + ": mmap: " + std::strerror(errno));
  char* data = static_cast<char*>(p);
  (void)::madvise(data, *mapped, MADV_HUGEPAGE);  // a hint: fine if refused
  for (size_t done = 0; done < size;) {
    const ssize_t got = ::pread(fd, data + done, std::min<size_t>(size - done, size_t{1} << 26),
                                static_cast<off_t>(done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      const std::string why = got < 0 ? std::strerror(errno) : "file shrank while read";
      ::munmap(data, *mapped);
      return Status::IOError(path + ": read: " + why);
    }
    done += static_cast<size_t>(got);
  }
  (void)::mprotect(data, *mapped, PROT_READ);
  return data;
}

}  // namespace

Result<std::shared_ptr<MappedFile>> MappedFile::Open(const std::string& path, bool preload) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Status::NotFound(path + ": no such file");
    return Status::IOError(path + ": " + std::strerror(errno));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::IOError(path + ": not a regular file");
  }
  const size_t size = static_cast<size_t>(st.st_size);
  const char* data = nullptr;
  size_t mapped = size;
  if (size > 0 && preload) {
    Result<char*> read = ReadIntoHugePages(fd, size, &mapped, path);
    ::close(fd);
    if (!read.ok()) return read.status();
    data = *read;
  } else if (size > 0) {
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      return Status::IOError(path + ": mmap: " + std::strerror(err));
    }
    data = static_cast<const char*>(p);
    ::close(fd);  // the mapping stays valid
  } else {
    ::close(fd);
  }
  return std::shared_ptr<MappedFile>(new MappedFile(data, size, mapped));
}

MappedFile::~MappedFile() {
  if (size_ > 0) ::munmap(const_cast<char*>(data_), mapped_);
}

uint32_t IndexFileVersion(std::string_view bytes) {
  if (bytes.size() < 12 || std::memcmp(bytes.data(), kIndexMagic, 8) != 0) return 0;
  return Get32(bytes.data() + 8);
}

Status WriteIndexFileV2(const std::string& path, const IndexFileV2Meta& meta,
                        const IndexFileV2Rows& rows, int threads, uint64_t* checksum) {
  if (!IsMappedVersion(meta.version)) {
    return Status::InvalidArgument(path + ": index file version " + std::to_string(meta.version) +
                                   " is not written here");
  }
  const TablesSpec& spec = meta.spec;
  const size_t n = rows.ids.size();
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return rows.names[a] != rows.names[b] ? rows.names[a] < rows.names[b] : a < b;
  });

  NEARDUP_ASSIGN_OR_RETURN(auto out, file::WritableFile::Create(path));
  const auto fail = [&](const Status& s) {
    out.reset();
    (void)file::RemoveFile(path);
    return s;
  };
  SectionWriter w(out.get());
  std::string head(kIndexMagic, 8);
  Put32(&head, meta.version);
  Put32(&head, 0);
  std::string sections;
  Status s = w.Write(head.data(), head.size());
  const auto section = [&](const void* data, size_t bytes) {
    if (!s.ok()) return;
    s = w.Begin();
    if (s.ok()) s = w.Write(data, bytes);
    if (s.ok()) w.End(&sections);
  };
  const bool packed = meta.version == kIndexVersion3;
  section(rows.ids.data(), n * 8);
  if (RowsPacked(meta.version, spec.kind)) {
    // Each row's words together: lo, then hi for 128 bits.
    std::vector<uint64_t> words;
    words.reserve(n + rows.hi.size());
    for (size_t i = 0; i < n; ++i) {
      words.push_back(rows.lo[i]);
      if (!rows.hi.empty()) words.push_back(rows.hi[i]);
    }
    section(words.data(), words.size() * 8);
    section(nullptr, 0);
  } else {
    section(rows.lo.data(), n * 8);
    section(rows.hi.data(), rows.hi.size() * 8);
  }
  std::vector<uint64_t> offsets(n + 1, 0);
  for (size_t i = 0; i < n; ++i) offsets[i + 1] = offsets[i] + rows.names[i].size();
  section(offsets.data(), offsets.size() * 8);
  if (s.ok()) s = w.Begin();
  for (size_t i = 0; i < n && s.ok(); ++i) s = w.Write(rows.names[i].data(), rows.names[i].size());
  if (s.ok()) w.End(&sections);
  section(order.data(), n * 4);
  // The tables a few at a time, each group written before the next is built:
  // memory for kTablesAtOnce tables (6 bytes per row each) instead of all
  // of them (416 bytes per row at the default method's 64 bands).
  constexpr size_t kTablesAtOnce = 8;
  const std::span<const TableMask> masks(spec.masks);
  const bool probe = spec.kind == TablesKind::kProbe;
  for (size_t first = 0; first < masks.size() && s.ok(); first += kTablesAtOnce) {
    const auto group = masks.subspan(first, std::min(kTablesAtOnce, masks.size() - first));
    const std::vector<OwnedTable> tables =
        probe ? BuildProbeTables(group, spec.dir_bits, rows.lo, rows.hi)
              : BuildTables(group, spec.dir_bits, rows.lo, rows.hi, threads);
    for (const OwnedTable& t : tables) {
      section(t.dir.data(), t.dir.size() * 4);
      if (probe) {
        section(t.rows.data(), t.rows.size() * 4);
        section(t.words.data(), t.words.size() * 8);
      } else if (packed) {
        const std::vector<uint8_t> entries = PackEntries(t);
        section(entries.data(), entries.size());
      } else {
        section(t.rows.data(), t.rows.size() * 4);
        section(t.keys.data(), t.keys.size() * 2);
      }
    }
  }
  if (!s.ok()) return fail(s);
  s = w.Pad();
  if (!s.ok()) return fail(s);

  std::string m;
  Put32(&m, static_cast<uint32_t>(spec.kind));
  Put32(&m, static_cast<uint32_t>(spec.bits));
  Put32(&m, static_cast<uint32_t>(spec.max_k));
  Put32(&m, static_cast<uint32_t>(spec.dir_bits));
  Put64(&m, n);
  Put32(&m, static_cast<uint32_t>(spec.masks.size()));
  Put32(&m, static_cast<uint32_t>(spec.blocks));
  Put32(&m, static_cast<uint32_t>(spec.band_bits));
  Put32(&m, static_cast<uint32_t>(spec.radius));
  Put64(&m, spec.seed);
  PutF64(&m, spec.recall_at_k);
  PutF64(&m, spec.recall_at_k_minus_4);
  PutF64(&m, spec.estimated_query_us);
  PutF64(&m, spec.bytes_per_fingerprint);
  Put32(&m, meta.policy.exact ? 1 : 0);
  Put32(&m, meta.policy.max_bytes_per_fingerprint);
  PutF64(&m, meta.policy.recall);
  Put32(&m, static_cast<uint32_t>(kFixedSections +
                                  TableSections(meta.version, spec.kind) * masks.size()));
  Put32(&m, meta.policy.tables_only ? 1 : 0);
  for (const TableMask& mask : spec.masks) {
    Put64(&m, mask.hi);
    Put64(&m, mask.lo);
    Put32(&m, mask.radius);
    Put32(&m, 0);
  }
  m += sections;
  const uint64_t meta_offset = w.offset();
  XXH3_state_t* st = XXH3_createState();
  XXH3_64bits_reset(st);
  XXH3_64bits_update(st, head.data(), head.size());
  XXH3_64bits_update(st, m.data(), m.size());
  const uint64_t sum = XXH3_64bits_digest(st);
  XXH3_freeState(st);
  Put64(&m, meta_offset);
  Put64(&m, m.size() - 8);
  Put64(&m, sum);
  s = w.Write(m.data(), m.size());
  if (s.ok()) s = w.Flush();
  if (s.ok()) s = out->Sync();
  if (s.ok()) s = out->Close();
  if (!s.ok()) return fail(s);
  if (checksum != nullptr) *checksum = sum;
  return Status::OK();
}

Result<std::unique_ptr<IndexFileV2>> IndexFileV2::Open(std::shared_ptr<MappedFile> file,
                                                       const std::string& name) {
  const std::string_view b = file->bytes();
  const uint32_t version = IndexFileVersion(b);
  if (!IsMappedVersion(version)) return Bad(name, "not a version 2 or 3 index file");
  const bool packed = version == kIndexVersion3;
  if (b.size() < kHeaderBytes + kTrailerBytes) return Bad(name, "truncated");
  const char* tail = b.data() + b.size() - kTrailerBytes;
  const uint64_t meta_offset = Get64(tail);
  const uint64_t meta_length = Get64(tail + 8);
  const uint64_t sum = Get64(tail + 16);
  if (meta_offset < kHeaderBytes || meta_offset > b.size() - kTrailerBytes ||
      meta_length != b.size() - kTrailerBytes - meta_offset || meta_length < kFixedMetaBytes) {
    return Bad(name, "bad trailer (truncated or corrupt)");
  }
  XXH3_state_t* st = XXH3_createState();
  XXH3_64bits_reset(st);
  XXH3_64bits_update(st, b.data(), kHeaderBytes);
  XXH3_64bits_update(st, b.data() + meta_offset, meta_length);
  const uint64_t actual = XXH3_64bits_digest(st);
  XXH3_freeState(st);
  if (actual != sum) return Bad(name, "checksum mismatch in the metadata (corrupt)");
  if (Get32(b.data() + 12) != 0) return Bad(name, "flags must be 0");

  std::unique_ptr<IndexFileV2> f(new IndexFileV2());
  f->file_ = file;
  f->name_ = name;
  f->checksum_ = sum;
  f->meta_.version = version;
  const char* p = b.data() + meta_offset;
  TablesSpec& spec = f->meta_.spec;
  const uint32_t kind = Get32(p);
  spec.bits = static_cast<int>(Get32(p + 4));
  spec.max_k = static_cast<int>(Get32(p + 8));
  spec.dir_bits = static_cast<int>(Get32(p + 12));
  f->meta_.rows = Get64(p + 16);
  const uint32_t tables = Get32(p + 24);
  spec.blocks = static_cast<int>(Get32(p + 28));
  spec.band_bits = static_cast<int>(Get32(p + 32));
  spec.radius = static_cast<int>(Get32(p + 36));
  spec.seed = Get64(p + 40);
  spec.recall_at_k = GetF64(p + 48);
  spec.recall_at_k_minus_4 = GetF64(p + 56);
  spec.estimated_query_us = GetF64(p + 64);
  spec.bytes_per_fingerprint = GetF64(p + 72);
  f->meta_.policy.exact = Get32(p + 80) != 0;
  f->meta_.policy.max_bytes_per_fingerprint = Get32(p + 84);
  f->meta_.policy.recall = GetF64(p + 88);
  const uint32_t nsections = Get32(p + 96);
  // Reserved (0) before the scan kind: older files allow the scan.
  f->meta_.policy.tables_only = Get32(p + 100) == 1;
  if (kind < 1 || kind > 5) {
    return Status::NotSupported(name + ": unknown table kind " + std::to_string(kind));
  }
  spec.kind = static_cast<TablesKind>(kind);
  const bool probe = spec.kind == TablesKind::kProbe;
  const uint64_t per_table = TableSections(version, spec.kind);  // sections
  const bool no_tables = spec.kind == TablesKind::kScan || spec.kind == TablesKind::kFilter;
  const bool rows_packed = RowsPacked(version, spec.kind);
  if (spec.bits != 64 && spec.bits != 128) return Bad(name, "bits must be 64 or 128");
  if (spec.max_k < 0 || spec.max_k >= spec.bits) return Bad(name, "max_k out of range");
  if (spec.dir_bits < 0 || spec.dir_bits > 24) return Bad(name, "directory bits out of range");
  // The scans (kinds 3 and 4) have no tables; the others at least one.
  if (no_tables ? tables != 0 : (tables < 1 || tables > kMaxTables)) {
    return Bad(name, "table count out of range");
  }
  if (spec.kind == TablesKind::kFilter &&
      (spec.bits != 128 || spec.radius < 0 || spec.radius >= 64)) {
    return Bad(name, "filter threshold out of range");
  }
  if (f->meta_.rows > 0xfffffffeu) return Bad(name, "too many rows");
  if (nsections != kFixedSections + per_table * tables) {
    return Bad(name, "wrong number of sections");
  }
  if (meta_length != kFixedMetaBytes + tables * kMaskBytes + nsections * kSectionBytes) {
    return Bad(name, "metadata size mismatch");
  }
  const char* mp = p + kFixedMetaBytes;
  for (uint32_t t = 0; t < tables; ++t, mp += kMaskBytes) {
    TableMask m{Get64(mp), Get64(mp + 8), Get32(mp + 16)};
    if (m.radius > (probe ? 3u : 1u)) return Bad(name, "probe radius out of range");
    if (spec.bits == 64 && m.hi != 0) return Bad(name, "a mask beyond 64 bits");
    f->masks_.push_back(m);
  }
  spec.masks = f->masks_;
  if (probe && !IsProbeLayout(spec)) return Bad(name, "probe tables out of their layout");
  const uint64_t n = f->meta_.rows;
  const uint64_t slots = (uint64_t{1} << spec.dir_bits) + 1;
  for (uint32_t i = 0; i < nsections; ++i, mp += kSectionBytes) {
    Section sec{Get64(mp), Get64(mp + 8), Get64(mp + 16)};
    if (sec.offset % 8 != 0 || sec.offset > meta_offset || sec.length > meta_offset - sec.offset) {
      return Bad(name, "section " + std::to_string(i) + " out of bounds");
    }
    uint64_t want = 0;
    bool any = false;
    const uint64_t words = spec.bits == 128 ? 2 : 1;
    if (i >= kFixedSections) {
      // A table: directory, then rows and keys (version 2) or entries (3).
      const uint64_t part = (i - kFixedSections) % per_table;
      want = part == 0   ? slots * 4
             : probe     ? (part == 1 ? n * 4 : n * 8)  // rows, then the half words
             : packed    ? n * kPackedEntryBytes
             : part == 1 ? n * 4
                         : n * 2;
    } else if (i == 0) {
      want = n * 8;
    } else if (i == 1) {
      want = rows_packed ? n * words * 8 : n * 8;  // version 3: each row's words together
    } else if (i == 2) {
      want = !rows_packed && spec.bits == 128 ? n * 8 : 0;
    } else if (i == 3) {
      want = (n + 1) * 8;
    } else if (i == 4) {
      any = true;
    } else {
      want = n * 4;
    }
    if (!any && sec.length != want) {
      return Bad(name, "section " + std::to_string(i) + " has the wrong size");
    }
    f->sections_.push_back(sec);
  }
  const auto& s = f->sections_;
  f->ids_ = As<uint64_t>(b, s[0].offset, s[0].length);
  f->name_offsets_ = As<uint64_t>(b, s[3].offset, s[3].length);
  f->names_ = b.substr(s[4].offset, s[4].length);
  f->order_ = As<uint32_t>(b, s[5].offset, s[5].length);
  TablesView& v = f->view_;
  v.bits = spec.bits;
  v.dir_bits = spec.dir_bits;
  v.n = static_cast<size_t>(n);
  v.packed = rows_packed;
  v.lo_filter = spec.kind == TablesKind::kFilter ? spec.radius : -1;
  v.probe_threshold = probe ? spec.radius : -1;
  if (rows_packed) {
    v.words = As<uint64_t>(b, s[1].offset, s[1].length);
  } else {
    v.lo = As<uint64_t>(b, s[1].offset, s[1].length);
    v.hi = As<uint64_t>(b, s[2].offset, s[2].length);
  }
  v.masks = f->masks_;
  for (uint32_t t = 0; t < tables; ++t) {
    const size_t i = kFixedSections + per_table * t;
    TableView tv;
    tv.dir = As<uint32_t>(b, s[i].offset, s[i].length);
    if (probe) {
      tv.rows = As<uint32_t>(b, s[i + 1].offset, s[i + 1].length);
      tv.words = As<uint64_t>(b, s[i + 2].offset, s[i + 2].length);
    } else if (packed) {
      tv.entries = As<uint8_t>(b, s[i + 1].offset, s[i + 1].length);
    } else {
      tv.rows = As<uint32_t>(b, s[i + 1].offset, s[i + 1].length);
      tv.keys = As<uint16_t>(b, s[i + 2].offset, s[i + 2].length);
    }
    v.tables.push_back(tv);
  }
  return f;
}

std::optional<std::string_view> IndexFileV2::Name(size_t row) const {
  if (row + 1 >= name_offsets_.size()) return std::nullopt;
  const uint64_t begin = name_offsets_[row];
  const uint64_t end = name_offsets_[row + 1];
  if (begin > end || end > names_.size()) return std::nullopt;
  return names_.substr(begin, end - begin);
}

std::vector<uint32_t> IndexFileV2::FindName(std::string_view name) const {
  std::vector<uint32_t> out;
  const auto name_of = [&](uint32_t row) { return Name(row).value_or(std::string_view()); };
  auto it = std::lower_bound(order_.begin(), order_.end(), name,
                             [&](uint32_t row, std::string_view v) { return name_of(row) < v; });
  for (; it != order_.end() && name_of(*it) == name; ++it) {
    if (*it < rows()) out.push_back(*it);
  }
  return out;
}

std::optional<size_t> IndexFileV2::FindId(uint64_t id) const {
  auto it = std::lower_bound(ids_.begin(), ids_.end(), id);
  if (it == ids_.end() || *it != id) return std::nullopt;
  return static_cast<size_t>(it - ids_.begin());
}

Status IndexFileV2::Verify() const {
  const std::string_view b = file_->bytes();
  for (size_t i = 0; i < sections_.size(); ++i) {
    const Section& sec = sections_[i];
    if (XXH3_64bits(b.data() + sec.offset, sec.length) != sec.checksum) {
      return Bad(name_, "section " + std::to_string(i) + " checksum mismatch (corrupt)");
    }
  }
  // The padding between sections (to 64-byte boundaries) is zero, and the
  // sections follow one another: every byte of the file is checked.
  std::vector<Section> by_offset = sections_;
  std::sort(by_offset.begin(), by_offset.end(), [](const Section& x, const Section& y) {
    // An empty section shares its offset with the next one.
    return x.offset != y.offset ? x.offset < y.offset : x.length < y.length;
  });
  uint64_t at = kHeaderBytes;
  const uint64_t meta_offset = b.size() - kTrailerBytes - Get64(b.data() + b.size() - 16);
  for (size_t i = 0; i <= by_offset.size(); ++i) {
    const uint64_t next = i < by_offset.size() ? by_offset[i].offset : meta_offset;
    if (next < at) return Bad(name_, "sections overlap");
    for (uint64_t j = at; j < next; ++j) {
      if (b[j] != 0) return Bad(name_, "non-zero padding at offset " + std::to_string(j));
    }
    if (i < by_offset.size()) at = by_offset[i].offset + by_offset[i].length;
  }
  for (size_t i = 1; i < ids_.size(); ++i) {
    if (ids_[i - 1] >= ids_[i]) return Bad(name_, "numeric ids not ascending");
  }
  if (name_offsets_.empty() || name_offsets_[0] != 0) return Bad(name_, "bad name offsets");
  for (size_t i = 1; i < name_offsets_.size(); ++i) {
    if (name_offsets_[i - 1] > name_offsets_[i]) return Bad(name_, "name offsets not ascending");
  }
  if (name_offsets_.back() != names_.size()) return Bad(name_, "name offsets past the names");
  std::vector<bool> seen(rows(), false);
  for (size_t i = 0; i < order_.size(); ++i) {
    if (order_[i] >= rows() || seen[order_[i]]) return Bad(name_, "bad name order");
    seen[order_[i]] = true;
    if (i > 0 && *Name(order_[i - 1]) > *Name(order_[i])) return Bad(name_, "names not sorted");
  }
  for (const TableView& t : view_.tables) {
    if (t.dir.front() != 0 || t.dir.back() != rows()) return Bad(name_, "bad table directory");
    for (size_t i = 1; i < t.dir.size(); ++i) {
      if (t.dir[i - 1] > t.dir[i]) return Bad(name_, "table directory not ascending");
    }
    for (uint32_t r : t.rows) {
      if (r >= rows()) return Bad(name_, "a table row out of range");
    }
    for (size_t i = 0; i + kPackedEntryBytes <= t.entries.size(); i += kPackedEntryBytes) {
      uint32_t r;
      std::memcpy(&r, &t.entries[i], 4);
      if (r >= rows()) return Bad(name_, "a table row out of range");
    }
  }
  if (view_.probe_threshold >= 0) {
    // Each probe table's words are its rows' half words, in the buckets of
    // their keys.
    const uint64_t key_mask = (uint64_t{1} << view_.dir_bits) - 1;
    for (size_t g = 0; g < view_.tables.size(); ++g) {
      const TableView& t = view_.tables[g];
      const TableMask& m = view_.masks[g];
      const bool lo_half = m.lo != 0;
      const int shift = std::countr_zero(lo_half ? m.lo : m.hi);
      for (size_t key = 0; key + 1 < t.dir.size(); ++key) {
        for (uint32_t i = t.dir[key]; i < t.dir[key + 1]; ++i) {
          uint64_t x_hi = 0, x_lo = 0;
          if (!view_.RowFingerprint(t.rows[i], &x_hi, &x_lo)) {
            return Bad(name_, "a table row out of range");
          }
          const uint64_t half = lo_half ? x_lo : x_hi;
          if (t.words[i] != half || ((half >> shift) & key_mask) != key) {
            return Bad(name_, "a probe table's word does not match its row");
          }
        }
      }
    }
  }
  return Status::OK();
}

}  // namespace neardup::index_internal
