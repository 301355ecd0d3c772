// Copyright 2026 The neardup Authors.
//
// EvaluateDocs and EvaluatePairs: the methods, the all-pairs scans and the
// metric rows.

#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>

#include "eval/random.h"
#include "neardup/band_join.h"
#include "neardup/eval.h"
#include "neardup/method.h"
#include "neardup/pipeline.h"
#include "neardup/presets.h"
#include "neardup/segmenter.h"
#include "neardup/text.h"
#include "util/thread_pool.h"
#include "util/union_find.h"

namespace neardup {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The fingerprints of one method over a list of texts, reduced to what the
// pair scan needs: an integer distance in [0, max_distance], or "never".
class MethodFingerprints {
 public:
  enum class Kind { kExact, kMinHash, kSimHash };
  Kind kind = Kind::kSimHash;
  int bits = 0;                      // SimHash width; 0 otherwise
  std::vector<uint64_t> hashes;      // exact
  std::vector<uint32_t> signatures;  // MinHash, permutations per text
  int permutations = 0;
  std::vector<Fingerprint> fps;  // SimHash
  std::vector<char> empty;       // no features / no text: never a duplicate
  size_t size() const { return empty.size(); }

  int max_distance() const {
    switch (kind) {
      case Kind::kExact:
        return 1;
      case Kind::kMinHash:
        return permutations;
      case Kind::kSimHash:
        return bits;
    }
    return 0;
  }
  // Distance between texts i of this and j of `other` (-1: never a pair).
  int Distance(size_t i, const MethodFingerprints& other, size_t j) const {
    if (empty[i] || other.empty[j]) return -1;
    switch (kind) {
      case Kind::kExact:
        return hashes[i] == other.hashes[j] ? 0 : 1;
      case Kind::kMinHash: {
        const uint32_t* a = signatures.data() + i * permutations;
        const uint32_t* b = other.signatures.data() + j * permutations;
        int equal = 0;
        for (int p = 0; p < permutations; ++p) equal += a[p] == b[p] ? 1 : 0;
        return permutations - equal;
      }
      case Kind::kSimHash:
        return HammingDistance(fps[i], other.fps[j]);
    }
    return -1;
  }
};

// One method of a run, able to fingerprint texts.
class EvalMethod {
 public:
  std::string name;
  int bits = 0;  // 0: not a SimHash method
  MethodFingerprints::Kind kind = MethodFingerprints::Kind::kSimHash;

  static Result<std::unique_ptr<EvalMethod>> CreateCustom(const CustomMethod& custom, int bits) {
    return FromPipeline(custom.name, custom.pipeline, bits);
  }

  static Result<std::unique_ptr<EvalMethod>> Create(const std::string& name, int bits) {
    auto m = std::make_unique<EvalMethod>();
    m->name = name;
    if (name == "exact") {
      m->kind = MethodFingerprints::Kind::kExact;
      NEARDUP_ASSIGN_OR_RETURN(auto normalizer, Normalizer::Create(NormalizeOptions{}));
      m->normalizer_ = std::move(normalizer);
      return m;
    }
    if (name == kMinHashMethod) {
      // The method `minhash` at its defaults (character 3-grams, 128
      // permutations); every pair is scored, so its bands do not matter.
      const Method method = *Method::FromPreset(kMinHashMethod);
      m->kind = MethodFingerprints::Kind::kMinHash;
      m->minhasher_ = std::make_unique<MinHasher>(method.minhash.num_perm);
      NEARDUP_ASSIGN_OR_RETURN(auto pipeline, Pipeline::Create(method.pipeline));
      m->pipeline_ = std::move(pipeline);
      return m;
    }
    NEARDUP_ASSIGN_OR_RETURN(auto preset, FindPreset(name));
    return FromPipeline(name, preset.pipeline, bits);
  }

