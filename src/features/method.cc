// Copyright 2026 The neardup Authors.

#include "neardup/method.h"

#include <xxhash.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "neardup/options.h"
#include "neardup/presets.h"

namespace neardup {
namespace {

namespace fs = std::filesystem;

bool UsesIdf(WeightScheme w) {
  return w == WeightScheme::kTfidf || w == WeightScheme::kImproved || w == WeightScheme::kEntropy;
}

std::string Encode(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == ',' || c == '=' || c == '%') {
      char buf[4];
      std::snprintf(buf, sizeof(buf), "%%%02X", static_cast<unsigned char>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

Result<std::string> Decode(std::string_view value) {
  std::string out;
  for (size_t i = 0; i < value.size(); ++i) {
    if (value[i] != '%') {
      out += value[i];
      continue;
    }
    unsigned byte = 0;
    if (i + 2 >= value.size()) {
      return Status::InvalidArgument("truncated %-escape in '" + std::string(value) + "'");
    }
    const auto r = std::from_chars(value.data() + i + 1, value.data() + i + 3, byte, 16);
    if (r.ec != std::errc() || r.ptr != value.data() + i + 3) {
      return Status::InvalidArgument("bad %-escape in '" + std::string(value) + "'");
    }
    out += static_cast<char>(byte);
    i += 2;
  }
  return out;
}

Result<int> ParseInt(std::string_view key, std::string_view value) {
  int v = 0;
  const auto r = std::from_chars(value.data(), value.data() + value.size(), v);
  if (r.ec != std::errc() || r.ptr != value.data() + value.size()) {
    return Status::InvalidArgument("method key " + std::string(key) + ": '" + std::string(value) +
                                   "' is not a whole number");
  }
  return v;
}

Result<double> ParseDouble(std::string_view key, std::string_view value) {
  double v = 0;
  const auto r = std::from_chars(value.data(), value.data() + value.size(), v);
  if (r.ec != std::errc() || r.ptr != value.data() + value.size() || !std::isfinite(v)) {
    return Status::InvalidArgument("method key " + std::string(key) + ": '" + std::string(value) +
                                   "' is not a finite number");
  }
  return v;
}

// Shortest text that reads back as the same double.
std::string FormatDouble(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, r.ptr);
}

// The method's keys and values in canonical order.
std::vector<std::pair<std::string, std::string>> Items(const Method& m) {
  const PipelineOptions& p = m.pipeline;
  std::vector<std::pair<std::string, std::string>> items = {
      {"normalize", NormalizeListName(p.normalize)},
      {"features", FeatureKindName(p.features)},
      {"weights", std::string(WeightSchemeName(p.features.weights))},
      {"topk", std::to_string(p.features.top_k)},
  };
  if (!m.is_minhash()) items.emplace_back("bits", std::to_string(p.bits));
  items.emplace_back("hash", p.hash == FeatureHashAlgorithm::kMd5 ? "md5" : "xxh3");
  if (!m.is_minhash()) {
    items.emplace_back("entropy_threshold", FormatDouble(p.features.entropy_threshold));
  }
  items.emplace_back("hmm", p.segmenter.hmm ? "1" : "0");
  if (!p.idf_path.empty()) items.emplace_back("idf", p.idf_path);
  for (const std::string& d : p.segmenter.user_dicts) items.emplace_back("user_dict", d);
  if (!p.marker_words_path.empty()) items.emplace_back("marker_words", p.marker_words_path);
  // Only when on, so that the text form of every existing method stays as it was.
  if (p.boilerplate.mode != BoilerplateMode::kOff) {
    items.emplace_back("boilerplate", BoilerplateModeName(p.boilerplate.mode));
    items.emplace_back("boilerplate_min_docs", std::to_string(p.boilerplate.min_docs));
  }
  if (m.is_minhash()) {
    const MinHashOptions& h = m.minhash;
    items.emplace_back("num_perm", std::to_string(h.num_perm));
    items.emplace_back("bands", std::to_string(h.bands));
    items.emplace_back("rows", std::to_string(h.rows));
    items.emplace_back("threshold", FormatDouble(h.threshold));
    items.emplace_back("verify", h.exact ? "exact" : "estimate");
  } else {
    items.emplace_back("k", std::to_string(m.default_k));
  }
  for (const auto& [key, digest] : m.digests) items.emplace_back(key + "_digest", digest);
  return items;
}

bool IsSimHashKey(std::string_view key) {
  return key == "bits" || key == "k" || key == "entropy_threshold";
}

bool IsMinHashKey(std::string_view key) {
  return key == "num_perm" || key == "bands" || key == "rows" || key == "threshold" ||
         key == "recall" || key == "verify";
}

// The default LSH layout for (threshold, num_perm): as SimHash's banded join,
// the least candidates that find a pair at the threshold with probability
// kDefaultMinHashRecall; datasketch's balance (OptimalBandsRows) where
// num_perm cannot reach it.
BandsRows DefaultBandsRows(double threshold, int num_perm) {
  auto br = BandsRowsForRecall(threshold, num_perm, kDefaultMinHashRecall);
  return br.ok() ? *br : OptimalBandsRows(threshold, num_perm);
}

// The minhash method's defaults: character 3-grams (the set the evaluation
// measured, doc/evaluation.md), 128 permutations, threshold 0.5.
Method MinHashDefault() {
  Method m;
  m.name = std::string(kMinHashMethod);
  m.kind = MethodKind::kMinHash;
  m.pipeline.features = {
      .kind = FeatureKind::kCharNgrams, .ngram = 3, .weights = WeightScheme::kUniform, .top_k = 0};
  const BandsRows br = DefaultBandsRows(m.minhash.threshold, m.minhash.num_perm);
  m.minhash.bands = br.bands;
  m.minhash.rows = br.rows;
  return m;
}

}  // namespace

Result<std::string> FileDigest(const std::string& path) {
  // Only a regular file has a digest: a FIFO would block, a device never end.
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (!ec && !fs::is_regular_file(status)) {
    return Status::InvalidArgument(path + ": not a regular file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(path + ": " + std::strerror(errno));
  XXH3_state_t* state = XXH3_createState();
  if (state == nullptr) return Status::ResourceExhausted("XXH3_createState failed");
  XXH3_64bits_reset(state);
  char buf[1 << 16];
  while (in) {
    in.read(buf, sizeof(buf));
    XXH3_64bits_update(state, buf, static_cast<size_t>(in.gcount()));
  }
  const bool failed = in.bad();
  const XXH64_hash_t h = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  if (failed) return Status::IOError(path + ": read failed");
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(h));
  return std::string(hex);
}

Method Method::Default() { return *FromPreset(kDefaultMethod); }

Result<Method> Method::FromPreset(std::string_view name) {
  if (name == kMinHashMethod) return MinHashDefault();
  NEARDUP_ASSIGN_OR_RETURN(auto preset, FindPreset(name));
  Method m;
  m.name = preset.name;
  m.pipeline = preset.pipeline;
  m.default_k = preset.default_k;
  return m;
}

bool Method::uses_idf() const { return UsesIdf(pipeline.features.weights); }

Result<Method> Method::Parse(std::string_view text) { return Parse(text, {}); }

Result<Method> Method::Parse(std::string_view text,
                             const std::vector<std::pair<std::string, std::string>>& more) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string_view::npos) end = text.size();
    parts.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  const std::string_view name = parts.empty() ? std::string_view() : parts[0];
  NEARDUP_ASSIGN_OR_RETURN(auto base, FromPreset(name.empty() ? kDefaultMethod : name));
  Method m = std::move(base);
  const Method preset = m;
  PipelineOptions& p = m.pipeline;
  bool topk_given = false, k_given = false, weights_given = false, bits_given = false;
  bool perm_given = false, threshold_given = false, bands_given = false, rows_given = false;
  double recall = 0;
  std::vector<std::pair<std::string, std::string>> settings;
  for (size_t i = 1; i < parts.size(); ++i) {
    const std::string_view part = parts[i];
    const size_t eq = part.find('=');
    if (eq == std::string_view::npos) {
      return Status::InvalidArgument("method '" + std::string(text) + "': '" + std::string(part) +
                                     "' is not key=value");
    }
    NEARDUP_ASSIGN_OR_RETURN(auto value, Decode(part.substr(eq + 1)));
    settings.emplace_back(std::string(part.substr(0, eq)), std::move(value));
  }
  settings.insert(settings.end(), more.begin(), more.end());
  for (const auto& [key, v] : settings) {
    if (m.is_minhash() && IsSimHashKey(key)) {
      return Status::InvalidArgument("method key " + key +
                                     " does not apply to minhash (it has num_perm, bands, rows, "
                                     "threshold, recall, verify)");
    }
    if (!m.is_minhash() && IsMinHashKey(key)) {
      return Status::InvalidArgument("method key " + key + " applies to minhash only, not to " +
                                     m.name);
    }
    if (key == "num_perm") {
      NEARDUP_ASSIGN_OR_RETURN(auto n, ParseInt(key, v));
      m.minhash.num_perm = n;
      perm_given = true;
    } else if (key == "bands") {
      NEARDUP_ASSIGN_OR_RETURN(auto n, ParseInt(key, v));
      m.minhash.bands = n;
      bands_given = true;
    } else if (key == "rows") {
      NEARDUP_ASSIGN_OR_RETURN(auto n, ParseInt(key, v));
      m.minhash.rows = n;
      rows_given = true;
    } else if (key == "threshold") {
      NEARDUP_ASSIGN_OR_RETURN(auto d, ParseDouble(key, v));
      m.minhash.threshold = d;
      threshold_given = true;
    } else if (key == "recall") {
      NEARDUP_ASSIGN_OR_RETURN(auto d, ParseDouble(key, v));
      if (!(d > 0 && d < 1)) {
        return Status::InvalidArgument("method key recall: must be in (0, 1), got '" + v + "'");
      }
      recall = d;
    } else if (key == "verify") {
      if (v != "estimate" && v != "exact") {
        return Status::InvalidArgument("method key verify: '" + v +
                                       "' (expected estimate or exact)");
      }
      m.minhash.exact = v == "exact";
    } else if (key == "normalize") {
      NEARDUP_ASSIGN_OR_RETURN(p.normalize, ParseNormalizeList(v));
    } else if (key == "features") {
      NEARDUP_RETURN_IF_ERROR(ParseFeatureKind(v, &p.features));
    } else if (key == "weights") {
      NEARDUP_ASSIGN_OR_RETURN(auto w, ParseWeightScheme(v));
      p.features.weights = w;
      weights_given = true;
    } else if (key == "topk") {
      NEARDUP_ASSIGN_OR_RETURN(auto n, ParseInt(key, v));
      p.features.top_k = n;
      topk_given = true;
    } else if (key == "bits") {
      NEARDUP_ASSIGN_OR_RETURN(auto n, ParseInt(key, v));
      p.bits = n;
      bits_given = true;
    } else if (key == "hash") {
      if (v == "xxh3") {
        p.hash = FeatureHashAlgorithm::kXxh3;
      } else if (v == "md5") {
        p.hash = FeatureHashAlgorithm::kMd5;
      } else {
        return Status::InvalidArgument("method key hash: '" + v + "' (expected xxh3 or md5)");
      }
    } else if (key == "entropy_threshold") {
      NEARDUP_ASSIGN_OR_RETURN(auto d, ParseDouble(key, v));
      p.features.entropy_threshold = d;
    } else if (key == "hmm") {
      if (v != "0" && v != "1") {
        return Status::InvalidArgument("method key hmm: '" + v + "' (expected 1 or 0)");
      }
      p.segmenter.hmm = v == "1";
    } else if (key == "idf") {
      p.idf_path = v;
    } else if (key == "user_dict") {
      p.segmenter.user_dicts.push_back(v);
    } else if (key == "marker_words") {
      p.marker_words_path = v;
    } else if (key == "boilerplate") {
      NEARDUP_ASSIGN_OR_RETURN(auto mode, ParseBoilerplateMode(v));
      p.boilerplate.mode = mode;
    } else if (key == "boilerplate_min_docs") {
      NEARDUP_ASSIGN_OR_RETURN(auto n, ParseInt(key, v));
      p.boilerplate.min_docs = n;
    } else if (key == "k") {
      NEARDUP_ASSIGN_OR_RETURN(auto n, ParseInt(key, v));
      m.default_k = n;
      k_given = true;
    } else if (key.ends_with("_digest") && key.size() > 7) {
      m.digests[key.substr(0, key.size() - 7)] = v;
    } else {
      return Status::InvalidArgument(
          "method '" + std::string(text) + "': unknown key '" + key +
          "' (expected normalize, features, weights, topk, bits, hash, entropy_threshold, hmm, "
          "idf, user_dict, marker_words, boilerplate, boilerplate_min_docs, k; minhash: "
          "num_perm, bands, rows, threshold, recall, verify)");
    }
  }
  // The override rules: other weights bring their own top-K, another width
  // its own threshold, unless those are given too.
  if (weights_given && !topk_given && p.features.weights != preset.pipeline.features.weights) {
    p.features.top_k = UsesIdf(p.features.weights) ? 20 : 0;
  }
  if (bits_given && !k_given && p.bits != preset.pipeline.bits) {
    m.default_k = p.bits == 64 ? 3 : 10;
  }
  // MinHash: bands and rows follow num_perm and the threshold unless given.
  if (m.is_minhash()) {
    MinHashOptions& h = m.minhash;
    NEARDUP_RETURN_IF_ERROR(m.Validate(/*bands_rows=*/false));
    if (recall > 0) {
      if (bands_given || rows_given) {
        return Status::InvalidArgument(
            "method: recall chooses bands and rows; give recall or bands/rows, not both");
      }
      NEARDUP_ASSIGN_OR_RETURN(auto br, BandsRowsForRecall(h.threshold, h.num_perm, recall));
      h.bands = br.bands;
      h.rows = br.rows;
    } else if (bands_given && !rows_given) {
      h.rows = h.bands > 0 ? h.num_perm / h.bands : 0;
    } else if (rows_given && !bands_given) {
      h.bands = h.rows > 0 ? h.num_perm / h.rows : 0;
    } else if (!bands_given && (perm_given || threshold_given)) {
      const BandsRows br = DefaultBandsRows(h.threshold, h.num_perm);
      h.bands = br.bands;
      h.rows = br.rows;
    }
  }
  NEARDUP_RETURN_IF_ERROR(m.Validate());
  // An IDF table given to a method whose weights use none would be dropped
  // silently (Resolve): refused here, for every front end (--idf, idf=).
  if (!m.pipeline.idf_path.empty() && !UsesIdf(m.pipeline.features.weights)) {
    return Status::InvalidArgument(
        "idf " + m.pipeline.idf_path + ": method '" + m.name + "' weighs its features '" +
        std::string(WeightSchemeName(m.pipeline.features.weights)) +
        "', which uses no IDF table (tfidf, improved and entropy weights do: e.g. --method "
        "tfidf or --weights tfidf)");
  }
  return m;
}

std::string Method::ToString() const {
  std::string out = name;
  for (const auto& [key, value] : Items(*this)) {
    out += ',';
    out += key;
    out += '=';
    out += Encode(value);
  }
  return out;
}

std::string Method::ShortName() const {
  auto preset = FromPreset(name);
  if (preset.ok() && Difference(*preset).empty() && digests.empty()) return name;
  return ToString();
}

Status Method::RequireSimHash(std::string_view what) const {
  if (!is_minhash()) return Status::OK();
  return Status::NotSupported(std::string(what) +
                              ": the minhash method is supported by dedup only (it has no "
                              "fingerprint; use a SimHash method such as " +
                              std::string(kDefaultMethod) + ")");
}

Status Method::Validate() const { return Validate(/*bands_rows=*/true); }

Status Method::Validate(bool bands_rows) const {
  const PipelineOptions& p = pipeline;
  if (is_minhash()) {
    const MinHashOptions& h = minhash;
    if (h.num_perm < 1 || h.num_perm > kMaxMinHashPermutations) {
      return Status::InvalidArgument("method: num_perm must be in [1, " +
                                     std::to_string(kMaxMinHashPermutations) + "], got " +
                                     std::to_string(h.num_perm));
    }
    if (!(h.threshold > 0 && h.threshold <= 1)) {
      return Status::InvalidArgument("method: threshold must be in (0, 1], got " +
                                     FormatDouble(h.threshold));
    }
    if (bands_rows &&
        (h.bands < 1 || h.rows < 1 || static_cast<int64_t>(h.bands) * h.rows > h.num_perm)) {
      return Status::InvalidArgument(
          "method: bands and rows must be >= 1 with bands x rows <= num_perm, got " +
          std::to_string(h.bands) + " x " + std::to_string(h.rows) + " at num_perm " +
          std::to_string(h.num_perm));
    }
  } else if (p.bits != 64 && p.bits != 128) {
    return Status::InvalidArgument("method: bits must be 64 or 128, got " + std::to_string(p.bits));
  }
  if (!is_minhash() && (default_k < 0 || default_k > p.bits / 4)) {
    return Status::InvalidArgument("method: k must be in [0, " + std::to_string(p.bits / 4) +
                                   "] at " + std::to_string(p.bits) + " bits, got " +
                                   std::to_string(default_k));
  }
  if (p.features.top_k < 0) {
    return Status::InvalidArgument("method: topk must be >= 0, got " +
                                   std::to_string(p.features.top_k));
  }
  if (p.features.kind == FeatureKind::kCharNgrams &&
      (p.features.ngram < 1 || p.features.ngram > 16)) {
    return Status::InvalidArgument("method: chars:N needs 1 <= N <= 16, got " +
                                   std::to_string(p.features.ngram));
  }
  if (!(p.features.entropy_threshold > 0) || !std::isfinite(p.features.entropy_threshold)) {
    return Status::InvalidArgument("method: entropy_threshold must be a positive number");
  }
  if (p.boilerplate.min_docs < 2) {
    return Status::InvalidArgument("method: boilerplate_min_docs must be >= 2, got " +
                                   std::to_string(p.boilerplate.min_docs));
  }
  return Status::OK();
}

Status Method::Resolve() {
  PipelineOptions& p = pipeline;
  digests.clear();
  auto absolute = [](std::string* path) {
    std::error_code ec;
    const fs::path a = fs::absolute(*path, ec);
    if (!ec) *path = a.lexically_normal().string();
  };
  auto record = [this](const std::string& key, const std::string& path) -> Status {
    auto digest = FileDigest(path);
    if (!digest.ok()) return Status::NotFound(key + ": " + digest.status().message());
    digests[key] = *digest;
    return Status::OK();
  };
  const bool words = p.features.kind == FeatureKind::kWords;
  if (UsesIdf(p.features.weights)) {
    if (p.idf_path.empty()) {
      const std::string dir =
          p.segmenter.jieba_dir.empty() ? DefaultJiebaDir() : p.segmenter.jieba_dir;
      NEARDUP_RETURN_IF_ERROR(record("idf", dir + "/analyse/idf.txt"));
    } else {
      absolute(&p.idf_path);
      NEARDUP_RETURN_IF_ERROR(record("idf", p.idf_path));
    }
  } else {
    p.idf_path.clear();
  }
  if (words) {
    for (size_t i = 0; i < p.segmenter.user_dicts.size(); ++i) {
      absolute(&p.segmenter.user_dicts[i]);
      NEARDUP_RETURN_IF_ERROR(record("user_dict." + std::to_string(i), p.segmenter.user_dicts[i]));
    }
  } else {
    p.segmenter.user_dicts.clear();
  }
  if (p.features.weights == WeightScheme::kImproved) {
    if (p.marker_words_path.empty()) {
      NEARDUP_ASSIGN_OR_RETURN(auto found, FindDataFile(kMarkerWordsFile, p.data_dir));
      p.marker_words_path = found;
    }
    absolute(&p.marker_words_path);
    NEARDUP_RETURN_IF_ERROR(record("marker_words", p.marker_words_path));
  } else {
    p.marker_words_path.clear();
  }
  return Status::OK();
}

Status Method::VerifyDataFiles() const {
  const PipelineOptions& p = pipeline;
  // A path without a digest is refused before anything opens it: a stored
  // method may come from anywhere, and its paths could name any file.
  const auto named = [this](const std::string& key, const std::string& path) -> Status {
    if (path.empty() || digests.count(key) > 0) return Status::OK();
    return Status::InvalidArgument(
        key + ": the method names " + path +
        " without its digest; a stored method's data files must verify by digest (rebuild the "
        "index, which records them)");
  };
  NEARDUP_RETURN_IF_ERROR(named("idf", p.idf_path));
  NEARDUP_RETURN_IF_ERROR(named("marker_words", p.marker_words_path));
  for (size_t i = 0; i < p.segmenter.user_dicts.size(); ++i) {
    NEARDUP_RETURN_IF_ERROR(named("user_dict." + std::to_string(i), p.segmenter.user_dicts[i]));
  }
  for (const auto& [key, digest] : digests) {
    std::string path;
    if (key == "idf") {
      path = p.idf_path.empty()
                 ? (p.segmenter.jieba_dir.empty() ? DefaultJiebaDir() : p.segmenter.jieba_dir) +
                       "/analyse/idf.txt"
                 : p.idf_path;
    } else if (key == "marker_words") {
      path = p.marker_words_path;
    } else if (key.starts_with("user_dict.")) {
      size_t i = 0;
      const std::string_view n = std::string_view(key).substr(10);
      const auto r = std::from_chars(n.data(), n.data() + n.size(), i);
      if (r.ec != std::errc() || i >= p.segmenter.user_dicts.size()) {
        return Status::InvalidArgument("method: digest for unknown data file '" + key + "'");
      }
      path = p.segmenter.user_dicts[i];
    } else {
      return Status::InvalidArgument("method: digest for unknown data file '" + key + "'");
    }
    auto now = FileDigest(path);
    if (!now.ok()) {
      return Status::NotFound(key + ": " + now.status().message() +
                              " (the method names it; restore it or rebuild)");
    }
    if (*now != digest) {
      return Status::InvalidArgument(key + ": " + path + " has changed since the method was " +
                                     "recorded (its digest differs from the recorded " + digest +
                                     "); fingerprints would differ: restore it or rebuild");
    }
  }
  return Status::OK();
}

std::string Method::Difference(const Method& other) const {
  const auto mine = Items(*this);
  const auto theirs = Items(other);
  std::map<std::string, std::string> a, b;
  for (const auto& [k, v] : mine) a[k] += (a.count(k) ? "+" : "") + v;
  for (const auto& [k, v] : theirs) b[k] += (b.count(k) ? "+" : "") + v;
  for (const auto& [k, v] : mine) {
    if (k == "k") continue;
    // A digest recorded on one side only says nothing about the other.
    if (k.ends_with("_digest") && !b.count(k)) continue;
    const auto it = b.find(k);
    const std::string there = it == b.end() ? "(unset)" : it->second;
    if (a[k] != there) return k + ": " + a[k] + " here, " + there + " there";
  }
  for (const auto& [k, v] : theirs) {
    if (k == "k" || k.ends_with("_digest")) continue;
    if (!a.count(k)) return k + ": (unset) here, " + b[k] + " there";
  }
  return "";
}

}  // namespace neardup
