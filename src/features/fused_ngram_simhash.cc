// Copyright 2026 The neardup Authors.

#include "features/fused_ngram_simhash.h"

#include <unicode/uchar.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <vector>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "text/nfkc_casefold_table.h"

namespace neardup {
namespace {

using NfkcTable = text::NfkcCasefoldTable;

// Per-code-point flags of the fused pass. A code point with none of kKeep,
// kSkip, kMap is declined (its normalization needs ICU).
constexpr uint8_t kBefore = 1;  // a normalization boundary before it
constexpr uint8_t kAfter = 2;   // a normalization boundary after it
constexpr uint8_t kKeep = 4;    // normalizes to itself, a content character
constexpr uint8_t kSkip = 8;    // its normalization has no content character
constexpr uint8_t kMap = 16;    // normalizes to NfkcTable::Mapping(c), with content

// Content characters: letters (Han included) and digits, as the n-gram
// extractor's CollectContent keeps them (features.cc).
bool IsContent(UChar32 c) { return u_isalnum(c) != 0; }

// A 128-bit integer: 5 code points of 21 bits side by side identify an
// n-gram exactly (n <= 5).
__extension__ using U128 = unsigned __int128;
constexpr int kCodePointBits = 21;
constexpr int kMaxNgram = 5;

// The distinct n-grams of one document, keyed by their code points (exact:
// no hash collision can merge two n-grams). Open addressing with linear
// probing; each slot holds the key's low 64 bits and its high 41 bits with a
// 23-bit generation above them: a slot whose generation is not the current
// document's is empty, so starting a document clears nothing (the table is
// zeroed once per 2^23 - 1 documents, when the generation wraps). One thread
// reuses its table across documents; a document uses the first `capacity`
// slots, sized to it, and grows them when half full.
class GramSet {
 public:
  // Starts a document of about `expected` n-grams.
  void Begin(size_t expected) {
    NextGeneration();
    // A sparse table probes less: 4 slots per code point ran 1.1x faster
    // than 2 (THUCNews, BBC); past 2^16 code points, 2 bound the memory
    // (32 bytes per code point).
    const size_t slots = expected <= (size_t{1} << 16) ? 4 * expected : 2 * expected;
    SetCapacity(std::max<size_t>(64, std::bit_ceil(slots)));
    size_ = 0;
  }

  // The key's hash; its top bits pick the slot.
  static uint64_t Mix(uint64_t lo, uint64_t hi) {
    return (lo ^ (hi * 0x9E3779B97F4A7C15ull)) * 0xD6E8FEB86659FD93ull;
  }
  void Prefetch(uint64_t mix) const { __builtin_prefetch(&slots_[mix >> shift_]); }

  // Inserts the key (lo, hi), whose Mix() is `mix`; true when it was not
  // there. REQUIRES: hi < 2^41.
  [[gnu::always_inline]] bool Insert(uint64_t lo, uint64_t hi, uint64_t mix) {
    const uint64_t tagged = hi | generation_ << kGenerationShift;
    for (size_t i = mix >> shift_;; i = (i + 1) & mask_) {
      Slot& slot = slots_[i];
      if (slot.hi >> kGenerationShift != generation_) {
        slot = {lo, tagged};
        if (++size_ * 2 > mask_ + 1) Grow();
        return true;
      }
      if (slot.lo == lo && slot.hi == tagged) return false;
    }
  }

 private:
  struct Slot {
    uint64_t lo = 0, hi = 0;
  };
  static constexpr int kGenerationShift = 41;
  static constexpr uint64_t kMaxGeneration = (uint64_t{1} << (64 - kGenerationShift)) - 1;

  void NextGeneration() {
    if (++generation_ > kMaxGeneration) {
      std::fill(slots_.begin(), slots_.end(), Slot{});
      generation_ = 1;
    }
  }

  void SetCapacity(size_t capacity) {
    if (slots_.size() < capacity) slots_.resize(capacity);  // new slots: generation 0, empty
    mask_ = capacity - 1;
    shift_ = 64 - std::countr_zero(capacity);
  }

  // Doubles the capacity: the document's keys move to a new generation.
  [[gnu::noinline]] void Grow() {
    moved_.clear();
    for (size_t i = 0; i <= mask_; ++i) {
      if (slots_[i].hi >> kGenerationShift == generation_) moved_.push_back(slots_[i]);
    }
    NextGeneration();
    SetCapacity(2 * (mask_ + 1));
    const uint64_t low_bits = (uint64_t{1} << kGenerationShift) - 1;
    for (const Slot& s : moved_) {
      const uint64_t hi = s.hi & low_bits;
      size_t i = Mix(s.lo, hi) >> shift_;
      while (slots_[i].hi >> kGenerationShift == generation_) i = (i + 1) & mask_;
      slots_[i] = {s.lo, hi | generation_ << kGenerationShift};
    }
  }