  // A SimHash method: `options` with its width overridden by `bits`.
  static Result<std::unique_ptr<EvalMethod>> FromPipeline(const std::string& name,
                                                          PipelineOptions options, int bits) {
    options.bits = bits;
    NEARDUP_ASSIGN_OR_RETURN(auto pipeline, Pipeline::Create(options));
    auto m = std::make_unique<EvalMethod>();
    m->name = name;
    m->bits = bits;
    m->pipeline_ = std::move(pipeline);
    return m;
  }

  // Fingerprints every text on `threads` threads; *seconds gets the wall time.
  MethodFingerprints Run(const std::vector<std::string>& texts, int threads,
                         double* seconds) const {
    MethodFingerprints out;
    out.kind = kind;
    out.bits = bits;
    out.empty.assign(texts.size(), 0);
    const auto start = std::chrono::steady_clock::now();
    switch (kind) {
      case MethodFingerprints::Kind::kExact:
        out.hashes.assign(texts.size(), 0);
        ParallelFor(texts.size(), threads, [&](size_t i, int) {
          const std::string norm = normalizer_->Normalize(texts[i]);
          out.hashes[i] = XXH3_64bits(norm.data(), norm.size());
          out.empty[i] = norm.empty() ? 1 : 0;
        });
        break;
      case MethodFingerprints::Kind::kMinHash:
        out.permutations = minhasher_->num_perm();
        out.signatures.assign(texts.size() * out.permutations, 0);
        ParallelFor(texts.size(), threads, [&](size_t i, int) {
          const size_t features = pipeline_->MinHashSignature(
              *minhasher_, texts[i], "", out.signatures.data() + i * out.permutations);
          out.empty[i] = features == 0 ? 1 : 0;
        });
        break;
      case MethodFingerprints::Kind::kSimHash:
        out.fps.assign(texts.size(), Fingerprint());
        ParallelFor(texts.size(), threads, [&](size_t i, int) {
          const DocumentFingerprint fp = pipeline_->Fingerprint(texts[i]);
          out.fps[i] = fp.fingerprint;
          out.empty[i] = fp.empty() ? 1 : 0;
        });
        break;
    }
    *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
  }

  // The thresholds of the rows as (label, largest distance predicted a pair).
  std::vector<std::pair<double, int>> Thresholds(const std::vector<double>& jaccard) const {
    std::vector<std::pair<double, int>> out;
    switch (kind) {
      case MethodFingerprints::Kind::kExact:
        out.emplace_back(kNaN, 0);
        break;
      case MethodFingerprints::Kind::kMinHash: {
        const int p = minhasher_->num_perm();
        for (double t : jaccard) {
          // estimated J = (p - d) / p >= t  <=>  d <= p - ceil(t p)
          const int need = static_cast<int>(std::ceil(t * p - 1e-9));
          out.emplace_back(t, p - need);
        }
        break;
      }
      case MethodFingerprints::Kind::kSimHash:
        for (int k = 0; k <= bits / 4; ++k) out.emplace_back(k, k);
        break;
    }
    return out;
  }

