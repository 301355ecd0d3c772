// Copyright 2026 The neardup Authors.
//
// The jieba.cut (cut_all=False) pipeline over a decoded code point array:
// Tokenizer.cut's block split, __cut_DAG / __cut_DAG_NO_HMM, calc's route and
// finalseg.cut. Each token is a contiguous range of characters, so tokens are
// produced as (begin, end) character indices and turned into byte views.

#include "neardup/segmenter.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>

#include "segment/char_class.h"
#include "segment/data_error.h"
#include "segment/dict_trie.h"
#include "segment/hmm_model.h"
#include "util/utf8.h"

namespace neardup {

using segment::DictTrie;
using segment::IsAsciiAlnum;
using segment::IsAsciiDigit;
using segment::IsHan;
using segment::IsHanBlockChar;
using utf8::kInvalidBase;

namespace {

// Per-thread buffers of one Cut call; they only grow.
struct Scratch {
  std::vector<uint32_t> cps;  // code points (invalid bytes: kInvalidBase + byte)
  std::vector<size_t> offs;   // byte offset of each code point, plus the end
  std::vector<double> route_prob;
  std::vector<uint32_t> route_end;
  std::vector<int32_t> route_node;  // the trie node of the route's word at each index
  std::vector<uint8_t> states;
  std::vector<uint8_t> viterbi;
};

Scratch& ThreadScratch() {
  thread_local Scratch scratch;
  return scratch;
}

// Decodes `text` into s->cps / s->offs; returns the number of code points.
size_t Decode(std::string_view text, Scratch* s) {
  const size_t cap = text.size() + 1;
  if (s->cps.size() < cap) {
    s->cps.resize(cap);
    s->offs.resize(cap);
  }
  const auto* begin = reinterpret_cast<const unsigned char*>(text.data());
  const auto* end = begin + text.size();
  const auto* p = begin;
  size_t n = 0;
  uint32_t* cps = s->cps.data();
  size_t* offs = s->offs.data();
  while (p < end) {
    offs[n] = static_cast<size_t>(p - begin);
    if (*p < 0x80) {
      cps[n++] = *p++;
      continue;
    }
    // Most non-ASCII text (CJK included) is three-byte sequences led by
    // E1..EC or EE..EF, the leads that admit any two continuation bytes
    // (no overlong form, no surrogate): decoded here without utf8::Decode's
    // general checks.
    if (end - p >= 3) {
      const uint32_t b0 = p[0], b1 = p[1], b2 = p[2];
      if (b0 - 0xE1 < 0x0F && b0 != 0xED && ((b1 | b2 << 8) & 0xC0C0) == 0x8080) {
        cps[n++] = (b0 & 0x0F) << 12 | (b1 & 0x3F) << 6 | (b2 & 0x3F);
        p += 3;
        continue;
      }
    }
    int len;
    cps[n++] = utf8::Decode(p, end, &len);
    p += len;
  }
  offs[n] = text.size();
  return n;
}

Status ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return segment::MissingDataError(path);
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Status::IOError("cannot read " + path);
  *out = std::move(ss).str();
  return Status::OK();
}

bool IsAsciiSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

// bytes.strip(): ASCII whitespace.
std::string_view StripAscii(std::string_view s) {
  while (!s.empty() && IsAsciiSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsAsciiSpace(s.back())) s.remove_suffix(1);
  return s;
}

// Python int() of a decimal string with an optional sign; false on failure
// or overflow of int64.
bool ParseInt(std::string_view s, int64_t* out) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

std::vector<uint32_t> ToCodePoints(std::string_view word) {
  std::vector<uint32_t> cps;
  const auto* p = reinterpret_cast<const unsigned char*>(word.data());
  const auto* end = p + word.size();
  while (p < end) {
    int len;
    cps.push_back(utf8::Decode(p, end, &len));
    p += len;
  }
  return cps;
}

// The tag of a word without a dictionary tag (see segmenter.h): "m" for
// ASCII digits and '.' with a digit, "eng" for ASCII letters and digits with a
// letter, "x" for anything else.
std::string_view FallbackTag(std::string_view word) {
  bool digit = false, alpha = false, dot = false;
  for (char c : word) {
    if (c >= '0' && c <= '9') {
      digit = true;
    } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      alpha = true;
    } else if (c == '.') {
      dot = true;
    } else {
      return "x";
    }
  }
  if (digit && !alpha) return "m";
  if (alpha && !dot) return "eng";
  return "x";
}

}  // namespace

