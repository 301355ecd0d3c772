// Copyright 2026 The neardup Authors.
//
// neardup against the C++ anchors in one process, on the same text: cppjieba
// (segmentation, POS, keywords top 20), yanyiwu/simhash (64-bit tfidf SimHash
// top 20) and faiss IndexBinaryMultiHash (k = 3 queries over 1M 64-bit codes;
// the neighbours must be the same ids and distances on both sides), plus the
// default method's fingerprint (no anchor).
// Rounds are interleaved (neardup and the anchor alternate which goes first),
// one thread, and each round's ratio is anchor time / neardup time; the table
// gives the median MB/s (or queries/s) of each side and the median of the
// per-round ratios. Times are the thread's CPU time (the machine is shared;
// wall-clock times are printed too). Built by bench/compare_anchors.sh.
//
//   neardup_compare_anchors --anchors DIR --jieba DIR [--rounds 5] [--mb 0]
//                           [--corpus FILE] [--index-n 1000000]

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "cppjieba/Jieba.hpp"
#include "neardup/index.h"
#include "neardup/keywords.h"
#include "neardup/pipeline.h"
#include "neardup/presets.h"
#include "neardup/segmenter.h"
#include "simhash/Simhasher.hpp"
#ifdef NEARDUP_HAVE_FAISS
#include <faiss/IndexBinaryHash.h>
#include <faiss/impl/AuxIndexStructures.h>
#endif

namespace {

struct Clock {
  double cpu = 0, wall = 0;
  static Clock Now() {
    timespec c, w;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c);
    clock_gettime(CLOCK_MONOTONIC, &w);
    return {c.tv_sec + c.tv_nsec * 1e-9, w.tv_sec + w.tv_nsec * 1e-9};
  }
};

struct Row {
  std::string name, unit;
  double work = 0;  // bytes or queries per pass
  std::vector<double> ours, theirs, ours_wall, theirs_wall;
};

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

void Time(const std::function<void()>& f, std::vector<double>* cpu, std::vector<double>* wall) {
  const Clock a = Clock::Now();
  f();
  const Clock b = Clock::Now();
  cpu->push_back(b.cpu - a.cpu);
  wall->push_back(b.wall - a.wall);
}

// One round of a row: both sides, the anchor first on odd rounds.
void Round(Row* row, int round, const std::function<void()>& ours,
           const std::function<void()>& theirs) {
  if (round % 2 != 0 && theirs) Time(theirs, &row->theirs, &row->theirs_wall);
  Time(ours, &row->ours, &row->ours_wall);
  if (round % 2 == 0 && theirs) Time(theirs, &row->theirs, &row->theirs_wall);
}

void Print(const Row& r) {
  const double scale = r.unit == "MB/s" ? 1e6 : 1.0;
  const double ours = r.work / Median(r.ours) / scale;
  if (r.theirs.empty()) {
    std::printf("%-40s %10.2f %-5s %12s %10s   (wall %.2f)\n", r.name.c_str(), ours, r.unit.c_str(),
                "-", "-", r.work / Median(r.ours_wall) / scale);
    return;
  }
  std::vector<double> ratios;
  for (size_t i = 0; i < r.ours.size() && i < r.theirs.size(); ++i) {
    ratios.push_back(r.theirs[i] / r.ours[i]);
  }
  const double theirs = r.work / Median(r.theirs) / scale;
  std::printf("%-40s %10.2f %-5s %12.2f %9.2fx   (wall %.2f vs %.2f)\n", r.name.c_str(), ours,
              r.unit.c_str(), theirs, Median(ratios), r.work / Median(r.ours_wall) / scale,
              r.work / Median(r.theirs_wall) / scale);
}