 private:
  std::unique_ptr<Normalizer> normalizer_;
  std::unique_ptr<MinHasher> minhasher_;
  std::unique_ptr<Pipeline> pipeline_;
};

Result<std::vector<std::unique_ptr<EvalMethod>>> MakeMethods(
    const std::vector<std::string>& names, const std::vector<CustomMethod>& custom,
    const std::vector<int>& bits, bool none_is_all = true) {
  std::vector<std::string> list = names;
  if (list.empty() && custom.empty() && none_is_all) {
    NEARDUP_ASSIGN_OR_RETURN(auto all, ParseEvalMethods("all"));
    list = all;
  }
  for (int b : bits) {
    if (b != 64 && b != 128) return Status::InvalidArgument("bits must be 64 or 128");
  }
  std::vector<std::unique_ptr<EvalMethod>> out;
  for (const std::string& name : list) {
    if (name == "exact" || name == "minhash") {
      NEARDUP_ASSIGN_OR_RETURN(auto m, EvalMethod::Create(name, 0));
      out.push_back(std::move(m));
      continue;
    }
    for (int b : bits) {
      NEARDUP_ASSIGN_OR_RETURN(auto m, EvalMethod::Create(name, b));
      out.push_back(std::move(m));
    }
  }
  for (const CustomMethod& c : custom) {
    for (int b : bits) {
      NEARDUP_ASSIGN_OR_RETURN(auto m, EvalMethod::CreateCustom(c, b));
      out.push_back(std::move(m));
    }
  }
  return out;
}

// Histograms of one all-pairs scan over the dataset, in all and by length
// band (LengthBand: a variant-original pair by its original's length, any
// other pair by its shorter document's).
struct Scan {
  std::vector<uint64_t> duplicate;  // variant-original pairs, by distance
  std::vector<uint64_t> natural;    // other pairs inside one group
  std::vector<uint64_t> other;      // pairs across groups
  std::array<std::vector<uint64_t>, kLengthBands> band_duplicate;
  std::array<std::vector<uint64_t>, kLengthBands> band_other;
  std::vector<int> nearest;  // per document: smallest distance to any other (-1: none)
};

// How a pair of the dataset counts. Documents 0..originals-1 are originals,
// the rest variants; variant v is of original source[v - originals].
// group[i] is the group of document i, band[i] its length band (a
// variant's: its original's).
enum class PairKind { kDuplicate, kNatural, kOther };
PairKind KindOf(size_t i, size_t j, size_t originals, const std::vector<size_t>& source,
                const std::vector<size_t>& group) {
  if (group[i] != group[j]) return PairKind::kOther;
  if ((j >= originals && source[j - originals] == i) ||
      (i >= originals && source[i - originals] == j)) {
    return PairKind::kDuplicate;
  }
  return PairKind::kNatural;
}

Scan ScanPairs(const MethodFingerprints& fp, size_t originals, const std::vector<size_t>& source,
               const std::vector<size_t>& group, const std::vector<size_t>& chars, int threads) {
  const size_t n = fp.size();
  const int dmax = fp.max_distance();
  const int workers = ResolveThreadCount(threads);
  std::vector<Scan> part(workers);
  for (Scan& s : part) {
    s.duplicate.assign(dmax + 1, 0);
    s.natural.assign(dmax + 1, 0);
    s.other.assign(dmax + 1, 0);
    for (auto& h : s.band_duplicate) h.assign(dmax + 1, 0);
    for (auto& h : s.band_other) h.assign(dmax + 1, 0);
  }
  std::vector<int> nearest(n, std::numeric_limits<int>::max());
  ParallelFor(n, threads, [&](size_t i, int w) {
    Scan& s = part[w];
    int best = std::numeric_limits<int>::max();
    for (size_t j = 0; j < n; ++j) {
      if (j == i) continue;
      const int d = fp.Distance(i, fp, j);
      if (d < 0) continue;
      best = std::min(best, d);
      if (j < i) continue;  // each unordered pair once for the histograms
      switch (KindOf(i, j, originals, source, group)) {
        case PairKind::kOther:
          ++s.other[d];
          ++s.band_other[LengthBand(std::min(chars[i], chars[j]))][d];
          break;
        case PairKind::kDuplicate:
          ++s.duplicate[d];
          ++s.band_duplicate[LengthBand(chars[std::min(i, j)])][d];  // the original
          break;
        case PairKind::kNatural:
          ++s.natural[d];
          break;
      }
    }
    nearest[i] = best;
  });
  Scan out = std::move(part[0]);
  for (size_t w = 1; w < part.size(); ++w) {
    for (int d = 0; d <= dmax; ++d) {
      out.duplicate[d] += part[w].duplicate[d];
      out.natural[d] += part[w].natural[d];
      out.other[d] += part[w].other[d];
      for (size_t b = 0; b < kLengthBands; ++b) {
        out.band_duplicate[b][d] += part[w].band_duplicate[b][d];
        out.band_other[b][d] += part[w].band_other[b][d];
      }
    }
  }
  out.nearest.resize(n);
  for (size_t i = 0; i < n; ++i) {
    out.nearest[i] = nearest[i] == std::numeric_limits<int>::max() ? -1 : nearest[i];
  }
  return out;
}

// Fills row's ratios from its counts, and each band's false negatives.
void FinishRow(EvalRow* row, uint64_t variants) {
  row->counts.false_negatives = variants - row->counts.true_positives;
  row->precision = row->counts.precision();
  row->recall = row->counts.recall();
  row->f1 = row->counts.f1();
  for (size_t b = 0; b < kLengthBands; ++b) {
    row->bands[b].false_negatives = row->band_variants[b] - row->bands[b].true_positives;
  }
}

Status WriteJsonl(const std::string& path, const std::vector<nlohmann::ordered_json>& lines) {
  std::ofstream out(path, std::ios::binary);
  if (!out) return Status::IOError("cannot write " + path);
  for (const auto& j : lines) {
    out << j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
  }
  out.close();
  if (!out) return Status::IOError("error writing " + path);
  return Status::OK();
}

// Words of the corpus for the modify operation: jieba's words that hold a
// letter, digit or CJK ideograph. Empty when the segmenter cannot be loaded.
std::vector<std::string> WordPool(const std::vector<std::string>& texts) {
  std::vector<std::string> words;
  auto segmenter = Segmenter::Open(SegmenterOptions{});
  if (!segmenter.ok()) return words;
  std::vector<std::string_view> cut;
  for (const std::string& t : texts) {
    (*segmenter)->Cut(t, &cut);
    for (std::string_view w : cut) {
      bool keep = false;
      for (char32_t c : DecodeUtf8(w)) {
        if ((c >= U'0' && c <= U'9') || (c >= U'a' && c <= U'z') || (c >= U'A' && c <= U'Z') ||
            (c >= 0x4E00 && c <= 0x9FFF)) {
          keep = true;
          break;
        }
      }
      if (keep) words.emplace_back(w);
    }
  }
  return words;
}

std::string Percent(double edit) {
  return std::to_string(static_cast<int>(std::lround(edit * 100)));
}

}  // namespace