struct Segmenter::Impl {
  SegmenterOptions options;
  static constexpr int32_t kUnknownNode = -2;

  DictTrie dict;
  segment::HmmModel hmm;
  int64_t total = 0;
  double log_total = 0;
  bool has_force_split = false;

  Status LoadMainDict(const std::string& path);
  Status LoadUserDict(const std::string& path);
  void AddWord(const std::vector<uint32_t>& cps, int64_t freq, std::string_view tag);
  int64_t SuggestFreq(const std::vector<uint32_t>& cps);

  // Runs jieba.cut over s->cps[0, n) and calls emit(begin, end, node) per
  // token: node is the token's trie node (DictTrie::Find of its characters,
  // kNone included) where the cut found it anyway, else kUnknownNode.
  template <typename Emit>
  void CutRange(Scratch* s, size_t n, bool hmm, Emit&& emit) const;
  void ComputeRoute(const uint32_t* cps, size_t m, Scratch* s) const;
  // The trie node of the token [b, e) given node as emitted.
  int32_t NodeOf(const uint32_t* cps, size_t b, size_t e, int32_t node) const {
    return node != kUnknownNode ? node : dict.Find(cps + b, e - b);
  }
  template <typename Emit>
  void CutDag(Scratch* s, size_t b, size_t e, Emit& emit) const;
  template <typename Emit>
  void CutDagNoHmm(Scratch* s, size_t b, size_t e, Emit& emit) const;
  template <typename Emit>
  void FlushBuf(Scratch* s, size_t b, size_t e, Emit& emit) const;
  template <typename Emit>
  void FinalsegCut(Scratch* s, size_t b, size_t e, Emit& emit) const;
};

// ---------------------------------------------------------------------------
// Loading.

std::string DefaultJiebaDir() {
  const char* env = std::getenv("NEARDUP_JIEBA_DIR");
  if (env != nullptr && env[0] != '\0') return env;
  return "/usr/lib/python3/dist-packages/jieba";
}

// Tokenizer.gen_pfdict: "word freq [tag]" per line; every prefix of a word
// enters FREQ with 0; a repeated word keeps its last freq while total counts
// every line.
Status Segmenter::Impl::LoadMainDict(const std::string& path) {
  std::string text;
  NEARDUP_RETURN_IF_ERROR(ReadFile(path, &text));
  size_t line_no = 0;
  size_t pos = 0;
  std::vector<uint32_t> cps;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    const std::string_view raw(text.data() + pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    const std::string_view line = StripAscii(raw);
    auto bad = [&](const char* why) {
      return Status::Corruption(path + ":" + std::to_string(line_no) + ": " + why + ": '" +
                                utf8::Excerpt(line) + "'; " + std::string(segment::kInstallHint));
    };
    if (!utf8::IsValid(line)) return bad("not UTF-8");
    const size_t sp1 = line.find(' ');
    if (sp1 == std::string_view::npos) return bad("expected 'word freq [tag]'");
    const std::string_view word = line.substr(0, sp1);
    const size_t sp2 = line.find(' ', sp1 + 1);
    const std::string_view freq_text = line.substr(
        sp1 + 1, sp2 == std::string_view::npos ? std::string_view::npos : sp2 - sp1 - 1);
    std::string_view tag;
    if (sp2 != std::string_view::npos) {
      tag = line.substr(sp2 + 1);
      const size_t sp3 = tag.find(' ');
      if (sp3 != std::string_view::npos) tag = tag.substr(0, sp3);
    }
    int64_t freq;
    if (!ParseInt(freq_text, &freq) || freq < 0) return bad("bad frequency");
    if (word.empty()) return bad("empty word");
    if (total > std::numeric_limits<int64_t>::max() - freq) return bad("total frequency overflows");
    cps = ToCodePoints(word);
    const int32_t node = dict.Insert(cps.data(), cps.size());
    dict.set_freq(node, freq);
    total += freq;
    if (!tag.empty()) dict.set_tag(node, tag);
  }
  if (total <= 0) {
    return Status::Corruption(path + ": the dictionary is empty; " +
                              std::string(segment::kInstallHint));
  }
  log_total = std::log(static_cast<double>(total));
  return Status::OK();
}

