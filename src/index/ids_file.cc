// Copyright 2026 The neardup Authors.

#include "index/ids_file.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <thread>

#include "index/document_files.h"
#include "index/index_file.h"
#include "index/index_file_v2.h"
#include "util/file.h"

namespace neardup::index_internal {

using Json = nlohmann::ordered_json;

Status Bad(const std::string& file, uint64_t line, const std::string& why) {
  return Status::Corruption(file + ":" + std::to_string(line) + ": " + why);
}

// Type of a known member of the pipeline header; unknown members are kept
// and not checked (a newer writer may add some).
enum class Kind { kString, kBool, kInt, kStringArray };
struct Member {
  const char* name;
  Kind kind;
};
constexpr Member kPipelineMembers[] = {
    {"method", Kind::kString},  {"normalize", Kind::kString},
    {"t2s", Kind::kBool},       {"user_dicts", Kind::kStringArray},
    {"idf", Kind::kString},     {"no_hmm", Kind::kBool},
    {"bits", Kind::kInt},       {"features", Kind::kString},
    {"weights", Kind::kString}, {"topk", Kind::kInt},
    {"hash", Kind::kString},
};

// "" when `pipeline` is an object whose known members have the right types.
std::string CheckPipeline(const Json& pipeline) {
  if (!pipeline.is_object()) return "\"pipeline\" is not a JSON object";
  for (const Member& m : kPipelineMembers) {
    auto it = pipeline.find(m.name);
    if (it == pipeline.end()) continue;
    bool good = false;
    const char* want = "";
    switch (m.kind) {
      case Kind::kString:
        good = it->is_string();
        want = "a string";
        break;
      case Kind::kBool:
        good = it->is_boolean();
        want = "true or false";
        break;
      case Kind::kInt:
        good = it->is_number_integer();
        want = "an integer";
        break;
      case Kind::kStringArray:
        good = it->is_array() &&
               std::all_of(it->begin(), it->end(), [](const Json& e) { return e.is_string(); });
        want = "an array of strings";
        break;
    }
    if (!good) return "pipeline." + std::string(m.name) + " must be " + want;
  }
  auto bits = pipeline.find("bits");
  if (bits != pipeline.end() && *bits != 64 && *bits != 128) {
    return "pipeline.bits must be 64 or 128, not " + bits->dump();
  }
  return "";
}

Result<IdsHeader> ParseIdsHeader(std::string_view line, const std::string& file) {
  Json j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Bad(file, 1, "malformed JSON");
  if (!j.is_object()) return Bad(file, 1, "not a neardup ids file (the header is not an object)");
  auto version = j.find("neardup_index_ids");
  if (version == j.end() || !version->is_number_integer()) {
    return Bad(file, 1, "not a neardup ids file (no \"neardup_index_ids\" version)");
  }
  if (*version < kOldestIdsFormatVersion || *version > kIdsFormatVersion) {
    return Status::NotSupported(file + ":1: unsupported ids file version " + version->dump() +
                                " (this build reads versions " +
                                std::to_string(kOldestIdsFormatVersion) + " to " +
                                std::to_string(kIdsFormatVersion) + ")");
  }
  const bool v1 = *version == 1;
  IdsHeader h;
  if (auto it = j.find("pipeline"); it != j.end()) {
    const std::string why = CheckPipeline(*it);
    if (!why.empty()) return Bad(file, 1, why);
    h.pipeline = *it;
  }
  if (auto it = j.find("fingerprints_input"); it != j.end()) {
    if (!it->is_boolean()) return Bad(file, 1, "fingerprints_input must be true or false");
    h.fingerprints_input = it->get<bool>();
  }
  if (v1) return h;  // index_checksum and lines did not exist: ignored
  if (!j.contains("index_checksum") || !j.contains("lines")) {
    return Bad(file, 1, "a version 2 header needs index_checksum and lines");
  }
  if (auto it = j.find("index_checksum"); it != j.end()) {
    const std::string* s = it->get_ptr<const std::string*>();
    if (s == nullptr || s->size() != 16 ||
        s->find_first_not_of("0123456789abcdef") != std::string::npos) {
      return Bad(file, 1, "index_checksum must be 16 lowercase hexadecimal digits");
    }
    h.index_checksum = std::stoull(*s, nullptr, 16);
  }
  if (auto it = j.find("lines"); it != j.end()) {
    if (!it->is_number_unsigned()) return Bad(file, 1, "lines must be a non-negative integer");
    h.lines = it->get<uint64_t>();
  }
  if (auto it = j.find("attachment"); it != j.end()) {
    const std::string* hex = it->get_ptr<const std::string*>();
    std::optional<std::string> bytes;
    if (hex != nullptr) bytes = BytesOfHex(*hex);
    if (!bytes) {
      return Bad(file, 1, "attachment must be a string of lowercase hexadecimal digit pairs");
    }
    h.attachment = std::move(*bytes);
  }
  if (auto it = j.find("added"); it != j.end()) h.added = *it;
  return h;
}

namespace {

std::string_view FirstLine(std::string_view text) {
  const size_t nl = text.find('\n');
  return nl == std::string_view::npos ? text : text.substr(0, nl);
}

// The first line of a file, with its newline (a version 2 index's ids file:
// only its header is read). Same errors as file::ReadWholeFile.
Result<std::string> ReadFirstLine(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    if (errno == ENOENT) return Status::NotFound(path + ": no such file");
    return Status::IOError(path + ": " + std::strerror(errno));
  }
  std::string line;
  char buf[65536];
  // A header is a few hundred bytes; a method with many data files, a few
  // kilobytes. 64 MiB bounds a hostile file.
  while (line.size() < (size_t{64} << 20)) {
    const size_t got = std::fread(buf, 1, sizeof(buf), f);
    if (got == 0) break;
    const char* nl = static_cast<const char*>(std::memchr(buf, '\n', got));
    if (nl != nullptr) {
      line.append(buf, static_cast<size_t>(nl - buf) + 1);
      break;
    }
    line.append(buf, got);
  }
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) return Status::IOError(path + ": read error");
  return line;
}

}  // namespace

