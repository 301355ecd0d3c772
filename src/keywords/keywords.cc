// Copyright 2026 The neardup Authors.
//
// IdfTable (jieba.analyse.tfidf.IDFLoader) and KeywordExtractor
// (jieba.analyse.tfidf.TFIDF.extract_tags with withWeight=True).

#include "neardup/keywords.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "neardup/segmenter.h"
#include "segment/char_class.h"
#include "segment/data_error.h"
#include "segment/keyword_candidate.h"
#include "util/ordered_string_index.h"
#include "util/utf8.h"

namespace neardup {

struct IdfTable::Rep {
  std::string arena;  // the words, back to back; never changes once built
  std::vector<std::pair<std::string_view, double>> entries;
  std::unordered_map<std::string_view, size_t> index;
  double median = 0;

  void Add(std::string_view word, double idf) {
    auto [it, inserted] = index.emplace(word, entries.size());
    if (inserted) {
      entries.emplace_back(word, idf);
    } else {
      entries[it->second].second = idf;
    }
  }
  // IDFLoader: median_idf = sorted(values)[len // 2].
  void ComputeMedian() {
    if (entries.empty()) {
      median = 0;
      return;
    }
    std::vector<double> values;
    values.reserve(entries.size());
    for (const auto& e : entries) values.push_back(e.second);
    const size_t mid = values.size() / 2;
    std::nth_element(values.begin(), values.begin() + static_cast<ptrdiff_t>(mid), values.end());
    median = values[mid];
  }
};

IdfTable::IdfTable() : rep_(std::make_unique<Rep>()) {}
IdfTable::~IdfTable() = default;
IdfTable::IdfTable(IdfTable&&) noexcept = default;
IdfTable& IdfTable::operator=(IdfTable&&) noexcept = default;

namespace {

// str.strip() on a UTF-8 line.
std::string_view StripPy(std::string_view s) {
  const auto* begin = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = begin + s.size();
  const auto* p = begin;
  while (p < end) {
    int len;
    if (!segment::IsPyWhitespace(utf8::Decode(p, end, &len))) break;
    p += len;
  }
  const auto* last_end = p;
  for (const auto* q = p; q < end;) {
    int len;
    const bool space = segment::IsPyWhitespace(utf8::Decode(q, end, &len));
    q += len;
    if (!space) last_end = q;
  }
  return std::string_view(reinterpret_cast<const char*>(p), static_cast<size_t>(last_end - p));
}

// Python float() of a decimal literal (optional sign, digits, '.', exponent,
// "inf", "nan").
bool ParseDouble(std::string_view s, double* out) {
  bool negative = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  if (s.empty() || s.front() == '+' || s.front() == '-') return false;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  if (ec != std::errc() || ptr != s.data() + s.size()) return false;
  if (negative) *out = -*out;
  return true;
}

}  // namespace

// IDFLoader.set_new_path: for each line, word, freq = line.strip().split(' ')
// (exactly two fields); freq = float(freq). Blank lines are skipped (jieba
// would raise on them).
Result<IdfTable> IdfTable::Load(const std::string& path) {
  IdfTable table;
  Rep& rep = *table.rep_;
  {
    std::ifstream in(path, std::ios::binary);
    if (!in) return segment::MissingDataError(path);
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) return Status::IOError("cannot read " + path);
    rep.arena = std::move(ss).str();
  }
  const std::string_view text = rep.arena;
  if (!utf8::IsValid(text)) {
    return Status::Corruption(path + ": IDF table is not UTF-8");
  }
  size_t pos = 0;
  size_t line_no = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    const std::string_view line = StripPy(text.substr(pos, nl - pos));
    pos = nl + 1;
    ++line_no;
    if (line.empty()) continue;
    const size_t sp = line.find(' ');
    double idf;
    if (sp == std::string_view::npos || line.find(' ', sp + 1) != std::string_view::npos ||
        !ParseDouble(line.substr(sp + 1), &idf)) {
      return Status::Corruption(path + ":" + std::to_string(line_no) +
                                ": expected 'word idf', got '" + utf8::Excerpt(line) + "'");
    }
    // jieba would take "nan" or "inf" too, and one such value turns every
    // weight, and so every fingerprint, into nonsense.
    if (!std::isfinite(idf) || std::fabs(idf) > IdfTable::kMaxAbsIdf) {
      return Status::Corruption(path + ":" + std::to_string(line_no) + ": idf value '" +
                                utf8::Excerpt(line.substr(sp + 1)) +
                                "' is not a finite number in [-1e6, 1e6]");
    }
    rep.Add(line.substr(0, sp), idf);
  }
  rep.ComputeMedian();
  return table;
}