// Tokenizer.add_word(word, freq, tag).
void Segmenter::Impl::AddWord(const std::vector<uint32_t>& cps, int64_t freq,
                              std::string_view tag) {
  const int32_t node = dict.Insert(cps.data(), cps.size());
  dict.set_freq(node, freq);
  total += freq;
  log_total = std::log(static_cast<double>(total));
  if (!tag.empty()) dict.set_tag(node, tag);
  if (freq == 0) {
    dict.set_force_split(node);
    has_force_split = true;
  }
}

// Tokenizer.suggest_freq(word, tune=False) for a str argument.
int64_t Segmenter::Impl::SuggestFreq(const std::vector<uint32_t>& cps) {
  Scratch s;
  s.cps = cps;
  s.cps.push_back(0);
  const double ftotal = static_cast<double>(total);
  double freq = 1;
  CutRange(&s, cps.size(), /*hmm=*/false, [&](size_t b, size_t e, int32_t emitted) {
    const int32_t node = NodeOf(cps.data(), b, e, emitted);
    const int64_t f = node == DictTrie::kNone ? 1 : dict.freq(node);
    freq *= static_cast<double>(f) / ftotal;
  });
  const double scaled = freq * static_cast<double>(total);
  const int64_t suggested =
      scaled >= 9.2e18 ? std::numeric_limits<int64_t>::max() - 1 : static_cast<int64_t>(scaled) + 1;
  const int32_t node = dict.Find(cps.data(), cps.size());
  const int64_t existing = node == DictTrie::kNone ? 1 : dict.freq(node);
  return std::max(suggested, existing);
}