FileId IdOf(const std::string& path) {
  struct stat st;
  FileId id;
  if (::stat(path.c_str(), &st) != 0) return id;
  id.exists = true;
  id.inode = st.st_ino;
  id.size = st.st_size;
  id.mtime_ns = int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec;
  return id;
}

// Reads PATH and the ids file that belongs to it (see "Reading" in
// doc/index_format.md).
Result<RawPair> ReadCommittedPair(const std::string& path, bool preload) {
  const std::string ids_path = IdsPath(path);
  Status last;
  for (int attempt = 0; attempt < kOpenAttempts; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(kRetryDelay);
    RawPair p;
    const FileId index_id = IdOf(path);
    auto index_file = index_internal::MappedFile::Open(path, preload);
    if (!index_file.ok()) {
      if (index_file.status().IsNotFound()) return Status::NotFound(path + ": no such index");
      return index_file.status();
    }
    p.index_file = std::move(*index_file);
    p.index_bytes = p.index_file->bytes();
    const uint64_t checksum = index_internal::StoredChecksum(p.index_bytes);
    const bool header_only =
        index_internal::IsMappedVersion(index_internal::IndexFileVersion(p.index_bytes));
    const auto read_ids = [&](const std::string& file) {
      return header_only ? ReadFirstLine(file) : file::ReadWholeFile(file);
    };

    const FileId ids_id = IdOf(ids_path);
    auto ids_text = read_ids(ids_path);
    std::optional<IdsHeader> ids_header;
    if (ids_text.ok()) {
      NEARDUP_ASSIGN_OR_RETURN(auto h, ParseIdsHeader(FirstLine(*ids_text), ids_path));
      ids_header = std::move(h);
      if (ids_header->index_checksum == checksum) {
        p.ids_text = std::move(*ids_text);
        p.ids_file = ids_path;
        p.header = std::move(*ids_header);
        return p;
      }
    } else if (!ids_text.status().IsNotFound()) {
      return ids_text.status();
    }

    // The commit may have stopped between its two renames: the ids file
    // written for this index file waits under its checksum.
    const std::string pending = PendingIdsPath(path, checksum);
    auto pending_text = read_ids(pending);
    if (pending_text.ok()) {
      auto h = ParseIdsHeader(FirstLine(*pending_text), pending);
      if (h.ok() && h->index_checksum == checksum) {
        p.ids_text = std::move(*pending_text);
        p.ids_file = pending;
        p.from_pending = true;
        p.header = std::move(*h);
        return p;
      }
    }

    // Neither name changed since it was read: what was read is what is there.
    const bool unchanged = IdOf(path) == index_id && IdOf(ids_path) == ids_id;
    if (ids_header && !ids_header->index_checksum) {
      // Version 1, without a checksum: trusted if it is still the file read
      // (else a writer committed a version 2 pair meanwhile).
      if (unchanged) {
        p.ids_text = std::move(*ids_text);
        p.ids_file = ids_path;
        p.header = std::move(*ids_header);
        return p;
      }
      last = Status::Corruption(ids_path + ": replaced while being read");
    } else if (!ids_header) {
      // read_ids found no file (any other failure was returned above); the
      // reason is its status's, after the path.
      const std::string why = ids_text.status().message();
      const std::string reason =
          why.rfind(ids_path + ": ", 0) == 0 ? why.substr(ids_path.size() + 2) : why;
      last = Status::NotFound(ids_path + ": cannot open the ids file beside the index: " + reason +
                              " (nor is there " + pending + ", a commit's pending ids file)");
    } else {
      last = Status::Corruption(ids_path + ": written for another version of " + path +
                                " (index_checksum " + Hex64(*ids_header->index_checksum) +
                                ", the index file's is " + Hex64(checksum) + ") and no " + pending +
                                " exists");
    }
    if (unchanged) break;  // not a race with a writer: report it
  }
  return last;
}

