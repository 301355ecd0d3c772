// Copyright 2026 The neardup Authors.
//
// neardup-mpi's inputs (inputs.h).

#include "inputs.h"

#include <mpi.h>
#include <sys/stat.h>
#include <xxhash.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <bit>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <new>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <random>
#include <sstream>
#include <system_error>
#include <tuple>

#include "common.h"
#include "neardup/compression.h"

namespace neardup::mpi {
namespace {

namespace fs = std::filesystem;

// True for a file that can be read in byte ranges: a regular file named
// *.jsonl or *.ndjson (format auto or jsonl) that is not compressed (gzip,
// zstd, xz, bzip2: DetectCompression, as the reader decides).
bool Splittable(const std::string& path, const std::string& format) {
  if (format != "auto" && format != "jsonl" && format != "lines") return false;
  std::string name = fs::path(path).filename().string();
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (format == "auto" && !name.ends_with(".jsonl") && !name.ends_with(".ndjson")) return false;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return false;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  char head[8] = {};
  const size_t n = std::fread(head, 1, sizeof head, f);
  std::fclose(f);
  // The reader's own detector: whatever it decompresses is read whole.
  return DetectCompression(std::string_view(head, n)).empty();
}

// The first line start at or after `at` (the byte after the first '\n' at or
// after at - 1); `size` when there is none.
uint64_t LineStartFrom(std::FILE* f, uint64_t at, uint64_t size) {
  if (at == 0) return 0;
  if (std::fseek(f, static_cast<long>(at - 1), SEEK_SET) != 0) return size;
  std::string buffer(1u << 16, '\0');
  uint64_t pos = at - 1;
  size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), f)) > 0) {
    const void* nl = std::memchr(buffer.data(), '\n', n);
    if (nl != nullptr) {
      return pos + static_cast<uint64_t>(static_cast<const char*>(nl) - buffer.data()) + 1;
    }
    pos += n;
  }
  return size;
}

// XXH3-64 of the bytes of unit `x` of `path` (a directory: its regular
// files' relative names and bytes, in name order); 0 when it cannot be read.
uint64_t UnitDigest(const std::string& path, const Unit& x) {
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  std::string buffer(1u << 20, '\0');
  bool ok = true;
  const auto add = [&](const std::string& file, uint64_t begin, uint64_t end) {
    std::FILE* f = std::fopen(file.c_str(), "rb");
    if (f == nullptr || std::fseek(f, static_cast<long>(begin), SEEK_SET) != 0) {
      if (f != nullptr) std::fclose(f);
      ok = false;
      return;
    }
    uint64_t left = end - begin;
    size_t n = 0;
    while (left > 0 &&
           (n = std::fread(buffer.data(), 1, std::min<uint64_t>(left, buffer.size()), f)) > 0) {
      XXH3_64bits_update(state, buffer.data(), n);
      left -= n;
    }
    if (std::ferror(f)) ok = false;
    std::fclose(f);
  };
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    std::vector<std::string> files;
    for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
      if (it->is_regular_file(ec)) files.push_back(fs::relative(it->path(), path, ec).string());
    }
    std::sort(files.begin(), files.end());
    for (const std::string& name : files) {
      XXH3_64bits_update(state, name.data(), name.size() + 1);
      add((fs::path(path) / name).string(), 0, UINT64_MAX);
    }
  } else {
    add(path, x.begin, x.end);
  }
  const uint64_t digest = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  if (!ok) return 0;
  return digest == 0 ? 1 : digest;
}

std::string UtcTime(int64_t ns) {
  const std::time_t t = static_cast<std::time_t>(ns / 1000000000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return text;
}

}  // namespace

InputStat StatInput(const std::string& path) {
  InputStat s;
  const auto add = [&](const fs::path& file, std::error_code& ec) {
    struct stat st;
    if (::stat(file.c_str(), &st) != 0) {
      ec = std::error_code(errno, std::generic_category());
      return;
    }
    s.size += static_cast<uint64_t>(st.st_size);
    ++s.files;
    s.mtime_ns = std::max<int64_t>(
        s.mtime_ns, int64_t{st.st_mtim.tv_sec} * 1000000000 + int64_t{st.st_mtim.tv_nsec});
  };
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) {
    s.error = ec ? ec.message() : "no such file or directory";
    return s;
  }
  s.found = true;
  if (fs::is_directory(st)) {
    s.directory = true;
    for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
      std::error_code file_ec;
      if (it->is_regular_file(file_ec)) add(it->path(), file_ec);
    }
  } else {
    add(path, ec);
  }
  if (ec) {
    s.found = false;
    s.error = ec.message();
  }
  return s;
}