// Tokenizer.load_userdict: re_userdict = ^(.+?)( [0-9]+)?( [a-z]+)?$ on each
// stripped, BOM-less line; the word is the shortest prefix after which the
// rest is "", " <digits>", " <letters>" or " <digits> <letters>".
Status Segmenter::Impl::LoadUserDict(const std::string& path) {
  std::string text;
  {
    std::ifstream in(path, std::ios::binary);
    if (!in) return Status::NotFound("cannot open user dictionary " + path);
    std::ostringstream ss;
    ss << in.rdbuf();
    text = std::move(ss).str();
  }
  size_t pos = 0;
  size_t line_no = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    std::string_view line = StripAscii(std::string_view(text.data() + pos, nl - pos));
    pos = nl + 1;
    ++line_no;
    if (!utf8::IsValid(line)) {
      return Status::Corruption(path + ":" + std::to_string(line_no) +
                                ": user dictionary must be UTF-8");
    }
    while (line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);  // lstrip('\ufeff')
    if (line.empty()) continue;

    auto all_of = [](std::string_view s, bool (*pred)(char)) {
      if (s.empty()) return false;
      for (char c : s) {
        if (!pred(c)) return false;
      }
      return true;
    };
    auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
    auto is_lower = [](char c) { return c >= 'a' && c <= 'z'; };
    std::string_view word = line, freq_text, tag;
    for (size_t i = 1; i <= line.size(); ++i) {
      if (i < line.size() && (static_cast<unsigned char>(line[i]) & 0xC0) == 0x80) continue;
      const std::string_view rest = line.substr(i);
      if (rest.empty()) {
        word = line;
        break;
      }
      if (rest[0] != ' ') continue;
      const std::string_view body = rest.substr(1);
      const size_t sp = body.find(' ');
      if (sp == std::string_view::npos) {
        if (all_of(body, is_digit)) {
          word = line.substr(0, i);
          freq_text = body;
          break;
        }
        if (all_of(body, is_lower)) {
          word = line.substr(0, i);
          tag = body;
          break;
        }
      } else if (all_of(body.substr(0, sp), is_digit) && all_of(body.substr(sp + 1), is_lower)) {
        word = line.substr(0, i);
        freq_text = body.substr(0, sp);
        tag = body.substr(sp + 1);
        break;
      }
    }
    const std::vector<uint32_t> cps = ToCodePoints(word);
    int64_t freq;
    if (freq_text.empty()) {
      freq = SuggestFreq(cps);
    } else if (!ParseInt(freq_text, &freq) || total > std::numeric_limits<int64_t>::max() - freq) {
      return Status::Corruption(path + ":" + std::to_string(line_no) + ": frequency too large");
    }
    AddWord(cps, freq, tag);
  }
  return Status::OK();
}

Result<std::unique_ptr<Segmenter>> Segmenter::Open(const SegmenterOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  if (impl->options.jieba_dir.empty()) impl->options.jieba_dir = DefaultJiebaDir();
  const std::string& dir = impl->options.jieba_dir;
  NEARDUP_RETURN_IF_ERROR(impl->LoadMainDict(dir + "/dict.txt"));
  NEARDUP_RETURN_IF_ERROR(impl->hmm.Load(dir + "/finalseg"));
  for (const std::string& path : impl->options.user_dicts) {
    NEARDUP_RETURN_IF_ERROR(impl->LoadUserDict(path));
  }
  impl->dict.Freeze();
  return std::unique_ptr<Segmenter>(new Segmenter(std::move(impl)));
}

Segmenter::Segmenter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Segmenter::~Segmenter() = default;

// ---------------------------------------------------------------------------
// Cutting.