Result<std::vector<std::string>> ParseEvalMethods(std::string_view spec) {
  std::vector<std::string> out;
  if (spec == "all" || spec.empty()) {
    out = {"exact", "minhash"};
    for (const Preset& p : Presets()) out.push_back(p.name);
    return out;
  }
  size_t pos = 0;
  while (pos <= spec.size()) {
    const size_t comma = std::min(spec.find(',', pos), spec.size());
    const std::string name(spec.substr(pos, comma - pos));
    pos = comma + 1;
    if (name.empty()) continue;
    if (name != "exact" && name != "minhash" && !FindPreset(name).ok()) {
      return Status::InvalidArgument("unknown method '" + name +
                                     "' (expected all, exact, minhash, " + PresetNames() + ")");
    }
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  }
  if (out.empty()) return Status::InvalidArgument("no method named");
  return out;
}

Result<CustomMethod> ParseCustomMethod(std::string_view spec) {
  const auto bad = [&] {
    return Status::InvalidArgument("bad custom method '" + std::string(spec) +
                                   "' (expected NAME=METHOD, e.g. c4=chargram,features=chars:4, "
                                   "or NAME=FEATURES/WEIGHTS/TOPK, e.g. c4=chars:4/tf/0)");
  };
  const size_t eq = spec.find('=');
  if (eq == std::string_view::npos || eq == 0) return bad();
  CustomMethod m;
  m.name = std::string(spec.substr(0, eq));
  const std::string_view rest = spec.substr(eq + 1);
  std::string text(rest);
  const size_t s1 = rest.find('/');
  if (s1 != std::string_view::npos) {
    // The short form: the tfidf preset with features, weights and top-K replaced.
    const size_t s2 = rest.find('/', s1 + 1);
    if (s2 == std::string_view::npos) return bad();
    const std::string topk(rest.substr(s2 + 1));
    if (topk.empty() || topk.find_first_not_of("0123456789") != std::string::npos) return bad();
    text = "tfidf,features=" + std::string(rest.substr(0, s1)) +
           ",weights=" + std::string(rest.substr(s1 + 1, s2 - s1 - 1)) + ",topk=" + topk;
  }
  NEARDUP_ASSIGN_OR_RETURN(auto method, Method::Parse(text));
  m.pipeline = method.pipeline;
  return m;
}

