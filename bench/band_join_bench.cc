// Copyright 2026 The neardup Authors.
//
// Banded against exact self-join of the default method's fingerprints
// (chars5, 128 bits, k = 24) on realistic documents, and a corpus writer for
// the end-to-end `neardup dedup` runs (doc/benchmarks.md, "Banded join").
//
// Documents: sentences sampled (seeded) from ../shared/data/zh_thucnews1000.jsonl
// assembled into 800-1,500-character documents, plus 10 % near copies of
// earlier ones with 5-15 % of their characters edited in spans of 1-8
// (delete, insert, replace with corpus text).
//
//   neardup_band_join_bench write N corpus.jsonl         # the corpus as JSONL
//   neardup_band_join_bench truth N pairs.txt            # its planted copies: "d<i> d<source>"
//   neardup_band_join_bench fingerprints N fps.bin [T]   # fingerprint it (T threads)
//   neardup_band_join_bench join fps.bin N exact|banded [T [r L [k]]]  # self-join of the
//       first N (r, L: the bands, else chosen by the cost model; k: default 24)
//   neardup_band_join_bench synth N fps.bin [out.bin]    # N fingerprints: real ones
//       (fps.bin) as the first, then random 128-bit ones with 10 % near copies (5-20
//       bits); written to out.bin (default fps.bin.synth)
//   neardup_band_join_bench selfjoin fps.bin N [T]       # SimHashBandJoin alone: time,
//       CPU, and the memory it adds per document beyond the fingerprints
//   neardup_band_join_bench stream fps.bin N exact|banded [T]  # stream mode (keep first),
//       k = 24: the exact tables or the incremental banded index
//
// Not a test: prints times, candidates and pairs; measure memory with
// /usr/bin/time -v.

#include <malloc.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "neardup/band_join.h"
#include "neardup/dedup.h"
#include "neardup/method.h"
#include "neardup/pipeline.h"
#include "util/thread_pool.h"