// Tokenizer.calc over the block [cps, cps + m) (get_DAG included):
// route_end[idx] is the last character of the best word starting at idx;
// ties go to the longer word (Python's max over (prob, x) tuples).
//
// One backward pass: the walk from each start idx (the words of DAG[idx], x
// ascending) is scored as it goes, since prob[x + 1] is already known for
// every x >= idx; no DAG is materialized. A walk's first step (the root's
// direct table) and the search for its second (DictTrie::Prepare: the wide
// node filter, the sample search, a prefetch of the children's cache line)
// are done kAhead starts early, so that the miss into the children of the
// next walks overlaps this one. The filters of two- and three-character
// prefixes (DictTrie::MayHavePair, MayHaveTriple), keyed by code points and
// prefetched 2 kAhead and kAhead starts early, answer most absent second and
// third steps without touching the records.
void Segmenter::Impl::ComputeRoute(const uint32_t* cps, size_t m, Scratch* s) const {
  if (s->route_prob.size() < m + 1) {
    s->route_prob.resize(m + 1);
    s->route_end.resize(m + 1);
    s->route_node.resize(m + 1);
  }
  double* prob = s->route_prob.data();
  uint32_t* end = s->route_end.data();
  int32_t* route_node = s->route_node.data();
  prob[m] = 0;
  end[m] = 0;
  const double lt = log_total;
  // The first step of the walk from a start and the probe of its second.
  struct Head {
    bool found, second;
    DictTrie::Step step;
    DictTrie::Probe probe;
    uint64_t triple;  // DictTrie::TripleHash of [i, i + 3) when second and i + 2 < m
  };
  constexpr size_t kAhead = 6, kRing = 8;
  Head heads[kRing];
  const auto prepare = [&](size_t i) {
    Head& h = heads[i % kRing];
    h.found = dict.First(cps[i], &h.step);
    h.second = h.found && h.step.has_children && i + 1 < m;
    if (h.second) h.second = dict.MayHavePair(DictTrie::PairHash(cps + i));
    if (h.second) {
      h.probe = dict.Prepare(h.step.child, cps[i + 1]);
      if (i + 2 < m) {
        h.triple = DictTrie::TripleHash(cps + i);
        dict.PrefetchTriple(h.triple);
      }
    }
  };
  for (size_t i = m; i-- > 0 && i + kAhead >= m;) prepare(i);
  for (size_t idx = m; idx-- > 0;) {
    if (idx >= 2 * kAhead) dict.PrefetchPair(DictTrie::PairHash(cps + idx - 2 * kAhead));
    if (idx >= kAhead) prepare(idx - kAhead);
    const Head& h = heads[idx % kRing];
    bool found = false;
    double best = 0;
    size_t best_end = idx;
    int32_t best_node = DictTrie::kNone;
    if (h.found) {
      DictTrie::Step step = h.step;
      bool more = h.second;
      if (step.log_freq_or_minus_one >= 0) {
        best = step.log_freq_or_minus_one - lt + prob[idx + 1];
        best_end = idx;
        best_node = step.child;
        found = true;
      }
      if (more && dict.Next(h.probe, cps[idx + 1], &step)) {
        for (size_t x = idx + 1;; ++x) {
          if (step.log_freq_or_minus_one >= 0) {
            const double p = step.log_freq_or_minus_one - lt + prob[x + 1];
            if (!found || p >= best) {
              best = p;
              best_end = x;
              best_node = step.child;
              found = true;
            }
          }
          if (!step.has_children || x + 1 >= m) break;
          if (x == idx + 1 && !dict.MayHaveTriple(h.triple)) break;
          if (!dict.Next(step.child, cps[x + 1], &step)) break;
        }
      }
    }
    if (!found) best = 0.0 - lt + prob[idx + 1];  // log(FREQ.get(c) or 1) == 0
    prob[idx] = best;
    end[idx] = static_cast<uint32_t>(best_end);
    route_node[idx] = best_node;
  }
}

// finalseg.cut over characters [b, e) (all from a han block).
template <typename Emit>
void Segmenter::Impl::FinalsegCut(Scratch* s, size_t b, size_t e, Emit& emit) const {
  const uint32_t* cps = s->cps.data();
  size_t p = b;
  while (p < e) {
    size_t q = p;
    if (IsHan(cps[p])) {
      while (q < e && IsHan(cps[q])) ++q;
      const size_t n = q - p;
      if (s->states.size() < n) s->states.resize(n);
      uint8_t* st = s->states.data();
      hmm.Viterbi(cps + p, n, st, &s->viterbi);
      auto out = [&](size_t wb, size_t we) {
        if (has_force_split && we - wb > 1) {
          const int32_t node = dict.Find(cps + wb, we - wb);
          if (node != DictTrie::kNone && dict.force_split(node)) {
            for (size_t c = wb; c < we; ++c) emit(c, c + 1, kUnknownNode);
            return;
          }
        }
        emit(wb, we, kUnknownNode);
      };
      size_t begin = 0, next = 0;
      for (size_t i = 0; i < n; ++i) {
        switch (st[i]) {
          case segment::kB:
            begin = i;
            break;
          case segment::kE:
            out(p + begin, p + i + 1);
            next = i + 1;
            break;
          case segment::kS:
            out(p + i, p + i + 1);
            next = i + 1;
            break;
          default:
            break;
        }
      }
      if (next < n) out(p + next, q);
    } else {
      // re_skip = ([a-zA-Z0-9]+(?:\.\d+)?%?); split() yields the matches and
      // the non-empty text between them.
      while (q < e && !IsHan(cps[q])) ++q;
      size_t pending = p;
      size_t r = p;
      while (r < q) {
        if (!IsAsciiAlnum(cps[r])) {
          ++r;
          continue;
        }
        size_t t = r;
        while (t < q && IsAsciiAlnum(cps[t])) ++t;
        if (t + 1 < q && cps[t] == '.' && IsAsciiDigit(cps[t + 1])) {
          t += 2;
          while (t < q && IsAsciiDigit(cps[t])) ++t;
        }
        if (t < q && cps[t] == '%') ++t;
        if (pending < r) emit(pending, r, kUnknownNode);
        emit(r, t, kUnknownNode);
        r = pending = t;
      }
      if (pending < q) emit(pending, q, kUnknownNode);
    }
    p = q;
  }
}