void CutInputs(const World& w, const cli::InputFlags& input, const std::vector<uint64_t>& sizes,
               std::vector<Unit>* units, std::vector<uint64_t>* cut) {
  const std::vector<std::string>& inputs = input.inputs;
  std::vector<uint64_t> words;
  cut->assign(static_cast<size_t>(w.size) + 1, 0);
  if (w.rank == 0) {
    std::vector<double> weight(inputs.size(), 1);
    double total = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
      weight[i] += static_cast<double>(sizes[i]);
      total += weight[i];
    }
    const double share = total / w.size;
    std::vector<double> unit_weight;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const auto pieces = static_cast<uint64_t>(std::ceil(weight[i] / share - 1e-9));
      std::FILE* f = nullptr;
      if (w.size > 1 && pieces > 1 && Splittable(inputs[i], input.format)) {
        f = std::fopen(inputs[i].c_str(), "rb");
      }
      if (f == nullptr) {
        units->push_back({i, 0, UINT64_MAX, 1, 0, 1});
        unit_weight.push_back(weight[i]);
        continue;
      }
      const auto size = static_cast<uint64_t>(weight[i] - 1);
      std::vector<uint64_t> starts = {0};
      for (uint64_t j = 1; j < pieces; ++j) {
        const uint64_t at = LineStartFrom(f, size * j / pieces, size);
        if (at > starts.back() && at < size) starts.push_back(at);
      }
      std::fclose(f);
      starts.push_back(size);
      for (size_t j = 0; j + 1 < starts.size(); ++j) {
        units->push_back({i, starts[j], starts[j + 1], 1, j, starts.size() - 1});
        unit_weight.push_back(static_cast<double>(starts[j + 1] - starts[j]) + 1);
      }
    }
    double sum = 0;
    size_t u = 0;
    for (int r = 1; r < w.size; ++r) {
      const double target = total * r / w.size;
      while (u < units->size() && sum + unit_weight[u] / 2 < target) sum += unit_weight[u++];
      (*cut)[static_cast<size_t>(r)] = u;
    }
    (*cut)[static_cast<size_t>(w.size)] = units->size();
    for (const Unit& x : *units) {
      words.insert(words.end(), {x.input, x.begin, x.end, x.first_line, x.piece, x.pieces});
    }
  }
  BroadcastU64s(w, cut, 0);
  std::vector<uint64_t> count = {words.size()};
  BroadcastU64s(w, &count, 0);
  words.resize(count[0]);
  BroadcastU64s(w, &words, 0);
  units->clear();
  for (size_t k = 0; k + 6 <= words.size(); k += 6) {
    units->push_back(
        {words[k], words[k + 1], words[k + 2], words[k + 3], words[k + 4], words[k + 5]});
  }
}

Status AgreeOnInputs(const World& w, const std::vector<std::string>& inputs,
                     const std::vector<uint64_t>& cut, const std::vector<Unit>& units,
                     std::vector<uint64_t>* digests) {
  std::vector<uint64_t> own(units.size(), 0), check(units.size(), 0);
  const auto range = [&](int r) {
    return std::pair<size_t, size_t>(cut[static_cast<size_t>(r)], cut[static_cast<size_t>(r) + 1]);
  };
  const auto [own_begin, own_end] = range(w.rank);
  for (size_t u = own_begin; u < own_end; ++u)
    own[u] = UnitDigest(inputs[units[u].input], units[u]);
  if (w.size > 1) {
    const auto [begin, end] = range((w.rank + 1) % w.size);
    for (size_t u = begin; u < end; ++u) check[u] = UnitDigest(inputs[units[u].input], units[u]);
  }
  AllReduceSum(w, &own);
  AllReduceSum(w, &check);
  *digests = own;
  const int checker = (w.rank + w.size - 1) % w.size;
  for (size_t u = own_begin; u < own_end; ++u) {
    const Unit& x = units[u];
    const std::string name = inputs[x.input];
    if (own[u] == 0) {
      return Status::IOError(name +
                             ": cannot read it on this rank (every rank must see the same "
                             "files)");
    }
    if (w.size == 1 || own[u] == check[u]) continue;
    const std::string where =
        x.pieces > 1 ? " (bytes " + std::to_string(x.begin) + ".." + std::to_string(x.end) + ")"
                     : "";
    return Status::IOError(name + where + ": rank " + std::to_string(w.rank) +
                           " read other bytes than rank " + std::to_string(checker) +
                           (check[u] == 0 ? ", which cannot read it" : "") +
                           ": every rank must see the same files");
  }
  return Status::OK();
}

