// Copyright 2026 The neardup Authors.
//
// Boilerplate removal: lines that many documents of a corpus share (a page
// footer, a licence notice, section headings) say nothing about which
// documents are copies of each other, yet they make two otherwise different
// short pages look alike. A counting pass records, for each line, in how many
// groups of documents it occurs (near copies of one text are one group: see
// LineStats); the fingerprint pass then leaves out of the features every line
// found in at least `min_docs` groups. The output text of a document is never
// changed: only what is fingerprinted.
//
//   neardup::LineCounter counter;
//   for (const Document& d : corpus) counter.Add(d.text);   // pass 1
//   neardup::LineStats stats = std::move(counter).Finish();
//   neardup::BoilerplateFilter filter(stats, {.mode = BoilerplateMode::kLines});
//   for (const Document& d : corpus) {                     // pass 2
//     const std::string kept = filter.Strip(d.text, nullptr);
//     auto fp = pipeline->Fingerprint(kept, d.title);
//   }
//
// Lines are compared after a cheap canonical form (CanonicalLine): leading
// and trailing white space removed, runs of white space collapsed to one
// space, ASCII letters lower-cased. Given a Normalizer (the pipeline's, when
// it converts Traditional to Simplified), a line is keyed by the canonical
// form of its normalized text, so one line in two scripts (zh_CN and zh_TW)
// is one line: counted once per document that holds it in either script, and
// left out of both versions alike. Without one, the two forms are counted
// apart, and a line found in 3 zh_CN and 2 zh_TW pages (5 in all) is left
// out of neither; worse, a line found in 5 zh_CN but 4 zh_TW pages is left
// out of one version of a page and kept in the other, which pulls the two
// apart (on the man pages CN/TW recall is 0.944 with raw keys and 0.980 with
// normalized ones, doc/evaluation.md). The price is the normalizer run over
// the text in the counting pass and again in Strip (OpenCC: 2-4 MB/s).
//
// A document of which more than 90 % of the line text (canonical bytes)
// would be left out is fingerprinted whole: that is a reprint of a document
// that occurs many times (perhaps with a line of its own added), not a page
// made of a template and its own text. On the Chinese man pages no document
// reaches that share; at 80 % six would, and cross-page pairs rise from 20 to
// 27 (doc/evaluation.md).
//
// Thread safety: LineCounter is used by one thread at a time (count in
// several and Merge()); LineStats and BoilerplateFilter are immutable and may
// be shared by any number of threads.

#ifndef NEARDUP_BOILERPLATE_H_
#define NEARDUP_BOILERPLATE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "neardup/status.h"
#include "neardup/text.h"

namespace neardup {

enum class BoilerplateMode {
  kOff,    // every line is fingerprinted
  kLines,  // lines in >= min_docs documents of the corpus are left out
};

struct BoilerplateOptions {
  BoilerplateMode mode = BoilerplateMode::kOff;
  // A line found in at least this many groups of documents (LineStats) is
  // boilerplate (>= 2).
  int min_docs = 5;
};

// "off" / "lines"; InvalidArgument for anything else.
Result<BoilerplateMode> ParseBoilerplateMode(std::string_view name);
const char* BoilerplateModeName(BoilerplateMode mode);

// The canonical form of a line that counting compares (see above).
std::string CanonicalLine(std::string_view line);

// The 64-bit key of each distinct non-blank line of `text`, sorted, each
// once: what a document contributes to the counts. With `normalizer`, the
// keys of the normalized lines (above).
std::vector<uint64_t> DocumentLineKeys(std::string_view text,
                                       const Normalizer* normalizer = nullptr);

// Per distinct line (by key), the number of groups of documents containing
// it, and the number of documents counted.
//
// A group is the documents that share their group tag: the least of a 32-bit
// mix of their line keys (one MinHash value of the line set), so that two
// documents with line sets of Jaccard J share it with probability J, and
// identical documents always. Five near copies of one article (each with one
// paragraph of its own) then count their shared paragraphs once or twice, not
// five times, and those paragraphs stay in their fingerprints; a footer shared
// by pages with text of their own counts about once per page. (Counting
// documents, groups of 5 to 8 copies lost 7-12 % of their pairs,
// doc/evaluation.md, "Boilerplate".) Groups are counted exactly up to
// kGroupCap (16) distinct tags; a line that reaches it counts documents from
// then on, so counts below kGroupCap are group counts and counts at or above
// it document counts (which are at least as large).
class LineStats {
 public:
  static constexpr uint32_t kGroupCap = 16;

  LineStats() = default;

  uint64_t documents() const { return documents_; }
  size_t distinct_lines() const { return size_; }
  // Groups of documents containing the line with this key (above; 0 when
  // never seen).
  uint32_t Count(uint64_t key) const;
  // Documents containing the line with this key.
  uint32_t Documents(uint64_t key) const;
  // Distinct lines with Count() >= min_docs.
  size_t LinesAtLeast(uint32_t min_docs) const;
  // The lines with Count() >= min_count alone (their counts, documents and
  // tags), and the same documents(): all a BoilerplateFilter with that
  // min_docs looks at, so it strips exactly as with *this (the text index
  // keeps these with its commit).
  LineStats AtLeast(uint32_t min_count) const;