  std::vector<Slot> slots_;
  std::vector<Slot> moved_;
  uint64_t generation_ = 0;
  size_t mask_ = 0;
  int shift_ = 64;
  size_t size_ = 0;
};

GramSet& ThreadGramSet() {
  thread_local GramSet set;
  return set;
}

// The number of code points of `text` (its bytes that are not UTF-8
// continuation bytes): about the number of n-grams, to size the table.
// A plain loop the compiler vectorizes.
size_t CodePointCount(std::string_view text) {
  size_t count = 0;
  for (char c : text) count += (static_cast<uint8_t>(c) & 0xC0) != 0x80 ? 1 : 0;
  return count;
}

// HashFeature(gram, 64).lo: XXH3_64bits. XXH3's own dispatch on the length,
// minus the lengths an n-gram of n <= 5 never has (<= 20 bytes), inlined.
[[gnu::always_inline]] inline uint64_t GramHash64(const uint8_t* p, size_t len) {
  return len <= 16 ? XXH3_len_0to16_64b(p, len, XXH3_kSecret, 0)
                   : XXH3_len_17to128_64b(p, len, XXH3_kSecret, sizeof(XXH3_kSecret), 0);
}

// HashFeature(gram, kBits) (XXH3) added to *hasher; with kSet,
// HashFeature(gram, 64).lo appended to *set (at 64 bits the hash the hasher
// takes, at 128 one more hash: XXH3's 128-bit low half is not it).
template <int kBits, bool kSet>
[[gnu::always_inline]] inline void AddGram(const uint8_t* p, size_t len, UnitSimHasher* hasher,
                                           std::vector<uint64_t>* set) {
  if constexpr (kBits == 64) {
    const uint64_t h = GramHash64(p, len);
    hasher->Add(0, h);
    if constexpr (kSet) set->push_back(h);
  } else {
    if constexpr (kSet) set->push_back(GramHash64(p, len));
    const XXH128_hash_t h =
        len <= 16 ? XXH3_len_0to16_128b(p, len, XXH3_kSecret, 0)
                  : XXH3_len_17to128_128b(p, len, XXH3_kSecret, sizeof(XXH3_kSecret), 0);
    hasher->Add(h.high64, h.low64);
  }
}

// Eight ASCII bytes at once (SWAR): bit 7 of each byte of the result is
// set where the byte of `w` lies in [lo, hi]. REQUIRES: every byte of w
// below 0x80, lo >= 1.
inline uint64_t InRange(uint64_t w, uint8_t lo, uint8_t hi) {
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  constexpr uint64_t kHigh = 0x8080808080808080ull;
  const uint64_t ge_lo = w + kOnes * (0x80 - lo);     // bit 7: w >= lo
  const uint64_t le_hi = ~(w + kOnes * (0x7F - hi));  // bit 7: w <= hi
  return ge_lo & le_hi & kHigh;
}

}  // namespace

struct FusedNgramSimHash::Tables {
  const NfkcTable* nfkc = nullptr;  // null: no normalization
  std::vector<uint8_t> flags;       // per BMP code point
  // ASCII: the flags, and the byte a content character becomes (lower case
  // under NFKC_Casefold).
  std::array<uint8_t, 128> ascii_flags{};
  std::array<uint8_t, 128> ascii_byte{};
  // The pass may take sixteen ASCII bytes at a time (InRange): the tables
  // say that every ASCII character has a normalization boundary before it,
  // that the digits and letters are kept (upper case as lower case) and the
  // rest skipped, and the machine is little-endian.
  bool ascii_words = false;

  uint8_t Flags(UChar32 c) const {
    if (c < 0x10000) return flags[static_cast<size_t>(c)];
    const uint8_t f = nfkc != nullptr ? nfkc->Flags(c)
                                      : NfkcTable::kBoundaryBefore | NfkcTable::kBoundaryAfter |
                                            NfkcTable::kUnchanged;
    return Classify(c, f);
  }