Result<std::vector<LabelledPair>> ReadLabelledPairs(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError("cannot open " + path);
  std::vector<LabelledPair> out;
  std::string line;
  int c1 = 0, c2 = 1, cl = 2;
  bool first = true;
  size_t lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    std::vector<std::string> cols;
    std::stringstream ss(line);
    std::string col;
    while (std::getline(ss, col, '\t')) cols.push_back(col);
    if (!line.empty() && line.back() == '\t') cols.emplace_back();
    if (first) {
      first = false;
      const auto find = [&](const char* name) {
        for (size_t i = 0; i < cols.size(); ++i) {
          if (cols[i] == name) return static_cast<int>(i);
        }
        return -1;
      };
      if (find("sentence1") >= 0 && find("sentence2") >= 0 && find("label") >= 0) {
        c1 = find("sentence1");
        c2 = find("sentence2");
        cl = find("label");
        continue;
      }
    }
    const int need = std::max({c1, c2, cl});
    if (static_cast<int>(cols.size()) <= need) {
      return Status::InvalidArgument(path + ":" + std::to_string(lineno) + ": expected " +
                                     std::to_string(need + 1) + " tab-separated columns");
    }
    const std::string& label = cols[cl];
    if (label != "0" && label != "1") {
      return Status::InvalidArgument(path + ":" + std::to_string(lineno) + ": label '" + label +
                                     "' is not 0 or 1");
    }
    out.push_back({cols[c1], cols[c2], label == "1"});
  }
  return out;
}