Result<IdfTable> IdfTable::LoadDefault(const std::string& jieba_dir) {
  return Load((jieba_dir.empty() ? DefaultJiebaDir() : jieba_dir) + "/analyse/idf.txt");
}

IdfTable IdfTable::FromEntries(const std::vector<std::pair<std::string, double>>& entries) {
  IdfTable table;
  Rep& rep = *table.rep_;
  size_t bytes = 0;
  for (const auto& e : entries) bytes += e.first.size();
  rep.arena.reserve(bytes);
  for (const auto& e : entries) rep.arena += e.first;
  size_t off = 0;
  for (const auto& e : entries) {
    rep.Add(std::string_view(rep.arena).substr(off, e.first.size()), e.second);
    off += e.first.size();
  }
  rep.ComputeMedian();
  return table;
}

std::optional<double> IdfTable::Find(std::string_view word) const {
  const auto it = rep_->index.find(word);
  if (it == rep_->index.end()) return std::nullopt;
  return rep_->entries[it->second].second;
}

double IdfTable::Idf(std::string_view word) const {
  const auto it = rep_->index.find(word);
  return it == rep_->index.end() ? rep_->median : rep_->entries[it->second].second;
}

double IdfTable::median() const { return rep_->median; }
size_t IdfTable::size() const { return rep_->entries.size(); }

std::vector<std::pair<std::string_view, double>> IdfTable::Entries() const { return rep_->entries; }