const char* Arg(int argc, char** argv, const char* name, const char* fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], name) == 0) return argv[i + 1];
  }
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string anchors = Arg(argc, argv, "--anchors", "");
  const std::string jieba_dir = Arg(argc, argv, "--jieba", "/usr/lib/python3/dist-packages/jieba");
  const std::string corpus = Arg(argc, argv, "--corpus", "");
  const int rounds = std::atoi(Arg(argc, argv, "--rounds", "5"));
  const double mb = std::atof(Arg(argc, argv, "--mb", "0"));
  const size_t index_n = std::strtoull(Arg(argc, argv, "--index-n", "1000000"), nullptr, 10);
  if (anchors.empty() || corpus.empty()) {
    std::fprintf(stderr, "usage: %s --anchors DIR --corpus FILE [--jieba DIR] [--rounds N]\n",
                 argv[0]);
    return 2;
  }

  std::vector<std::string> docs;
  size_t bytes = 0;
  {
    std::ifstream in(corpus);
    std::vector<std::string> base;
    std::string line;
    while (std::getline(in, line)) base.push_back(nlohmann::json::parse(line).at("text"));
    do {
      for (const std::string& d : base) {
        docs.push_back(d);
        bytes += d.size();
      }
    } while (!base.empty() && bytes < mb * 1e6);
  }
  std::printf("text: %zu documents, %.2f MB (%s); %d interleaved rounds, one thread\n", docs.size(),
              bytes / 1e6, corpus.c_str(), rounds);

  // Both sides read python3-jieba's dictionary and IDF table.
  const std::string dict = jieba_dir + "/dict.txt", idf_path = jieba_dir + "/analyse/idf.txt";
  const std::string hmm = anchors + "/cppjieba/dict/hmm_model.utf8";
  const std::string stop = anchors + "/cppjieba/dict/stop_words.utf8";
  cppjieba::Jieba jieba(dict, hmm, "", idf_path, stop);
  simhash::Simhasher simhasher(dict, hmm, idf_path, stop);
  neardup::SegmenterOptions seg_options;
  seg_options.jieba_dir = jieba_dir;
  auto seg = neardup::Segmenter::Open(seg_options);
  auto idf = neardup::IdfTable::LoadDefault(jieba_dir);
  if (!seg.ok() || !idf.ok()) {
    std::fprintf(stderr, "cannot open jieba data in %s\n", jieba_dir.c_str());
    return 1;
  }
  neardup::KeywordExtractor keywords(seg->get(), &*idf);
  auto pipeline_for = [&](const char* preset, bool nfkc) {
    auto p = neardup::FindPreset(preset);
    neardup::PipelineOptions o = p->pipeline;
    o.segmenter.jieba_dir = jieba_dir;
    o.normalize.nfkc_casefold = nfkc;
    return std::move(*neardup::Pipeline::Create(o));
  };
  auto tfidf = pipeline_for("tfidf", false);
  auto tfidf_nfkc = pipeline_for("tfidf", true);
  // The default method exactly as users get it (preset options untouched).
  auto default_pipeline = [&] {
    auto p = neardup::FindPreset(neardup::kDefaultMethod);
    neardup::PipelineOptions o = p->pipeline;
    o.segmenter.jieba_dir = jieba_dir;
    return std::move(*neardup::Pipeline::Create(o));
  }();
  const std::string default_row =
      std::string(neardup::kDefaultMethod) + " fingerprint (default, 128)";

  std::vector<Row> rows = {
      {"segmentation (Cut, HMM on)", "MB/s", static_cast<double>(bytes)},
      {"POS tagging (CutWithPos / Tag)", "MB/s", static_cast<double>(bytes)},
      {"keywords top 20 (Extract)", "MB/s", static_cast<double>(bytes)},
      {"64-bit tfidf SimHash top 20", "MB/s", static_cast<double>(bytes)},
      {"  the same with NFKC (neardup)", "MB/s", static_cast<double>(bytes)},
      {default_row, "MB/s", static_cast<double>(bytes)},
  };
  uint64_t sink = 0;
  for (int r = 0; r < rounds; ++r) {
    std::vector<std::string_view> words;
    std::vector<std::string> their_words;
    Round(
        &rows[0], r,
        [&] {
          for (const auto& d : docs) {
            (*seg)->Cut(d, &words);
            sink += words.size();
          }
        },
        [&] {
          for (const auto& d : docs) {
            jieba.Cut(d, their_words, true);
            sink += their_words.size();
          }
        });
    std::vector<neardup::Token> tokens;
    std::vector<std::pair<std::string, std::string>> tagged;
    Round(
        &rows[1], r,
        [&] {
          for (const auto& d : docs) {
            (*seg)->CutWithPos(d, &tokens);
            sink += tokens.size();
          }
        },
        [&] {
          for (const auto& d : docs) {
            // cppjieba's Tag appends to its output (Cut replaces); without
            // the clear the anchor would copy a growing vector each document.
            tagged.clear();
            jieba.Tag(d, tagged);
            sink += tagged.size();
          }
        });
    std::vector<neardup::Keyword> ours_kw;
    std::vector<cppjieba::KeywordExtractor::Word> their_kw;
    Round(
        &rows[2], r,
        [&] {
          for (const auto& d : docs) {
            keywords.Extract(d, 20, &ours_kw);
            sink += ours_kw.size();
          }
        },
        [&] {
          for (const auto& d : docs) {
            jieba.extractor.Extract(d, their_kw, 20);
            sink += their_kw.size();
          }
        });
    Round(
        &rows[3], r,
        [&] {
          for (const auto& d : docs) sink ^= tfidf->Fingerprint(d).fingerprint.lo();
        },
        [&] {
          for (const auto& d : docs) {
            uint64_t v = 0;
            simhasher.make(d, 20, v);
            sink ^= v;
          }
        });
    Round(
        &rows[4], r,
        [&] {
          for (const auto& d : docs) sink ^= tfidf_nfkc->Fingerprint(d).fingerprint.lo();
        },
        [&] {
          for (const auto& d : docs) {
            uint64_t v = 0;
            simhasher.make(d, 20, v);
            sink ^= v;
          }
        });
    Round(
        &rows[5], r,
        [&] {
          for (const auto& d : docs) sink ^= default_pipeline->Fingerprint(d).fingerprint.lo();
        },
        nullptr);
  }
  std::printf("\n%-40s %16s %12s %10s\n", "stage", "neardup", "anchor", "ratio");
  for (const Row& row : rows) Print(row);

  // The index: N random 64-bit codes, 10,000 queries at 0-3 bits from stored
  // ones; all neighbours within 3 bits (faiss: radius 4, strict).
  std::mt19937_64 rng(64);
  std::vector<uint64_t> ids(index_n);
  std::vector<neardup::Fingerprint> fps(index_n);
  std::vector<uint8_t> codes(index_n * 8);
  for (size_t i = 0; i < index_n; ++i) {
    ids[i] = i;
    const uint64_t v = rng();
    fps[i] = neardup::Fingerprint::From64(v);
    std::memcpy(&codes[i * 8], &v, 8);
  }
  const size_t nq = 10000;
  std::vector<neardup::Fingerprint> queries;
  std::vector<uint8_t> qcodes(nq * 8);
  for (size_t q = 0; q < nq; ++q) {
    uint64_t v = fps[rng() % index_n].lo();
    for (size_t f = 0; f < q % 4; ++f) v ^= uint64_t{1} << (rng() % 64);
    queries.push_back(neardup::Fingerprint::From64(v));
    std::memcpy(&qcodes[q * 8], &v, 8);
  }
  neardup::PermutedTableOptions options;
  options.bits = 64;
  options.max_k = 3;
  auto index = neardup::PermutedTableIndex::Build(options, ids, fps);
  Row query{"index query k=3, 64 bits, N=" + std::to_string(index_n), "q/s",
            static_cast<double>(nq)};
  neardup::SearchResults results;