  // The fused flags of `c` from its NfkcTable flags `f`.
  uint8_t Classify(UChar32 c, uint8_t f) const {
    uint8_t out = 0;
    if ((f & NfkcTable::kBoundaryBefore) != 0) out |= kBefore;
    if ((f & NfkcTable::kBoundaryAfter) != 0) out |= kAfter;
    if ((f & NfkcTable::kUnchanged) != 0) return out | (IsContent(c) ? kKeep : kSkip);
    if ((f & NfkcTable::kMapped) == 0) return out;  // ICU
    const std::string_view m = nfkc->Mapping(c);
    int32_t i = 0;
    while (i < static_cast<int32_t>(m.size())) {
      UChar32 d;
      U8_NEXT(m.data(), i, static_cast<int32_t>(m.size()), d);
      if (d >= 0 && IsContent(d)) return out | kMap;
    }
    return out | kSkip;
  }
};

std::unique_ptr<FusedNgramSimHash> FusedNgramSimHash::Create(const PipelineOptions& options) {
  const FeatureOptions& f = options.features;
  if (f.kind != FeatureKind::kCharNgrams || f.ngram < 1 || f.ngram > kMaxNgram ||
      f.weights != WeightScheme::kUniform || f.top_k != 0 ||
      options.hash != FeatureHashAlgorithm::kXxh3 || (options.bits != 64 && options.bits != 128) ||
      !options.normalize.t2s.empty()) {
    return nullptr;
  }
  auto tables = std::make_unique<Tables>();
  if (options.normalize.nfkc_casefold) {
    UErrorCode status = U_ZERO_ERROR;
    const icu::Normalizer2* n = icu::Normalizer2::getNFKCCasefoldInstance(status);
    if (U_FAILURE(status)) return nullptr;
    tables->nfkc = &NfkcTable::Get(n);
  }
  tables->flags.resize(0x10000);
  for (UChar32 c = 0; c < 0x10000; ++c) {
    if (U_IS_SURROGATE(c)) continue;  // never decoded from valid UTF-8
    const uint8_t f =
        tables->nfkc != nullptr
            ? tables->nfkc->Flags(c)
            : NfkcTable::kBoundaryBefore | NfkcTable::kBoundaryAfter | NfkcTable::kUnchanged;
    tables->flags[static_cast<size_t>(c)] = tables->Classify(c, f);
  }
  for (UChar32 c = 0; c < 0x80; ++c) {
    uint8_t f = tables->flags[static_cast<size_t>(c)];
    uint8_t byte = static_cast<uint8_t>(c);
    if ((f & kMap) != 0) {
      // Upper-case letters: one ASCII letter; anything else is declined.
      const std::string_view m = tables->nfkc->Mapping(c);
      if (m.size() == 1 && static_cast<unsigned char>(m[0]) < 0x80) {
        byte = static_cast<uint8_t>(m[0]);
        f = static_cast<uint8_t>((f & ~kMap) | kKeep);
      } else {
        f &= ~kMap;
      }
    }
    tables->ascii_flags[static_cast<size_t>(c)] = f;
    tables->ascii_byte[static_cast<size_t>(c)] = byte;
  }
  tables->ascii_words = std::endian::native == std::endian::little;
  for (int c = 0; c < 0x80; ++c) {
    const uint8_t f = tables->ascii_flags[static_cast<size_t>(c)];
    const bool upper = c >= 'A' && c <= 'Z';
    const bool keep = (c >= '0' && c <= '9') || upper || (c >= 'a' && c <= 'z');
    const int byte = upper ? c + ('a' - 'A') : c;
    if ((f & kBefore) == 0 || ((f & kKeep) != 0) != keep || ((f & kSkip) != 0) == keep ||
        (keep && tables->ascii_byte[static_cast<size_t>(c)] != byte)) {
      tables->ascii_words = false;
    }
  }
  return std::unique_ptr<FusedNgramSimHash>(
      new FusedNgramSimHash(f.ngram, options.bits, std::move(tables)));
}

FusedNgramSimHash::FusedNgramSimHash(int ngram, int bits, std::unique_ptr<Tables> tables)
    : ngram_(ngram), bits_(bits), tables_(std::move(tables)) {}

FusedNgramSimHash::~FusedNgramSimHash() = default;

namespace {

// The pass for n = kN at kBits bits (see the header); with kSet, the
// distinct n-grams' 64-bit hashes go to *hashes.
template <int kN, int kBits, bool kSet>
bool FusedPass(const FusedNgramSimHash::Tables& t, std::string_view text, DocumentFingerprint* out,
               std::vector<uint64_t>* hashes) {
  static_assert(kN >= 1 && kN <= kMaxNgram);
  // Each n-gram's table slot is prefetched when the n-gram is complete and
  // the n-gram is looked up kDelay n-grams later (the table is mostly
  // outside L1). pending[g % kDelay] is n-gram g waiting.
  constexpr size_t kDelay = 8;
  struct Pending {
    uint64_t lo, hi;      // the key
    uint64_t mix;         // GramSet::Mix(lo, hi)
    uint32_t begin, end;  // its bytes in buf
  };
  Pending pending[kDelay];
  // The UTF-8 bytes of the content code points, appended; when it fills up,
  // only the bytes of the pending n-grams and of the next one stay (the last
  // kKeep code points). off[k % 16] is where content code point k starts.
  constexpr uint32_t kBuffer = 256;
  constexpr size_t kKeepCodePoints = kN - 1 + kDelay;
  static_assert(kKeepCodePoints < 16 && 4 * kKeepCodePoints + 4 < kBuffer);
  uint8_t buf[kBuffer + 4];
  uint32_t off[16];
  uint32_t pos = 0;
  size_t count = 0;     // content code points so far
  size_t grams = 0;     // n-grams so far
  size_t distinct = 0;  // distinct n-grams so far
  U128 key = 0;         // the last kN content code points, 21 bits each
  constexpr U128 kKeyMask = (U128{1} << (kCodePointBits * kN)) - 1;
  GramSet& set = ThreadGramSet();
  UnitSimHasher hasher(kBits);
  const size_t code_points = CodePointCount(text);
  set.Begin(code_points);
  if constexpr (kSet) {
    hashes->clear();
    hashes->reserve(code_points);  // >= the distinct n-grams, but for the rare mappings
  }

  auto lookup = [&](const Pending& p) {
    if (set.Insert(p.lo, p.hi, p.mix)) {
      AddGram<kBits, kSet>(buf + p.begin, p.end - p.begin, &hasher, hashes);
      ++distinct;
    }
  };

  // Appends content code point c (its UTF-8 in the low `len` bytes of
  // `bytes`, first byte lowest) and counts the n-gram it ends. (Inlined at
  // each of its calls: GCC 12 made it a function call once it had four,
  // and the pass ran ~15 % slower.)
  auto emit = [&](UChar32 c, uint32_t bytes, uint32_t len) __attribute__((always_inline)) {
    if (pos + 4 > kBuffer) {
      // count > kKeepCodePoints here (each code point takes <= 4 bytes).
      const uint32_t from = off[(count - kKeepCodePoints) % 16];
      std::memmove(buf, buf + from, pos - from);
      for (size_t k = count - kKeepCodePoints; k < count; ++k) off[k % 16] -= from;
      for (Pending& p : pending) {
        p.begin -= from;  // (wraps for n-grams already looked up: unused)
        p.end -= from;
      }
      pos -= from;
    }
    off[count % 16] = pos;
    std::memcpy(buf + pos, &bytes, 4);
    pos += len;
    ++count;
    key = ((key << kCodePointBits) | static_cast<uint32_t>(c)) & kKeyMask;
    if (count >= kN) {
      Pending& p = pending[grams % kDelay];
      if (grams >= kDelay) lookup(p);
      const auto lo = static_cast<uint64_t>(key);
      const auto hi = static_cast<uint64_t>(key >> 64);
      p = {lo, hi, GramSet::Mix(lo, hi), off[(count - kN) % 16], pos};
      set.Prefetch(p.mix);
      ++grams;
    }
  };

  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  bool boundary = true;  // a normalization boundary after the previous code point
  while (i < n) {
    const uint8_t b = s[i];
    if (b < 0x80) {
      uint64_t w[2];
      if (t.ascii_words && n - i >= 16 &&
          (std::memcpy(w, s + i, 16), ((w[0] | w[1]) & 0x8080808080808080ull) == 0)) {
        // Sixteen ASCII bytes: their digits and letters (lower-cased) kept,
        // in order, the rest skipped, with no branch per byte.
        uint8_t lower[16];
        uint32_t keep = 0;
        for (int h = 0; h < 2; ++h) {
          const uint64_t upper = InRange(w[h], 'A', 'Z');
          const uint64_t k = upper | InRange(w[h], 'a', 'z') | InRange(w[h], '0', '9');
          const uint64_t l = w[h] | upper >> 2;  // 0x80 >> 2: the case bit
          std::memcpy(lower + 8 * h, &l, 8);
          // Bit 7 of byte j to bit j.
          keep |= static_cast<uint32_t>(((k >> 7) * 0x0102040810204080ull) >> 56) << (8 * h);
        }
        for (; keep != 0; keep &= keep - 1) {
          const uint8_t c = lower[std::countr_zero(keep)];
          emit(c, c, 1);
        }
        boundary = (t.ascii_flags[s[i + 15]] & kAfter) != 0;
        i += 16;
        continue;
      }
      const uint8_t f = t.ascii_flags[b];
      if ((f & kBefore) == 0 && !boundary) return false;
      boundary = (f & kAfter) != 0;
      ++i;
      if ((f & kKeep) != 0) {
        emit(t.ascii_byte[b], t.ascii_byte[b], 1);
      } else if ((f & kSkip) == 0) {
        return false;
      }
      continue;
    }
    const size_t start = i;
    UChar32 c;
    if ((b & 0xF0) == 0xE0 && n - i >= 3 && (s[i + 1] & 0xC0) == 0x80 &&
        (s[i + 2] & 0xC0) == 0x80 && (((b & 0x0F) | (s[i + 1] & 0x20)) != 0)) {
      // Three bytes (CJK): not overlong (>= U+0800). A surrogate has flags 0
      // and is declined below, as U8_NEXT would refuse it.
      c = ((b & 0x0F) << 12) | ((s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F);
      i += 3;
    } else {
      U8_NEXT(s, i, n, c);
      if (c < 0) return false;
    }
    const uint8_t f = t.Flags(c);
    // Two code points in one normalization piece: ICU's business.
    if ((f & kBefore) == 0 && !boundary) return false;
    boundary = (f & kAfter) != 0;
    if ((f & kKeep) != 0) {
      const auto len = static_cast<uint32_t>(i - start);
      uint32_t bytes = 0;
      if (n - start >= 4) {
        std::memcpy(&bytes, s + start, 4);
      } else {
        std::memcpy(&bytes, s + start, len);
      }
      emit(c, bytes, len);
    } else if ((f & kMap) != 0) {
      const std::string_view m = t.nfkc->Mapping(c);
      int32_t j = 0;
      while (j < static_cast<int32_t>(m.size())) {
        const int32_t from = j;
        UChar32 d;
        U8_NEXT(m.data(), j, static_cast<int32_t>(m.size()), d);
        if (d < 0 || !IsContent(d)) continue;
        uint32_t bytes = 0;
        std::memcpy(&bytes, m.data() + from, static_cast<size_t>(j - from));
        emit(d, bytes, static_cast<uint32_t>(j - from));
      }
    } else if ((f & kSkip) == 0) {
      return false;
    }
  }
  for (size_t g = grams > kDelay ? grams - kDelay : 0; g < grams; ++g) lookup(pending[g % kDelay]);
  if (count > 0 && count < kN) {
    // Shorter than one n-gram: the whole content is the one feature.
    AddGram<kBits, kSet>(buf, pos, &hasher, hashes);
    distinct = 1;
  }
  out->fingerprint = hasher.Finish();
  out->features = distinct;
  return true;
}

template <int kBits, bool kSet>
bool FusedPassFor(int ngram, const FusedNgramSimHash::Tables& t, std::string_view text,
                  DocumentFingerprint* out, std::vector<uint64_t>* hashes) {
  switch (ngram) {
    case 1:
      return FusedPass<1, kBits, kSet>(t, text, out, hashes);
    case 2:
      return FusedPass<2, kBits, kSet>(t, text, out, hashes);
    case 3:
      return FusedPass<3, kBits, kSet>(t, text, out, hashes);
    case 4:
      return FusedPass<4, kBits, kSet>(t, text, out, hashes);
    default:
      return FusedPass<5, kBits, kSet>(t, text, out, hashes);
  }
}

}  // namespace

bool FusedNgramSimHash::Fingerprint(std::string_view text, DocumentFingerprint* out,
                                    std::vector<uint64_t>* set) const {
  if (set != nullptr) {
    return bits_ == 128 ? FusedPassFor<128, true>(ngram_, *tables_, text, out, set)
                        : FusedPassFor<64, true>(ngram_, *tables_, text, out, set);
  }
  return bits_ == 128 ? FusedPassFor<128, false>(ngram_, *tables_, text, out, nullptr)
                      : FusedPassFor<64, false>(ngram_, *tables_, text, out, nullptr);
}

}  // namespace neardup