namespace neardup {
namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// UTF-8 characters of s as slices.
void Chars(std::string_view s, std::vector<std::string_view>* out) {
  for (size_t i = 0; i < s.size();) {
    size_t j = i + 1;
    while (j < s.size() && (static_cast<unsigned char>(s[j]) & 0xc0) == 0x80) ++j;
    out->push_back(s.substr(i, j - i));
    i = j;
  }
}

struct Corpus {
  std::vector<std::string> texts;                        // owns the sentences' bytes
  std::vector<std::vector<std::string_view>> sentences;  // characters of each sentence
  std::vector<std::string_view> alphabet;                // every character, for edits
};

Corpus LoadSentences() {
  Corpus c;
  std::ifstream in(std::string(NEARDUP_SOURCE_DIR) + "/../shared/data/zh_thucnews1000.jsonl");
  std::string line;
  while (std::getline(in, line)) c.texts.push_back(nlohmann::json::parse(line)["text"]);
  for (const std::string& t : c.texts) {
    std::vector<std::string_view> chars;
    Chars(t, &chars);
    std::vector<std::string_view> sentence;
    for (std::string_view ch : chars) {
      sentence.push_back(ch);
      c.alphabet.push_back(ch);
      if (ch == "。" || ch == "！" || ch == "？" || ch == "；") {
        if (sentence.size() >= 5 && sentence.size() <= 200) c.sentences.push_back(sentence);
        sentence.clear();
      }
    }
  }
  return c;
}

// The generator of document i, and its first draws: the earlier document
// that i is a near copy of (10 % of them), or SIZE_MAX for a fresh one.
std::mt19937_64 DocumentRng(size_t i) { return std::mt19937_64(i * 0x9e3779b97f4a7c15ULL + 1); }
size_t PlantedSource(size_t i, std::mt19937_64& rng) {
  if (i > 0 && rng() % 10 == 0) return rng() % i;
  return SIZE_MAX;
}

// Document i of the corpus (deterministic in i): a near copy of an earlier
// document for 10 % of them.
std::string MakeDocument(const Corpus& c, size_t i) {
  std::mt19937_64 rng = DocumentRng(i);
  auto fresh = [&](std::mt19937_64& r) {
    const size_t target = 800 + r() % 701;
    std::vector<std::string_view> doc;
    while (doc.size() < target) {
      const auto& s = c.sentences[r() % c.sentences.size()];
      doc.insert(doc.end(), s.begin(), s.end());
    }
    return doc;
  };
  std::vector<std::string_view> doc;
  std::string source_text;
  if (const size_t source = PlantedSource(i, rng); source != SIZE_MAX) {
    // The source's text (itself possibly a near copy), alive until the end.
    source_text = MakeDocument(c, source);
    Chars(source_text, &doc);
    // Edits of spans of 1-8 characters (delete, replace with corpus text,
    // insert corpus text) until 5-15 % of the characters are touched, as the
    // evaluation harness's variants edit spans and sentences.
    const double rate = 0.05 + static_cast<double>(rng() % 1001) / 10000.0;
    const size_t budget = static_cast<size_t>(rate * static_cast<double>(doc.size()));
    for (size_t done = 0; done < budget && doc.size() > 8;) {
      const size_t span = std::min<size_t>(1 + rng() % 8, budget - done);
      const size_t at = rng() % (doc.size() - span);
      const auto& donor = c.sentences[rng() % c.sentences.size()];
      const auto pos = doc.begin() + static_cast<std::ptrdiff_t>(at);
      switch (rng() % 3) {
        case 0:
          doc.erase(pos, pos + static_cast<std::ptrdiff_t>(span));
          break;
        case 1:
          doc.insert(pos, donor.begin(),
                     donor.begin() + static_cast<std::ptrdiff_t>(std::min(span, donor.size())));
          break;
        default:
          for (size_t x = 0; x < span; ++x) doc[at + x] = donor[x % donor.size()];
      }
      done += span;
    }
  } else {
    doc = fresh(rng);
  }
  std::string text;
  for (std::string_view ch : doc) text += ch;
  return text;
}

// The planted copies of the first n documents, one "d<i> d<source>" line
// each: the ground truth for the recall of `neardup dedup` on the corpus.
int Truth(size_t n, const std::string& path) {
  std::ofstream out(path);
  for (size_t i = 0; i < n; ++i) {
    std::mt19937_64 rng = DocumentRng(i);
    if (const size_t source = PlantedSource(i, rng); source != SIZE_MAX) {
      out << "d" << i << " d" << source << "\n";
    }
  }
  return out.good() ? 0 : 1;
}

int Write(size_t n, const std::string& path) {
  const Corpus c = LoadSentences();
  std::ofstream out(path);
  for (size_t i = 0; i < n; ++i) {
    nlohmann::json j = {{"id", "d" + std::to_string(i)}, {"text", MakeDocument(c, i)}};
    out << j.dump() << "\n";
  }
  return out.good() ? 0 : 1;
}

int Fingerprints(size_t n, const std::string& path, int threads) {
  const Corpus c = LoadSentences();
  auto pipeline = Pipeline::Create(Method::Default().pipeline);
  if (!pipeline.ok()) {
    std::cerr << pipeline.status().ToString() << "\n";
    return 1;
  }
  std::vector<uint64_t> words(2 * n);
  const double t0 = Now();
  ParallelFor((n + 1023) / 1024, threads, [&](size_t task, int) {
    for (size_t i = task * 1024; i < std::min(n, (task + 1) * 1024); ++i) {
      const Fingerprint fp = (*pipeline)->Fingerprint(MakeDocument(c, i)).fingerprint;
      words[2 * i] = fp.hi();
      words[2 * i + 1] = fp.lo();
    }
  });
  std::printf("fingerprinted %zu documents in %.1f s (corpus generation included)\n", n,
              Now() - t0);
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(words.data()),
            static_cast<std::streamsize>(words.size() * 8));
  return out.good() ? 0 : 1;
}

std::vector<DedupDocument> ReadFingerprints(const std::string& path, size_t n) {
  std::ifstream in(path, std::ios::binary);
  std::vector<uint64_t> words(2 * n);
  in.read(reinterpret_cast<char*>(words.data()), static_cast<std::streamsize>(words.size() * 8));
  const size_t got = static_cast<size_t>(in.gcount()) / 16;
  std::vector<DedupDocument> docs(got);
  for (size_t i = 0; i < got; ++i) {
    docs[i].fingerprint = Fingerprint::From128(words[2 * i], words[2 * i + 1]);
  }
  return docs;
}