#ifdef NEARDUP_HAVE_FAISS
  faiss::IndexBinaryMultiHash faiss_index(64, 4, 16);
  faiss_index.add(static_cast<faiss::IndexBinary::idx_t>(index_n), codes.data());
  auto faiss_search = [&](faiss::RangeSearchResult* res) {
    faiss_index.range_search(static_cast<faiss::IndexBinary::idx_t>(nq), qcodes.data(), 4, res);
  };
#endif
  for (int r = 0; r < rounds; ++r) {
    std::function<void()> theirs;
#ifdef NEARDUP_HAVE_FAISS
    theirs = [&] {
      faiss::RangeSearchResult res(static_cast<faiss::IndexBinary::idx_t>(nq));
      faiss_search(&res);
      sink += res.lims[nq];
    };
#endif
    Round(
        &query, r, [&] { (void)(*index)->SearchBatch(queries, 3, 1, &results); }, theirs);
  }
  Print(query);
#ifdef NEARDUP_HAVE_FAISS
  // The same neighbours, not only as many: per query, the sets of (id,
  // distance) must be equal (faiss's labels are the insertion positions,
  // which are the ids here).
  faiss::RangeSearchResult res(static_cast<faiss::IndexBinary::idx_t>(nq));
  faiss_search(&res);
  size_t bad_queries = 0;
  for (size_t q = 0; q < nq; ++q) {
    std::vector<std::pair<uint64_t, int>> ours_q, theirs_q;
    for (const neardup::Neighbor& n : results[q]) ours_q.emplace_back(n.id, n.distance);
    for (size_t j = res.lims[q]; j < res.lims[q + 1]; ++j) {
      theirs_q.emplace_back(static_cast<uint64_t>(res.labels[j]),
                            static_cast<int>(res.distances[j]));
    }
    std::sort(ours_q.begin(), ours_q.end());
    std::sort(theirs_q.begin(), theirs_q.end());
    if (ours_q != theirs_q) ++bad_queries;
  }
  if (bad_queries != 0) {
    std::printf("MISMATCH: %zu of %zu queries have different neighbours (neardup %zu, faiss %zu)\n",
                bad_queries, nq, results.neighbors.size(), static_cast<size_t>(res.lims[nq]));
    return 1;
  }
  std::printf("(index results: the same %zu neighbours (ids and distances) for all %zu queries)\n",
              results.neighbors.size(), nq);
#else
  std::printf("(index results: %zu neighbours; no faiss to compare with)\n",
              results.neighbors.size());
#endif
  std::fprintf(stderr, "%llu\n", static_cast<unsigned long long>(sink & 1));
  return 0;
}
