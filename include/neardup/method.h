// Copyright 2026 The neardup Authors.
//
// Method: every setting that changes a fingerprint, and the distance
// threshold that dedup and the index use when none is given. A method is
// what a user names (`--method chars5`), what an index stores in its header
// and what an evaluation compares; it has one text form, used everywhere:
//
//   NAME[,key=value]...
//
// NAME is a preset (presets.h); the keys override it:
//
//   key                value                                 default
//   normalize          nfkc|t2s|tw2s|tw2sp|tw2sp2|hk2s|ws      nfkc
//                      joined by '+' (or ','), or none (of several
//                      t2s forms the last one counts; options.h:
//                      ParseNormalizeList)
//   features           words | chars:N | sentences            the preset's
//   weights            uniform|tf|tfidf|improved|entropy      the preset's
//   topk               K >= 0 (0: all features)               the preset's; when `weights`
//                                                             changes it: 20 for tfidf,
//                                                             improved, entropy, else 0
//   bits               64 | 128                               the preset's
//   hash               xxh3 | md5                             the preset's
//   entropy_threshold  W_t > 0                                the preset's (2)
//   hmm                1 | 0                                  1
//   idf                an IDF file (jieba idf.txt format)     jieba's analyse/idf.txt
//                      (tfidf, improved, entropy weights only: Parse refuses it
//                      for a method whose weights use no IDF)
//   user_dict          a jieba user dictionary (repeatable)   none
//   marker_words       the improved weights' lexicon          data/marker_words.txt
//   boilerplate        off | lines (boilerplate.h)              off
//   boilerplate_min_docs  N >= 2: lines in >= N documents      5
//                      are boilerplate (both keys written
//                      only when boilerplate is not off)
//   k                  0 <= k <= bits/4                       the preset's; when `bits`
//                                                             changes it: 3 (64), 10 (128)
//   *_digest           XXH3-64 of a data file's content       written by Resolve()
//
// NAME `minhash` is MinHash over the features (character 3-grams of the
// normalized text by default, see minhash.h) instead of SimHash. bits, k and
// entropy_threshold do not apply to it; it has these keys instead:
//
//   num_perm           1..1024 permutations                   128
//   threshold          Jaccard threshold, 0 < t <= 1          0.5
//   bands, rows        bands x rows <= num_perm               recall 0.99 at t:
//                                                             BandsRowsForRecall
//                                                             (35 x 3 at t = 0.5)
//   recall             0 < R < 1: choose bands and rows so    (not stored: ToString
//                      that P(candidate at t) >= R             writes bands and rows)
//   verify             estimate | exact Jaccard               estimate
//
// Given num_perm or threshold without bands and rows, they are chosen again;
// bands alone gives rows = num_perm / bands, rows alone bands = num_perm / rows.
// These keys are InvalidArgument on a SimHash method, and SimHash's on minhash.
//
// Values are percent-encoded where they hold ',', '=' or '%'.
//
//   auto method = neardup::Method::Parse("tfidf,bits=128,topk=10");
//   if (!method.ok()) ...;                        // names the bad key or value
//   auto pipeline = neardup::Pipeline::Create(method->pipeline);
//   std::string stored = method->ToString();      // Parse(stored) gives it back
//
// Where a method is stored (an index header), call Resolve() first: data file
// paths become absolute and their contents are identified by digest, so the
// stored method means the same fingerprints from any working directory, and
// VerifyDataFiles() says when a file has changed since.
//
// Runtime locations (SegmenterOptions::jieba_dir, PipelineOptions::data_dir)
// are not part of a method: they say where this machine keeps the data, not
// what the fingerprint is.
//
// Thread safety: a Method is a value.

#ifndef NEARDUP_METHOD_H_
#define NEARDUP_METHOD_H_

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "neardup/minhash.h"
#include "neardup/pipeline.h"
#include "neardup/status.h"