Status NumberLines(const World& w, const std::vector<std::string>& inputs,
                   const std::vector<uint64_t>& cut, std::vector<Unit>* units) {
  std::vector<uint64_t> breaks(units->size(), 0);
  Status status = Status::OK();
  for (size_t u = cut[static_cast<size_t>(w.rank)]; u < cut[static_cast<size_t>(w.rank) + 1]; ++u) {
    const Unit& x = (*units)[u];
    if (x.pieces == 1 || x.piece + 1 == x.pieces) continue;  // no later piece needs it
    std::FILE* f = std::fopen(inputs[x.input].c_str(), "rb");
    if (f == nullptr || std::fseek(f, static_cast<long>(x.begin), SEEK_SET) != 0) {
      status = Status::IOError(inputs[x.input] +
                               ": cannot read to count its lines: " + std::strerror(errno));
      if (f != nullptr) std::fclose(f);
      continue;
    }
    std::string buffer(1u << 20, '\0');
    uint64_t left = x.end - x.begin;
    size_t n = 0;
    while (left > 0 &&
           (n = std::fread(buffer.data(), 1, std::min<uint64_t>(left, buffer.size()), f)) > 0) {
      breaks[u] += static_cast<uint64_t>(std::count(buffer.data(), buffer.data() + n, '\n'));
      left -= n;
    }
    std::fclose(f);
  }
  AllReduceSum(w, &breaks);  // collective whatever happened here
  for (size_t u = 1; u < units->size(); ++u) {
    Unit& x = (*units)[u];
    if (x.piece > 0) x.first_line = (*units)[u - 1].first_line + breaks[u - 1];
  }
  return status;
}

nlohmann::json InputsIdentity(const std::vector<std::string>& inputs,
                              const std::vector<InputStat>& stats, const std::vector<Unit>& units,
                              const std::vector<uint64_t>& digests) {
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = 0; i < inputs.size(); ++i) {
    out.push_back({{"input", inputs[i]},
                   {"size", stats[i].size},
                   {"files", stats[i].files},
                   {"mtime_ns", stats[i].mtime_ns},
                   {"units", nlohmann::json::array()}});
  }
  for (size_t u = 0; u < units.size(); ++u) {
    out[units[u].input]["units"].push_back({units[u].begin, units[u].end, digests[u]});
  }
  return out;
}

uint64_t RangeDigestOf(const std::string& path, uint64_t begin, uint64_t end) {
  Unit x;
  x.begin = begin;
  x.end = end;
  return UnitDigest(path, x);
}

std::vector<std::string> ChangedInputs(const nlohmann::json& earlier, const nlohmann::json& now,
                                       const RangeDigest& digest_of,
                                       std::vector<std::string>* touched) {
  std::vector<std::string> changed;
  if (!earlier.is_array() || earlier.size() != now.size()) return {"the list of inputs"};
  for (size_t i = 0; i < now.size(); ++i) {
    const nlohmann::json& a = earlier[i];
    const nlohmann::json& b = now[i];
    const std::string name = b["input"].get<std::string>();
    std::string why;
    const uint64_t size_a = a.value("size", uint64_t{0}), size_b = b["size"];
    const uint64_t files_a = a.value("files", uint64_t{0}), files_b = b["files"];
    if (size_a != size_b) {
      why = std::to_string(size_a) + " bytes then, " + std::to_string(size_b) + " now";
    } else if (files_a != files_b) {
      why = std::to_string(files_a) + " files then, " + std::to_string(files_b) + " now";
    } else {
      // Every unit of the earlier run, against the same range now or, where
      // the pieces were cut otherwise (another rank count), read again.
      const nlohmann::json ua = a.value("units", nlohmann::json::array()), ub = b["units"];
      bool differs = ua.empty();
      for (size_t k = 0; k < ua.size() && !differs; ++k) {
        if (!ua[k].is_array() || ua[k].size() != 3) {
          differs = true;
          break;
        }
        const uint64_t begin = ua[k][0], end = ua[k][1], digest = ua[k][2];
        bool found = false;
        for (const nlohmann::json& u : ub) {
          if (u[0] == begin && u[1] == end) {
            found = true;
            differs = u[2] != digest;
            break;
          }
        }
        if (!found) differs = digest_of(i, begin, end) != digest;
      }
      if (differs) why = "same size, other bytes";
    }
    const int64_t mtime_a = a.value("mtime_ns", int64_t{0}), mtime_b = b["mtime_ns"];
    if (!why.empty()) {
      changed.push_back(name + " (" + why + "; modified " + UtcTime(mtime_b) + ")");
    } else if (mtime_a != mtime_b) {
      touched->push_back(name);
    }
  }
  return changed;
}

ReadOptions UnitReadOptions(const ReadOptions& base, const Unit& unit) {
  ReadOptions options = base;
  if (unit.pieces > 1) {
    options.range_begin = unit.begin;
    options.range_end = unit.end;
    options.range_first_line = unit.first_line;
  }
  return options;
}

}  // namespace neardup::mpi