// The buffered run of single-character route steps [b, e) of __cut_DAG.
template <typename Emit>
void Segmenter::Impl::FlushBuf(Scratch* s, size_t b, size_t e, Emit& emit) const {
  if (e - b == 1) {
    emit(b, e, kUnknownNode);
    return;
  }
  const int32_t node = dict.Find(s->cps.data() + b, e - b);
  if (node == DictTrie::kNone || dict.freq(node) == 0) {  // not FREQ.get(buf)
    FinalsegCut(s, b, e, emit);
  } else {
    for (size_t c = b; c < e; ++c) emit(c, c + 1, kUnknownNode);
  }
}

// Tokenizer.__cut_DAG over the han block [b, e).
template <typename Emit>
void Segmenter::Impl::CutDag(Scratch* s, size_t b, size_t e, Emit& emit) const {
  const size_t m = e - b;
  ComputeRoute(s->cps.data() + b, m, s);
  size_t x = 0;
  size_t buf_begin = 0;
  bool buf = false;
  while (x < m) {
    const size_t y = s->route_end[x] + 1;
    if (y - x == 1) {
      if (!buf) {
        buf = true;
        buf_begin = x;
      }
    } else {
      if (buf) {
        FlushBuf(s, b + buf_begin, b + x, emit);
        buf = false;
      }
      emit(b + x, b + y, s->route_node[x]);
    }
    x = y;
  }
  if (buf) FlushBuf(s, b + buf_begin, b + m, emit);
}

// Tokenizer.__cut_DAG_NO_HMM over the han block [b, e): runs of single ASCII
// letters/digits (re_eng) are joined.
template <typename Emit>
void Segmenter::Impl::CutDagNoHmm(Scratch* s, size_t b, size_t e, Emit& emit) const {
  const size_t m = e - b;
  ComputeRoute(s->cps.data() + b, m, s);
  const uint32_t* cps = s->cps.data() + b;
  size_t x = 0;
  size_t buf_begin = 0;
  bool buf = false;
  while (x < m) {
    const size_t y = s->route_end[x] + 1;
    if (y - x == 1 && IsAsciiAlnum(cps[x])) {
      if (!buf) {
        buf = true;
        buf_begin = x;
      }
    } else {
      if (buf) {
        emit(b + buf_begin, b + x, kUnknownNode);
        buf = false;
      }
      emit(b + x, b + y, y - x > 1 ? s->route_node[x] : kUnknownNode);
    }
    x = y;
  }
  if (buf) emit(b + buf_begin, b + m, kUnknownNode);
}