Result<DocsEvalReport> EvaluateDocs(const std::vector<EvalDocument>& corpus,
                                    const DocsEvalOptions& options) {
  if (options.share < 0 || options.share > 1) {
    return Status::InvalidArgument("share must be in [0, 1]");
  }
  for (double t : options.edits) {
    if (t <= 0 || t >= 1) return Status::InvalidArgument("edit ratios must be in (0, 1)");
  }
  // Only dedup-job methods named: no scan.
  NEARDUP_ASSIGN_OR_RETURN(auto methods, MakeMethods(options.methods, options.custom, options.bits,
                                                     options.dedup_methods.empty()));

  DocsEvalReport report;
  report.options = options;
  report.corpus_documents = corpus.size();
  std::vector<std::string> ids;
  std::vector<std::string> texts;
  std::vector<size_t> chars;  // code points, originals then (per edit) variants
  for (const EvalDocument& d : corpus) {
    const size_t length = DecodeUtf8(d.text).size();
    if (length < options.min_chars) continue;
    ids.push_back(d.id);
    texts.push_back(d.text);
    chars.push_back(length);
    ++report.band_originals[LengthBand(length)];
  }
  const size_t n = texts.size();
  if (n < 2) return Status::InvalidArgument("fewer than two documents pass --min-chars");
  report.originals = n;

  // Which originals get a variant: a seeded shuffle, the first share of it.
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  eval_internal::Rng rng(options.seed, 0x5eed);
  for (size_t i = n; i > 1; --i) std::swap(order[i - 1], order[rng.Below(i)]);
  const auto variants = static_cast<size_t>(std::llround(options.share * static_cast<double>(n)));
  std::vector<size_t> source(order.begin(), order.begin() + variants);
  std::sort(source.begin(), source.end());
  report.variants = variants;

  // Natural duplicates among the originals: every pair with exact character
  // n-gram Jaccard >= natural_jaccard (prefix-filter join, JaccardJoin).
  UnionFind groups(n);
  {
    NEARDUP_ASSIGN_OR_RETURN(auto shingler, ShingleSets::Create(options.natural_shingle));
    const std::vector<std::vector<uint64_t>> sets = shingler.OfAll(texts, options.threads);
    NEARDUP_ASSIGN_OR_RETURN(auto natural,
                             JaccardJoin(sets, options.natural_jaccard, options.threads));
    for (const JaccardPair& p : natural) {
      groups.Union(p.a, p.b);
      report.natural_pairs.emplace_back(ids[p.a], ids[p.b]);
    }
  }

  // Fingerprints of the originals, once per method.
  std::vector<MethodFingerprints> original_fps;
  std::vector<double> original_secs;
  for (const auto& m : methods) {
    double secs = 0;
    original_fps.push_back(m->Run(texts, options.threads, &secs));
    original_secs.push_back(secs);
  }

  const Perturber perturber(texts, WordPool(texts));
  if (!options.dataset_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options.dataset_dir, ec);
    std::vector<nlohmann::ordered_json> lines;
    for (size_t i = 0; i < n; ++i) lines.push_back({{"id", ids[i]}, {"text", texts[i]}});
    Status s = WriteJsonl(options.dataset_dir + "/originals.jsonl", lines);
    if (!s.ok()) return s;
    lines.clear();
    for (const auto& [a, b] : report.natural_pairs) lines.push_back({{"a", a}, {"b", b}});
    s = WriteJsonl(options.dataset_dir + "/natural_pairs.jsonl", lines);
    if (!s.ok()) return s;
  }

  for (double edit : options.edits) {
    std::vector<PerturbResult> results(variants);
    ParallelFor(variants, options.threads, [&](size_t v, int) {
      results[v] = perturber.Perturb(source[v], edit, options.seed);
    });
    std::vector<std::string> vtexts(variants);
    double achieved = 0;
    for (size_t v = 0; v < variants; ++v) {
      vtexts[v] = std::move(results[v].text);
      achieved += results[v].ratio;
    }
    report.achieved_edit.emplace_back(edit, variants ? achieved / variants : 0);
    if (!options.dataset_dir.empty()) {
      std::vector<nlohmann::ordered_json> lines;
      for (size_t v = 0; v < variants; ++v) {
        lines.push_back({{"id", ids[source[v]] + "#T" + Percent(edit)},
                         {"original", ids[source[v]]},
                         {"edit", edit},
                         {"achieved", results[v].ratio},
                         {"ops",
                          {{"modify", results[v].ops_applied[0]},
                           {"delete", results[v].ops_applied[1]},
                           {"shift", results[v].ops_applied[2]},
                           {"replace", results[v].ops_applied[3]}}},
                         {"text", vtexts[v]}});
      }
      Status s = WriteJsonl(options.dataset_dir + "/variants_T" + Percent(edit) + ".jsonl", lines);
      if (!s.ok()) return s;
    }

    // Groups of the dataset: originals by natural group, a variant with its original.
    std::vector<size_t> group(n + variants);
    for (size_t i = 0; i < n; ++i) group[i] = groups.Find(i);
    for (size_t v = 0; v < variants; ++v) group[n + v] = group[source[v]];
    std::vector<size_t> group_size(n, 0);
    for (size_t g : group) ++group_size[g];
    std::vector<bool> truth(n + variants);
    for (size_t i = 0; i < n + variants; ++i) truth[i] = group_size[group[i]] >= 2;
    chars.resize(n);
    std::array<uint64_t, kLengthBands> band_variants{};
    for (size_t v = 0; v < variants; ++v) {
      chars.push_back(DecodeUtf8(vtexts[v]).size());
      ++band_variants[LengthBand(chars[source[v]])];
    }
    const auto new_row = [&](const std::string& method, int bits, double threshold) {
      EvalRow row;
      row.method = method;
      row.bits = bits;
      row.threshold = threshold;
      row.edit = edit;
      row.band_variants = band_variants;
      return row;
    };

    for (size_t mi = 0; mi < methods.size(); ++mi) {
      const EvalMethod& m = *methods[mi];
      double secs = 0;
      MethodFingerprints all = m.Run(vtexts, options.threads, &secs);
      // The dataset: originals then variants.
      MethodFingerprints data = original_fps[mi];
      data.hashes.insert(data.hashes.end(), all.hashes.begin(), all.hashes.end());
      data.signatures.insert(data.signatures.end(), all.signatures.begin(), all.signatures.end());
      data.fps.insert(data.fps.end(), all.fps.begin(), all.fps.end());
      data.empty.insert(data.empty.end(), all.empty.begin(), all.empty.end());
      const double total_secs = original_secs[mi] + secs;
      const double docs_per_s = total_secs > 0 ? static_cast<double>(n + variants) / total_secs : 0;

      const Scan scan = ScanPairs(data, n, source, group, chars, options.threads);
      for (const auto& [label, k] : m.Thresholds(options.jaccard_thresholds)) {
        EvalRow row = new_row(m.name, m.bits, label);
        for (int d = 0; d <= k; ++d) {
          row.counts.true_positives += scan.duplicate[d];
          row.counts.false_positives += scan.other[d];
          row.natural_found += scan.natural[d];
          for (size_t b = 0; b < kLengthBands; ++b) {
            row.bands[b].true_positives += scan.band_duplicate[b][d];
            row.bands[b].false_positives += scan.band_other[b][d];
          }
        }
        for (uint64_t c : scan.natural) row.natural_total += c;
        FinishRow(&row, variants);
        std::vector<bool> predicted(n + variants);
        for (size_t i = 0; i < n + variants; ++i) {
          predicted[i] = scan.nearest[i] >= 0 && scan.nearest[i] <= k;
        }
        row.dedup_rate = DedupRate(truth, predicted);
        row.docs_per_s = docs_per_s;
        report.rows.push_back(std::move(row));
      }
      if (m.kind == MethodFingerprints::Kind::kSimHash) {
        DistanceHistogram h;
        h.method = m.name;
        h.bits = m.bits;
        h.edit = edit;
        h.duplicate = scan.duplicate;
        h.other = scan.other;
        report.histograms.push_back(std::move(h));
      }
    }

    // The dedup job (what `neardup dedup` runs) over originals + variants.
    if (!options.dedup_methods.empty()) {
      std::vector<std::string> dataset = texts;
      dataset.insert(dataset.end(), vtexts.begin(), vtexts.end());
      // Pairs inside natural groups that are not variant-original pairs.
      uint64_t natural_total = 0;
      for (size_t g = 0; g < n; ++g) natural_total += group_size[g] * (group_size[g] - 1) / 2;
      natural_total -= variants;
      for (const std::string& spec : options.dedup_methods) {
        DedupJobOptions job = options.dedup_job;
        NEARDUP_ASSIGN_OR_RETURN(job.method, Method::Parse(spec));
        job.method_text = spec;
        job.threads = options.threads;
        NEARDUP_ASSIGN_OR_RETURN(auto run, RunEvalDedupJob(dataset, std::move(job)));
        EvalRow row = new_row(spec, run.minhash ? 0 : Method::Parse(spec)->pipeline.bits,
                              run.minhash ? kNaN : run.k);
        std::vector<bool> predicted(n + variants, false);
        for (const DedupPair& p : run.pairs) {
          predicted[p.i] = predicted[p.j] = true;
          switch (KindOf(p.i, p.j, n, source, group)) {
            case PairKind::kOther:
              ++row.counts.false_positives;
              ++row.bands[LengthBand(std::min(chars[p.i], chars[p.j]))].false_positives;
              break;
            case PairKind::kDuplicate:
              ++row.counts.true_positives;
              ++row.bands[LengthBand(chars[std::min(p.i, p.j)])].true_positives;
              break;
            case PairKind::kNatural:
              ++row.natural_found;
              break;
          }
        }
        row.natural_total = natural_total;
        FinishRow(&row, variants);
        row.dedup_rate = DedupRate(truth, predicted);
        row.docs_per_s = run.seconds > 0 ? static_cast<double>(n + variants) / run.seconds : 0;
        report.dedup_rows.push_back(std::move(row));
      }
    }
  }
  if (!options.dataset_dir.empty()) {
    std::ofstream labels(options.dataset_dir + "/labels.csv", std::ios::binary);
    labels << "variant_of,edit\n";
    for (double edit : options.edits) {
      for (size_t v = 0; v < variants; ++v) labels << ids[source[v]] << "," << edit << "\n";
    }
    if (!labels) return Status::IOError("error writing labels.csv");
  }
  return report;
}