  // The lines split by key into `parts` ranges (part p: the keys of
  // KeyPart(key, parts) == p), each part with the same documents(): what
  // processes that each own a key range count (neardup-mpi), so that no one
  // holds every line.
  std::vector<LineStats> SplitByKey(size_t parts) const;
  // The key range of a line among `parts`: key / (2^64 / parts), rounded up
  // divisor, so the parts are contiguous key ranges of about equal size
  // (keys are hashes); 0 when parts <= 1.
  static size_t KeyPart(uint64_t key, size_t parts);
  // The lines of `parts`, which count the same documents and hold disjoint
  // keys (SplitByKey's parts, each perhaps cut with AtLeast), as one:
  // Union(x.SplitByKey(n)) is x. InvalidArgument when the parts' documents()
  // differ or a key is in two of them.
  static Result<LineStats> Union(const std::vector<LineStats>& parts);

  // A small binary file: magic, documents, the entries (key, documents, the
  // group tags while fewer than kGroupCap) sorted by key, and an XXH3-64
  // checksum of all that, so that counts made apart merge exactly. Load()
  // rejects a truncated, corrupt or foreign file with Corruption naming the
  // path, and reads the version 1 file (document counts only) as counts.
  std::string Serialize() const;
  static Result<LineStats> Deserialize(std::string_view bytes, std::string_view name);
  Status Save(const std::string& path) const;
  static Result<LineStats> Load(const std::string& path);

 private:
  friend class LineCounter;
  size_t Find(uint64_t key) const;  // the slot of `key`, or keys_.size()
  size_t Insert(uint64_t key);      // the slot of `key`, added when new
  // Adds `docs` documents with these group tags (sorted, distinct; empty:
  // the line already counts documents) to the line `key`.
  void Add(uint64_t key, uint32_t docs, const uint32_t* tags, size_t tag_count);
  void Grow();
  // Copies line slot `i` of *this (counts, documents and tags) into *out.
  void CopyLineTo(size_t i, LineStats* out) const;

  // Open addressing, linear probing; a slot with key 0 is free (real keys
  // are never 0: see DocumentLineKeys). counts_ is Count(), docs_ the
  // documents; a line of one group keeps its tag in tag0_, one of 2 to
  // kGroupCap - 1 groups all its tags in more_tags_; a line at kGroupCap has
  // no tags (saturated_).
  std::vector<uint64_t> keys_;
  std::vector<uint32_t> counts_;
  std::vector<uint32_t> docs_;
  std::vector<uint32_t> tag0_;
  std::vector<bool> saturated_;
  std::unordered_map<uint64_t, std::vector<uint32_t>> more_tags_;
  size_t size_ = 0;
  uint64_t documents_ = 0;
};

// The group tag of a document with these line keys (DocumentLineKeys; above).
uint32_t LineGroupTag(const std::vector<uint64_t>& keys);

class LineCounter {
 public:
  // Counts one document's lines (each distinct line once).
  void Add(std::string_view text, const Normalizer* normalizer = nullptr) {
    AddKeys(DocumentLineKeys(text, normalizer));
  }
  // The same from DocumentLineKeys(text), computed elsewhere (another thread).
  void AddKeys(const std::vector<uint64_t>& keys);
  // Adds the counts of `other` (the same corpus split among threads or
  // processes): the result is that of one counter over both.
  void Merge(const LineStats& other);
  LineStats Finish() && { return std::move(stats_); }
  const LineStats& stats() const { return stats_; }

 private:
  LineStats stats_;
};

class BoilerplateFilter {
 public:
  // `stats` must outlive the filter, and so must `normalizer` when given (it
  // must be the one the counts were made with). With mode off, Strip()
  // returns the text.
  BoilerplateFilter(const LineStats& stats, const BoilerplateOptions& options,
                    const Normalizer* normalizer = nullptr);

  // `text` without its boilerplate lines (the kept lines joined by '\n');
  // the whole text when more than 90 % would be left out (above). Adds the
  // number of line occurrences left out to *dropped when non-null.
  std::string Strip(std::string_view text, size_t* dropped) const;
  // Strip without a copy of a text that keeps all its lines: true when
  // lines were left out (*out holds what Strip returns; its capacity is
  // reused), false when Strip would return `text` whole (*out unspecified).
  bool StripInto(std::string_view text, std::string* out, size_t* dropped) const;

  // Distinct lines the filter leaves out.
  size_t flagged_lines() const { return flagged_; }

 private:
  const LineStats& stats_;
  BoilerplateOptions options_;
  const Normalizer* normalizer_ = nullptr;
  size_t flagged_ = 0;
};

}  // namespace neardup

#endif  // NEARDUP_BOILERPLATE_H_