// Tokenizer.cut: re_han_default splits the text into han blocks (cut by the
// DAG) and the rest, which re_skip_default = (\r\n|\s) cuts into "\r\n",
// single whitespace characters and single other characters.
template <typename Emit>
void Segmenter::Impl::CutRange(Scratch* s, size_t n, bool use_hmm, Emit&& emit) const {
  const uint32_t* cps = s->cps.data();
  size_t i = 0;
  while (i < n) {
    if (IsHanBlockChar(cps[i])) {
      size_t j = i + 1;
      while (j < n && IsHanBlockChar(cps[j])) ++j;
      if (use_hmm) {
        CutDag(s, i, j, emit);
      } else {
        CutDagNoHmm(s, i, j, emit);
      }
      i = j;
    } else if (cps[i] == '\r' && i + 1 < n && cps[i + 1] == '\n') {
      emit(i, i + 2, kUnknownNode);
      i += 2;
    } else {
      emit(i, i + 1, kUnknownNode);
      ++i;
    }
  }
}

void Segmenter::Cut(std::string_view utf8_text, std::vector<std::string_view>* words) const {
  words->clear();
  Scratch& s = ThreadScratch();
  const size_t n = Decode(utf8_text, &s);
  const size_t* offs = s.offs.data();
  const char* base = utf8_text.data();
  impl_->CutRange(&s, n, impl_->options.hmm, [&](size_t b, size_t e, int32_t) {
    words->emplace_back(base + offs[b], offs[e] - offs[b]);
  });
}

void Segmenter::CutWithWordIds(std::string_view utf8_text, std::vector<std::string_view>* words,
                               std::vector<int32_t>* ids) const {
  words->clear();
  ids->clear();
  Scratch& s = ThreadScratch();
  const size_t n = Decode(utf8_text, &s);
  const size_t* offs = s.offs.data();
  const uint32_t* cps = s.cps.data();
  const char* base = utf8_text.data();
  impl_->CutRange(&s, n, impl_->options.hmm, [&](size_t b, size_t e, int32_t node) {
    words->emplace_back(base + offs[b], offs[e] - offs[b]);
    ids->push_back(impl_->NodeOf(cps, b, e, node));
  });
}

void Segmenter::CutWithPos(std::string_view utf8_text, std::vector<Token>* tokens) const {
  tokens->clear();
  Scratch& s = ThreadScratch();
  const size_t n = Decode(utf8_text, &s);
  const size_t* offs = s.offs.data();
  const uint32_t* cps = s.cps.data();
  const char* base = utf8_text.data();
  const DictTrie& dict = impl_->dict;
  impl_->CutRange(&s, n, impl_->options.hmm, [&](size_t b, size_t e, int32_t emitted) {
    const std::string_view word(base + offs[b], offs[e] - offs[b]);
    const int32_t node = impl_->NodeOf(cps, b, e, emitted);
    std::string_view tag;
    if (node != DictTrie::kNone) tag = dict.tag(node);
    if (tag.empty()) tag = FallbackTag(word);
    tokens->push_back(Token{word, tag});
  });
}

std::optional<std::string_view> Segmenter::Tag(std::string_view word) const {
  const int32_t node = impl_->dict.FindUtf8(word);
  if (node == DictTrie::kNone) return std::nullopt;
  const std::string_view tag = impl_->dict.tag(node);
  if (tag.empty()) return std::nullopt;
  return tag;
}

std::string_view Segmenter::TagOrFallback(std::string_view word) const {
  const std::optional<std::string_view> tag = Tag(word);
  return tag ? *tag : FallbackTag(word);
}

int64_t Segmenter::Frequency(std::string_view word) const {
  const int32_t node = impl_->dict.FindUtf8(word);
  return node == DictTrie::kNone ? 0 : impl_->dict.freq(node);
}

int32_t Segmenter::WordId(std::string_view word) const {
  const int32_t node = impl_->dict.FindUtf8(word);
  return node == DictTrie::kNone ? -1 : node;
}

size_t Segmenter::word_id_count() const { return impl_->dict.node_count(); }

int64_t Segmenter::total_frequency() const { return impl_->total; }
const SegmenterOptions& Segmenter::options() const { return impl_->options; }

}  // namespace neardup