Result<PairsEvalReport> EvaluatePairs(const std::vector<LabelledPair>& pairs,
                                      const PairsEvalOptions& options) {
  NEARDUP_ASSIGN_OR_RETURN(auto methods,
                           MakeMethods(options.methods, options.custom, options.bits));
  PairsEvalReport report;
  report.pairs = pairs.size();
  std::vector<std::string> left, right;
  std::vector<bool> labels;
  for (const LabelledPair& p : pairs) {
    left.push_back(p.a);
    right.push_back(p.b);
    labels.push_back(p.positive);
    report.positives += p.positive ? 1 : 0;
  }
  const uint64_t positives = report.positives;
  for (const auto& mp : methods) {
    const EvalMethod& m = *mp;
    double s1 = 0, s2 = 0;
    const MethodFingerprints a = m.Run(left, options.threads, &s1);
    const MethodFingerprints b = m.Run(right, options.threads, &s2);
    const int dmax = a.max_distance();
    PairsEvalMethod out;
    out.method = m.name;
    out.bits = m.bits;
    out.positive_hist.assign(dmax + 1, 0);
    out.negative_hist.assign(dmax + 1, 0);
    std::vector<double> scores(pairs.size());
    for (size_t i = 0; i < pairs.size(); ++i) {
      int d = a.Distance(i, b, i);
      if (d < 0) d = dmax;  // a text without features matches nothing
      scores[i] = -d;
      (labels[i] ? out.positive_hist : out.negative_hist)[d]++;
    }
    auto auc = RocAuc(scores, labels);
    out.auc = auc.ok() ? *auc : kNaN;
    const double secs = s1 + s2;
    for (const auto& [label, k] : m.Thresholds(options.jaccard_thresholds)) {
      EvalRow row;
      row.method = m.name;
      row.bits = m.bits;
      row.threshold = label;
      row.edit = kNaN;
      row.dedup_rate = kNaN;
      for (int d = 0; d <= k; ++d) {
        row.counts.true_positives += out.positive_hist[d];
        row.counts.false_positives += out.negative_hist[d];
      }
      row.counts.false_negatives = positives - row.counts.true_positives;
      row.precision = row.counts.precision();
      row.recall = row.counts.recall();
      row.f1 = row.counts.f1();
      row.docs_per_s = secs > 0 ? 2.0 * static_cast<double>(pairs.size()) / secs : 0;
      out.rows.push_back(std::move(row));
    }
    report.methods.push_back(std::move(out));
  }
  return report;
}

}  // namespace neardup