Status ParseIds(const RawPair& raw, const HammingIndex& index,
                std::vector<std::optional<std::string>>* names) {
  const std::string& file = raw.ids_file;
  std::string_view text = raw.ids_text;
  uint64_t line_no = 1;
  size_t pos = text.find('\n');
  pos = pos == std::string_view::npos ? text.size() : pos + 1;
  while (pos < text.size()) {
    ++line_no;
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) {
      if (raw.header.index_checksum) return Bad(file, line_no, "truncated (no final newline)");
      end = text.size();
    }
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    Json j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return Bad(file, line_no, "malformed JSON");
    if (j.is_string()) {
      names->push_back(j.get<std::string>());
    } else if (j.is_null()) {
      names->push_back(std::nullopt);
    } else {
      return Bad(file, line_no, "expected a JSON string (a document id) or null");
    }
  }
  if (raw.header.lines && *raw.header.lines != names->size()) {
    return Bad(file, 1,
               "header says " + std::to_string(*raw.header.lines) + " id lines, the file has " +
                   std::to_string(names->size()) + " (truncated or corrupt)");
  }
  const std::vector<IndexEntry> entries = index.Entries();
  std::vector<bool> seen(names->size(), false);
  for (const IndexEntry& e : entries) {
    if (e.id >= names->size()) {
      return Status::Corruption(file + ": the index holds numeric id " + std::to_string(e.id) +
                                ", which has no line in the ids file (" +
                                std::to_string(names->size()) + " lines)");
    }
    if (!(*names)[e.id]) {
      return Bad(file, e.id + 2,
                 "null, but numeric id " + std::to_string(e.id) + " is in the index");
    }
    if (seen[e.id]) {
      return Status::Corruption(file + ": numeric id " + std::to_string(e.id) +
                                " appears twice in the index");
    }
    seen[e.id] = true;
  }
  // A line whose entry is gone (an older writer's removal) counts as removed.
  for (size_t n = 0; n < names->size(); ++n) {
    if (!seen[n]) (*names)[n] = std::nullopt;
  }
  return Status::OK();
}

}  // namespace neardup::index_internal