int Synth(size_t n, const std::string& path, const std::string& out_path) {
  std::vector<DedupDocument> real = ReadFingerprints(path, n);
  std::mt19937_64 rng(77);
  std::vector<uint64_t> words;
  words.reserve(2 * n);
  for (const DedupDocument& d : real) {
    words.push_back(d.fingerprint.hi());
    words.push_back(d.fingerprint.lo());
  }
  while (words.size() < 2 * n) {
    const size_t have = words.size() / 2;
    if (rng() % 10 == 0) {
      const size_t src = rng() % have;
      uint64_t hi = words[2 * src], lo = words[2 * src + 1];
      const int flips = 5 + static_cast<int>(rng() % 16);
      for (int f = 0; f < flips; ++f) {
        const int b = static_cast<int>(rng() % 128);
        if (b < 64)
          lo ^= uint64_t{1} << b;
        else
          hi ^= uint64_t{1} << (b - 64);
      }
      words.push_back(hi);
      words.push_back(lo);
    } else {
      words.push_back(rng());
      words.push_back(rng());
    }
  }
  std::ofstream out(out_path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(words.data()),
            static_cast<std::streamsize>(words.size() * 8));
  std::printf("wrote %zu fingerprints (%zu real) to %s\n", n, real.size(), out_path.c_str());
  return 0;
}

int Join(const std::string& path, size_t n, bool banded, int threads, int r, int bands, int k) {
  const std::vector<DedupDocument> docs = ReadFingerprints(path, n);
  DedupOptions opt;
  opt.k = k;
  opt.threads = threads;
  opt.join = banded ? DedupJoin::kBanded : DedupJoin::kExact;
  opt.band_bits = r;
  opt.bands = bands;
  const double t0 = Now();
  auto result = Dedup(docs, opt);
  const double secs = Now() - t0;
  if (!result.ok()) {
    std::cerr << result.status().ToString() << "\n";
    return 1;
  }
  const DedupJoinReport& j = result->join;
  std::printf(
      "N=%zu %s threads=%d: %.2f s total (group %.2f, join %.2f, cluster %.2f); distinct %zu, "
      "r=%d L=%d recall(k)=%.4f recall(k-4)=%.6f; candidates %zu, tested %zu, confirmed %zu, "
      "large buckets %zu; duplicates %zu in %zu clusters; estimated exact %.1f s, banded %.1f s "
      "(one thread)\n",
      docs.size(), banded ? "banded" : "exact", threads, secs, j.group_seconds, j.join_seconds,
      j.cluster_seconds, j.distinct, j.bands.band_bits, j.bands.bands, j.bands.recall_at_k,
      j.bands.recall_at_k_minus_4, j.candidates, j.tested, j.confirmed, j.large_buckets,
      result->summary.duplicates, result->summary.clusters_with_duplicates,
      j.estimated_exact_seconds, j.estimated_banded_seconds);
  return 0;
}

// Resident set size now and at its peak, in bytes (Linux).
std::pair<size_t, size_t> Rss() {
  size_t now = 0, peak = 0;
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) now = std::stoul(line.substr(6)) * 1024;
    if (line.rfind("VmHWM:", 0) == 0) peak = std::stoul(line.substr(6)) * 1024;
  }
  return {now, peak};
}

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

// The join engine alone on the first n fingerprints of path (default method:
// 128 bits, k = 24, recall 0.99, bands chosen for random fingerprints). The
// peak RSS reached during the join minus the RSS before it, per document, is
// what the join needs beyond the fingerprints (24-byte Fingerprints here).
int SelfJoin(const std::string& path, size_t n, int threads) {
  std::vector<Fingerprint> fps;
  {
    const std::vector<DedupDocument> docs = ReadFingerprints(path, n);
    fps.reserve(docs.size());
    for (const DedupDocument& d : docs) fps.push_back(d.fingerprint);
  }
  malloc_trim(0);
  {
    std::ofstream clear("/proc/self/clear_refs");
    clear << "5";  // resets the peak RSS (VmHWM) to the current RSS
  }
  const SimHashBands layout = ChooseSimHashBands(fps.size(), 128, 24, 0.99, {}, kDefaultBandSeed);
  const auto [before, peak_before] = Rss();
  BandJoinOptions opt;
  opt.threads = threads;
  std::vector<IdPair> pairs;
  BandJoinStats stats;
  const double cpu0 = CpuSeconds(), t0 = Now();
  const Status s = SimHashBandJoin(fps, 24, layout, opt, &pairs, &stats);
  const double wall = Now() - t0, cpu = CpuSeconds() - cpu0;
  if (!s.ok()) {
    std::cerr << s.ToString() << "\n";
    return 1;
  }
  const auto [after, peak] = Rss();
  (void)after;
  const size_t added = peak > before ? peak - before : 0;
  std::printf(
      "selfjoin N=%zu threads=%d r=%d L=%d: wall %.2f s, cpu %.2f s; candidates %zu, pairs %zu; "
      "RSS before %.1f MB (fingerprints 24 B/doc), peak %.1f MB (peak before %.1f MB): %.1f "
      "bytes/document beyond the fingerprints\n",
      fps.size(), threads, layout.band_bits, layout.bands, wall, cpu, stats.candidates,
      pairs.size(), static_cast<double>(before) / 1e6, static_cast<double>(peak) / 1e6,
      static_cast<double>(peak_before) / 1e6,
      static_cast<double>(added) / static_cast<double>(fps.size()));
  return 0;
}