Status IdfTable::Save(const std::string& path) const {
  for (const auto& [word, idf] : rep_->entries) {
    // What Load would refuse is not written.
    if (!std::isfinite(idf) || std::fabs(idf) > kMaxAbsIdf) {
      return Status::InvalidArgument("IDF table: the idf of '" + std::string(word) +
                                     "' is not a finite number in [-1e6, 1e6]; nothing written");
    }
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Status::IOError("cannot create " + path);
  char buf[64];
  for (const auto& [word, idf] : rep_->entries) {
    const auto [ptr, ec] = std::to_chars(buf, buf + sizeof(buf), idf);
    out << word << ' ' << std::string_view(buf, static_cast<size_t>(ptr - buf)) << '\n';
  }
  out.flush();
  if (!out) return Status::IOError("cannot write " + path);
  return Status::OK();
}

// ---------------------------------------------------------------------------

// The IDF of each of the segmenter's word ids (present = the word is in the
// table); words without an id are looked up in the table itself.
struct KeywordExtractor::IdIndex {
  struct Entry {
    double idf = 0;
    uint64_t present = 0;
  };
  std::once_flag once;
  std::vector<Entry> by_id;
};

KeywordExtractor::KeywordExtractor(const Segmenter* segmenter, const IdfTable* idf)
    : segmenter_(segmenter), idf_(idf), index_(std::make_shared<IdIndex>()) {}

const KeywordExtractor::IdIndex& KeywordExtractor::Index() const {
  std::call_once(index_->once, [this] {
    std::vector<IdIndex::Entry>& by_id = index_->by_id;
    by_id.assign(segmenter_->word_id_count(), IdIndex::Entry{});
    for (const auto& [word, idf] : idf_->Entries()) {
      const int32_t id = segmenter_->WordId(word);
      if (id >= 0) by_id[static_cast<size_t>(id)] = IdIndex::Entry{idf, 1};
    }
  });
  return *index_;
}

// jieba.analyse.tfidf.KeywordExtractor.STOP_WORDS.
bool KeywordExtractor::IsStopWord(std::string_view w) {
  static constexpr std::string_view kStopWords[] = {
      "the",  "of",   "is", "and",  "to",   "in",  "that", "we",   "for",   "an",  "are",
      "by",   "be",   "as", "on",   "with", "can", "if",   "from", "which", "you", "it",
      "this", "then", "at", "have", "all",  "not", "one",  "has",  "or"};
  if (w.size() < 2 || w.size() > 5) return false;
  for (std::string_view s : kStopWords) {
    if (s == w) return true;
  }
  return false;
}

void KeywordExtractor::Extract(std::string_view text, int top_k, std::vector<Keyword>* out) const {
  out->clear();
  const IdIndex& index = Index();
  thread_local std::vector<std::string_view> words;
  thread_local std::vector<int32_t> ids;
  segmenter_->CutWithWordIds(text, &words, &ids);

  // freq: insertion-ordered, as Python's dict (per-thread, reused). Words with
  // an id are counted through a small open-addressing table of ids (equal
  // words have equal ids; the table is sized to the document, so it stays in
  // cache), the others through a string index.
  struct Entry {
    std::string_view word;
    double weight;
    int32_t id;
    uint32_t order;
  };
  thread_local std::vector<Entry> freq;
  thread_local std::vector<uint64_t> id_table;  // (id + 1) << 32 | entry; 0 = empty
  thread_local OrderedStringIndex other_index;
  thread_local std::vector<uint32_t> entry_of_other;
  freq.clear();
  entry_of_other.clear();
  other_index.Reset(words.size());
  size_t capacity = 64;
  while (capacity < words.size() * 2) capacity *= 2;
  if (id_table.size() < capacity) id_table.resize(capacity);
  std::fill(id_table.begin(), id_table.begin() + static_cast<ptrdiff_t>(capacity), 0);
  const size_t mask = capacity - 1;
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string_view w = words[i];
    if (!segment::IsKeywordCandidate(w)) continue;
    const int32_t id = ids[i];
    const auto order = static_cast<uint32_t>(freq.size());
    if (id >= 0) {
      const uint64_t key = static_cast<uint64_t>(id) + 1;
      size_t slot = (static_cast<uint32_t>(key) * 2654435761u) & mask;
      while (id_table[slot] != 0 && (id_table[slot] >> 32) != key) slot = (slot + 1) & mask;
      if (id_table[slot] == 0) {
        id_table[slot] = key << 32 | order;
        freq.push_back(Entry{w, 1.0, id, order});
      } else {
        freq[static_cast<uint32_t>(id_table[slot])].weight += 1.0;
      }
      continue;
    }
    const auto [e, inserted] = other_index.Insert(w);
    if (inserted) {
      entry_of_other.push_back(order);
      freq.push_back(Entry{w, 1.0, id, order});
    } else {
      freq[entry_of_other[e]].weight += 1.0;
    }
  }
  double total = 0;  // sum(freq.values())
  for (const Entry& f : freq) total += f.weight;
  const double median = idf_->median();
  for (const Entry& f : freq) {
    if (f.id >= 0) __builtin_prefetch(&index.by_id[static_cast<size_t>(f.id)]);
  }
  for (Entry& f : freq) {
    double idf;
    if (f.id >= 0) {
      const IdIndex::Entry& e = index.by_id[static_cast<size_t>(f.id)];
      idf = e.present != 0 ? e.idf : median;
    } else {
      idf = idf_->Idf(f.word);
    }
    f.weight *= idf / total;
  }

  // sorted(..., key=weight, reverse=True) is stable: ties keep dict order.
  // The top k of that order is a partial sort with ties broken by order.
  size_t n = freq.size();
  if (top_k > 0 && static_cast<size_t>(top_k) < n) {
    n = static_cast<size_t>(top_k);
    std::partial_sort(freq.begin(), freq.begin() + static_cast<ptrdiff_t>(n), freq.end(),
                      [](const Entry& a, const Entry& b) {
                        return a.weight > b.weight || (a.weight == b.weight && a.order < b.order);
                      });
  } else {
    std::stable_sort(freq.begin(), freq.end(),
                     [](const Entry& a, const Entry& b) { return a.weight > b.weight; });
  }
  out->reserve(n);
  for (size_t i = 0; i < n; ++i) out->push_back(Keyword{std::string(freq[i].word), freq[i].weight});
}

}  // namespace neardup