namespace neardup {

// The name of the MinHash method (not a SimHash preset of presets.h).
inline constexpr std::string_view kMinHashMethod = "minhash";

enum class MethodKind {
  kSimHash,
  kMinHash,
};

struct Method {
  // The preset it starts from, or kMinHashMethod.
  std::string name;
  MethodKind kind = MethodKind::kSimHash;
  // Everything that changes a fingerprint (jieba_dir and data_dir excepted).
  PipelineOptions pipeline;
  // The Hamming threshold dedup and index queries use when none is given
  // (SimHash only).
  int default_k = 0;
  // MinHash only: permutations, bands, rows, threshold, verification.
  MinHashOptions minhash;
  // XXH3-64 (16 hex digits) of data files by key: "idf", "marker_words",
  // "user_dict.0", ... Filled by Resolve(); kept by Parse/ToString.
  std::map<std::string, std::string> digests;

  bool is_minhash() const { return kind == MethodKind::kMinHash; }
  // Whether the method's weights use an IDF table (tfidf, improved, entropy).
  bool uses_idf() const;
  // OK for a SimHash method; for minhash, which has no fingerprint,
  // NotSupported "WHAT: the minhash method is supported by dedup only (it has
  // no fingerprint; use a SimHash method such as chars5u)". Every front end
  // (CLI, Python) asks this before fingerprinting, indexing or comparing.
  Status RequireSimHash(std::string_view what) const;

  // The default method: chars5 (character 5-grams by count, 128 bits, k = 24).
  static Method Default();

  // A preset by name, or kMinHashMethod; InvalidArgument listing the known
  // names.
  static Result<Method> FromPreset(std::string_view name);

  // The text form above. InvalidArgument names the key and the reason. An
  // empty string is the default method.
  static Result<Method> Parse(std::string_view text);

  // Parse(text) with more key=value settings after those of `text`
  // (unencoded values): how a command line's options override --method. The
  // override rules see the keys of both.
  static Result<Method> Parse(std::string_view text,
                              const std::vector<std::pair<std::string, std::string>>& more);

  // The canonical text form: the name, then every key in the table's order
  // (data file keys only when set). Parse(ToString()) equals *this.
  std::string ToString() const;

  // The name alone when the method equals its preset, else ToString(); for
  // summaries and messages.
  std::string ShortName() const;

  // InvalidArgument unless every setting is in range (bits 64/128, 0 <= k <=
  // bits/4, topk >= 0, 1 <= N <= 16, W_t > 0 and finite, sentences only with
  // uniform or tf weights...).
  // MinHash: 1 <= num_perm <= 1024, 0 < threshold <= 1, bands, rows >= 1
  // with bands x rows <= num_perm.
  Status Validate() const;

  // Makes idf, user_dict and marker_words paths absolute (the marker lexicon is
  // looked up now when the weights need it) and records their digests. The
  // jieba default idf (idf empty) is recorded as the resolved jieba file.
  Status Resolve();

  // NotFound or InvalidArgument ("idf: /x/idf.txt has changed since ...")
  // when a data file recorded by Resolve() is missing or differs, and
  // InvalidArgument when a data file path (idf, user_dict, marker_words) has
  // no recorded digest at all. Call it before a stored method (an index
  // header) opens any file it names: an untrusted header could name any path
  // on the machine, and only a file whose content matches the digest is
  // opened. It reads no more than a digest of each file.
  Status VerifyDataFiles() const;

  // "" when both give the same fingerprints; else the first differing key and
  // both values, e.g. "bits: 128 here, 64 there".
  std::string Difference(const Method& other) const;

  friend bool operator==(const Method& a, const Method& b) { return a.ToString() == b.ToString(); }

 private:
  Status Validate(bool bands_rows) const;
};

// XXH3-64 of a file's content as 16 hex digits; IOError if it cannot be read,
// InvalidArgument when it is not a regular file (a FIFO, a device).
Result<std::string> FileDigest(const std::string& path);

}  // namespace neardup

#endif  // NEARDUP_METHOD_H_