// Stream mode (keep first) on the first n fingerprints of path, 128 bits,
// k = 24: the exact permuted tables or the incremental banded index; wall,
// CPU and peak RSS.
int Stream(const std::string& path, size_t n, bool banded, int threads) {
  const std::vector<DedupDocument> docs = ReadFingerprints(path, n);
  DedupOptions opt;
  opt.k = 24;
  opt.mode = DedupMode::kStream;
  opt.threads = threads;
  opt.join = banded ? DedupJoin::kBanded : DedupJoin::kExact;
  const auto [before, peak_before] = Rss();
  const double t0 = Now(), c0 = CpuSeconds();
  auto result = Dedup(docs, opt);
  const double wall = Now() - t0, cpu = CpuSeconds() - c0;
  if (!result.ok()) {
    std::cerr << result.status().ToString() << "\n";
    return 1;
  }
  const auto [now, peak] = Rss();
  const DedupJoinReport& j = result->join;
  std::printf(
      "stream N=%zu %s threads=%d: wall %.2f s, cpu %.2f s; r=%d L=%d recall(k)=%.4f "
      "recall(k-4)=%.6f; candidates %zu, tested %zu; duplicates %zu; peak RSS %.0f MB (%.0f "
      "before)\n",
      docs.size(), banded ? "banded" : "exact", threads, wall, cpu, j.bands.band_bits,
      j.bands.bands, j.bands.recall_at_k, j.bands.recall_at_k_minus_4, j.candidates, j.tested,
      result->summary.duplicates, static_cast<double>(peak) / 1e6,
      static_cast<double>(peak_before) / 1e6);
  return 0;
}

}  // namespace
}  // namespace neardup

int main(int argc, char** argv) {
  using neardup::Fingerprints;
  const std::vector<std::string> a(argv + 1, argv + argc);
  if (a.size() >= 3 && a[0] == "write") return neardup::Write(std::stoul(a[1]), a[2]);
  if (a.size() >= 3 && a[0] == "truth") return neardup::Truth(std::stoul(a[1]), a[2]);
  if (a.size() >= 3 && a[0] == "fingerprints") {
    return Fingerprints(std::stoul(a[1]), a[2], a.size() > 3 ? std::stoi(a[3]) : 2);
  }
  if (a.size() >= 3 && a[0] == "synth") {
    return neardup::Synth(std::stoul(a[1]), a[2], a.size() > 3 ? a[3] : a[2] + ".synth");
  }
  if (a.size() >= 3 && a[0] == "selfjoin") {
    return neardup::SelfJoin(a[1], std::stoul(a[2]), a.size() > 3 ? std::stoi(a[3]) : 2);
  }
  if (a.size() >= 4 && a[0] == "join") {
    return neardup::Join(a[1], std::stoul(a[2]), a[3] == "banded",
                         a.size() > 4 ? std::stoi(a[4]) : 2, a.size() > 6 ? std::stoi(a[5]) : 0,
                         a.size() > 6 ? std::stoi(a[6]) : 0, a.size() > 7 ? std::stoi(a[7]) : 24);
  }
  if (a.size() >= 4 && a[0] == "stream") {
    return neardup::Stream(a[1], std::stoul(a[2]), a[3] == "banded",
                           a.size() > 4 ? std::stoi(a[4]) : 2);
  }
  std::fprintf(stderr,
               "usage: %s write N out.jsonl | truth N pairs.txt | fingerprints N fps.bin [threads] "
               "| synth N fps.bin "
               "[out.bin] | selfjoin fps.bin N [threads] "
               "| join fps.bin N exact|banded [threads [r L [k]]] | stream fps.bin N exact|banded "
               "[threads]\n",
               argv[0]);
  return 2;
}
