// Copyright 2026 The neardup Authors.

#include "features/fused_ngram_simhash.h"

#include <unicode/uchar.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <type_traits>
#include <vector>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define NEARDUP_FUSED_X86 1
#else
#define NEARDUP_FUSED_X86 0
#endif

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

// The keys of the n-gram tables below, each slot a key with the generation
// of the document that stored it above the key's bits.
//
// Any n-gram (n <= 5): its code points, 21 bits each, as a 128-bit integer
// (low word, high 41 bits), with a 23-bit generation.
struct WideSlot {
  static constexpr int kGenerationShift = 41;
  static constexpr size_t kSparse = 4;
  uint64_t lo = 0, hi = 0;

  uint64_t Generation() const { return hi >> kGenerationShift; }
  WideSlot Tagged(uint64_t generation) const { return {lo, hi | generation << kGenerationShift}; }
  WideSlot Key() const { return {lo, hi & ((uint64_t{1} << kGenerationShift) - 1)}; }
  bool operator==(const WideSlot&) const = default;
  // The key's hash; its top bits pick the slot.
  uint64_t Mix() const { return (lo ^ (hi * 0x9E3779B97F4A7C15ull)) * 0xD6E8FEB86659FD93ull; }
};

// An n-gram of ASCII code points only (English: nearly all): its code
// points as bytes, the first lowest (its UTF-8, as XXH3 reads it), at most
// 40 bits, with a 24-bit generation in one word. Half a WideSlot, one
// multiply to mix, one compare (the table is twice as sparse for the same
// bytes: fewer probes). The key is also the n-gram's bytes: an all-ASCII
// chunk makes it with one load from the chunk's bytes, and the hash takes it
// from the key, not from the chunk.
struct AsciiSlot {
  static constexpr int kGenerationShift = 8 * kMaxNgram;
  static constexpr size_t kSparse = 8;
  uint64_t v = 0;

  uint64_t Generation() const { return v >> kGenerationShift; }
  AsciiSlot Tagged(uint64_t generation) const { return {v | generation << kGenerationShift}; }
  AsciiSlot Key() const { return {v & ((uint64_t{1} << kGenerationShift) - 1)}; }
  bool operator==(const AsciiSlot&) const = default;
  uint64_t Mix() const { return v * 0x9E3779B97F4A7C15ull; }
};

// An n-gram waiting to be looked up: its key, key.Mix(), its UTF-8 bytes.
template <typename Slot>
struct Gram {
  Slot key;
  uint64_t mix;
  uint32_t begin, end;
};

// An ASCII n-gram's bytes are its key.
template <>
struct Gram<AsciiSlot> {
  AsciiSlot key;
  uint64_t mix;
};

// The distinct n-grams of one document, keyed by their code points (exact:
// no hash collision can merge two n-grams). Open addressing with linear
// probing; each slot holds a key and the generation of the document that
// stored it: a slot whose generation is not the current document's is
// empty, so starting a document clears nothing (the table is zeroed once
// per 2^23 - 1 or 2^29 - 1 documents, when the generation wraps). One
// thread reuses its table across documents; a document uses the first
// `capacity` slots, sized to it, and grows them when half full.
template <typename Slot>
class GramSet {
 public:
  // Starts a document of about `expected` n-grams.
  void Begin(size_t expected) {
    NextGeneration();
    // A sparse table probes less: Slot::kSparse slots per code point (16-byte
    // slots: 4 ran 1.1x faster than 2 on THUCNews and BBC; 8-byte slots, BBC:
    // 8 ran 1.02-1.04x faster than 4, 2 1.07x slower); past 2^16 code
    // points, 2 bound the memory (16 or 32 bytes per code point).
    const size_t slots = expected <= (size_t{1} << 16) ? Slot::kSparse * expected : 2 * expected;
    SetCapacity(std::max<size_t>(64, std::bit_ceil(slots)));
    size_ = 0;
  }

  // Prefetches the home slot of a key whose Mix() is `mix`; a copy of the
  // table's address and shift, for a loop that stores 64-bit words.
  class Prefetcher {
   public:
    void operator()(uint64_t mix) const { __builtin_prefetch(slots_ + (mix >> shift_)); }

   private:
    friend class GramSet;
    Prefetcher(const Slot* slots, int shift) : slots_(slots), shift_(shift) {}
    const Slot* slots_;
    int shift_;
  };
  Prefetcher MakePrefetcher() const { return {slots_.data(), shift_}; }

  // Inserts the keys of grams[0, m), in order; sets fresh[0, r) to the
  // indexes of the r of them that were not there, in order, and returns r.
  // The table's fields live in locals here: stores to the slots (64-bit
  // words) could alias them, and reloading them per key cost ~1.1x on BBC.
  [[gnu::always_inline]] size_t InsertAll(const Gram<Slot>* grams, size_t m, uint32_t* fresh) {
    Slot* slots = slots_.data();
    size_t mask = mask_;
    int shift = shift_;
    uint64_t generation = generation_;
    size_t size = size_;
    size_t limit = (mask + 1) / 2;  // grows past half full
    size_t r = 0;
    for (size_t g = 0; g < m; ++g) {
      const Slot tagged = grams[g].key.Tagged(generation);
      fresh[r] = static_cast<uint32_t>(g);
      for (size_t i = grams[g].mix >> shift;; i = (i + 1) & mask) {
        Slot& slot = slots[i];
        if (slot.Generation() != generation) {
          slot = tagged;
          ++r;
          if (++size > limit) {
            size_ = size;
            Grow();
            slots = slots_.data();
            mask = mask_;
            shift = shift_;
            generation = generation_;
            limit = (mask + 1) / 2;
          }
          break;
        }
        if (slot == tagged) break;
      }
    }
    size_ = size;
    return r;
  }

 private:
  static constexpr uint64_t kMaxGeneration = (uint64_t{1} << (64 - Slot::kGenerationShift)) - 1;

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
      if (slots_[i].Generation() == generation_) moved_.push_back(slots_[i].Key());
    }
    NextGeneration();
    SetCapacity(2 * (mask_ + 1));
    for (const Slot& key : moved_) {
      size_t i = key.Mix() >> shift_;
      while (slots_[i].Generation() == generation_) i = (i + 1) & mask_;
      slots_[i] = key.Tagged(generation_);
    }
  }

  std::vector<Slot> slots_;
  std::vector<Slot> moved_;
  uint64_t generation_ = 0;
  size_t mask_ = 0;
  int shift_ = 64;
  size_t size_ = 0;
};

// One thread's tables: the ASCII n-grams in one, the others in the other.
struct GramSets {
  GramSet<AsciiSlot> ascii;
  GramSet<WideSlot> wide;
};

GramSets& ThreadGramSets() {
  thread_local GramSets sets;
  return sets;
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

// AddGram of the kN-byte ASCII n-gram whose bytes are `key` (AsciiSlot:
// the first byte lowest), from a register rather than the chunk's bytes.
template <int kN, int kBits, bool kSet>
[[gnu::always_inline]] inline void AddAsciiGram(uint64_t key, UnitSimHasher* hasher,
                                                std::vector<uint64_t>* set) {
  uint8_t bytes[8];
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(bytes, &key, 8);
  } else {
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<uint8_t>(key >> (8 * i));
  }
  AddGram<kBits, kSet>(bytes, kN, hasher, set);
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

// Sixteen bytes at s: false unless all are ASCII; then lower[j] is byte j
// lower-cased and bit j of *keep is set where it is a digit or a letter.
// REQUIRES: 16 bytes readable at s.
inline bool AsciiBlock(const uint8_t* s, uint8_t lower[16], uint32_t* keep) {
#if NEARDUP_FUSED_X86
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
  if (_mm_movemask_epi8(v) != 0) return false;
  // Signed compares: every byte is below 0x80.
  auto in = [&](char lo, char hi) {
    return _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8(static_cast<char>(lo - 1))),
                         _mm_cmplt_epi8(v, _mm_set1_epi8(static_cast<char>(hi + 1))));
  };
  const __m128i upper = in('A', 'Z');
  const __m128i k = _mm_or_si128(_mm_or_si128(upper, in('a', 'z')), in('0', '9'));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(lower),
                   _mm_or_si128(v, _mm_and_si128(upper, _mm_set1_epi8(0x20))));
  *keep = static_cast<uint32_t>(_mm_movemask_epi8(k));
  return true;
#else
  uint64_t w[2];
  std::memcpy(w, s, 16);
  if (((w[0] | w[1]) & 0x8080808080808080ull) != 0) return false;
  uint32_t mask = 0;
  for (int h = 0; h < 2; ++h) {
    const uint64_t upper = InRange(w[h], 'A', 'Z');
    const uint64_t k = upper | InRange(w[h], 'a', 'z') | InRange(w[h], '0', '9');
    const uint64_t l = w[h] | upper >> 2;  // 0x80 >> 2: the case bit
    std::memcpy(lower + 8 * h, &l, 8);
    // Bit 7 of byte j to bit j.
    mask |= static_cast<uint32_t>(((k >> 7) * 0x0102040810204080ull) >> 56) << (8 * h);
  }
  *keep = mask;
  return true;
#endif
}

// Whether the first 15 of the sixteen bytes at s are five 3-byte UTF-8
// sequences by their bit patterns (a lead byte 0xE0-0xEF, two continuation
// bytes; overlong forms and surrogates not excluded). REQUIRES: 16 bytes
// readable at s.
inline bool ThreeByteBlock(const uint8_t* s) {
#if NEARDUP_FUSED_X86
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
  const auto lead = static_cast<uint32_t>(
      _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_and_si128(v, _mm_set1_epi8(static_cast<char>(0xF0))),
                                       _mm_set1_epi8(static_cast<char>(0xE0)))));
  const auto cont = static_cast<uint32_t>(
      _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_and_si128(v, _mm_set1_epi8(static_cast<char>(0xC0))),
                                       _mm_set1_epi8(static_cast<char>(0x80)))));
  return (lead & 0x7FFF) == 0x1249 && (cont & 0x7FFF) == 0x6DB6;
#else
  for (int j = 0; j < 15; j += 3) {
    if ((s[j] & 0xF0) != 0xE0 || (s[j + 1] & 0xC0) != 0x80 || (s[j + 2] & 0xC0) != 0x80) {
      return false;
    }
  }
  return true;
#endif
}

// For a byte mask m of 8 bits: index[m] lists the positions of its set
// bits, in order (the rest 0x80): a byte shuffle that compacts them.
struct CompressTable {
  std::array<std::array<uint8_t, 8>, 256> index;
};
constexpr CompressTable MakeCompressTable() {
  CompressTable t{};
  for (int m = 0; m < 256; ++m) {
    int out = 0;
    for (int j = 0; j < 8; ++j) {
      if ((m >> j & 1) != 0) t.index[m][out++] = static_cast<uint8_t>(j);
    }
    while (out < 8) t.index[m][out++] = 0x80;
  }
  return t;
}
constexpr CompressTable kCompress = MakeCompressTable();

// index[p] moves the low 8 bytes of a vector up by p bytes (0 <= p <= 8), as
// a byte shuffle (the bytes below p zero).
struct ShiftUpTable {
  std::array<std::array<uint8_t, 16>, 9> index;
};
constexpr ShiftUpTable MakeShiftUpTable() {
  ShiftUpTable t{};
  for (int p = 0; p <= 8; ++p) {
    for (int j = 0; j < 16; ++j) {
      t.index[p][j] = j >= p && j < p + 8 ? static_cast<uint8_t>(j - p) : uint8_t{0x80};
    }
  }
  return t;
}
constexpr ShiftUpTable kShiftUp = MakeShiftUpTable();

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

std::unique_ptr<FusedNgramSimHash> FusedNgramSimHash::Create(const PipelineOptions& options,
                                                             Simd simd) {
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
  bool avx2 = false;
#if NEARDUP_FUSED_X86
  avx2 = simd == Simd::kBest && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
#else
  (void)simd;
#endif
  return std::unique_ptr<FusedNgramSimHash>(
      new FusedNgramSimHash(f.ngram, options.bits, avx2, std::move(tables)));
}

FusedNgramSimHash::FusedNgramSimHash(int ngram, int bits, bool avx2, std::unique_ptr<Tables> tables)
    : ngram_(ngram), bits_(bits), avx2_(avx2), tables_(std::move(tables)) {}

FusedNgramSimHash::~FusedNgramSimHash() = default;

namespace {
namespace baseline_pass {
#define NEARDUP_FUSED_SSSE3 0
#include "features/fused_ngram_simhash_pass.inc"
#undef NEARDUP_FUSED_SSSE3
}  // namespace baseline_pass

#if NEARDUP_FUSED_X86
#pragma GCC push_options
#pragma GCC target("avx2,popcnt")
namespace avx2_pass {

// Compacts the bytes of `lower` whose bit is set in `keep` (16 bits) to
// `bytes` (writes 16 bytes), their values to code_points[0, popcount) and
// pos, pos + 1, ... to offsets[0, popcount) (each writes 16 entries).
[[gnu::always_inline]] inline void PushAsciiBlock(const uint8_t* lower, uint32_t keep,
                                                  uint32_t* code_points, uint32_t* offsets,
                                                  uint8_t* bytes, uint32_t pos) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(lower));
  const uint32_t low = keep & 0xFF;
  const __m128i shuffle_low =
      _mm_loadl_epi64(reinterpret_cast<const __m128i*>(kCompress.index[low].data()));
  const __m128i shuffle_high = _mm_add_epi8(
      _mm_loadl_epi64(reinterpret_cast<const __m128i*>(kCompress.index[keep >> 8].data())),
      _mm_set1_epi8(8));
  // The high half's kept bytes moved up past the low half's, in registers:
  // two 8-byte stores read back as one 16-byte load forwarded nothing (the
  // load waited for both stores; ~30 % of the decoder's samples on BBC).
  const __m128i high = _mm_shuffle_epi8(
      _mm_shuffle_epi8(v, shuffle_high),
      _mm_loadu_si128(reinterpret_cast<const __m128i*>(kShiftUp.index[std::popcount(low)].data())));
  const __m128i packed = _mm_or_si128(_mm_move_epi64(_mm_shuffle_epi8(v, shuffle_low)), high);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(bytes), packed);
  __m128i offset = _mm_add_epi32(_mm_set1_epi32(static_cast<int>(pos)), _mm_setr_epi32(0, 1, 2, 3));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(code_points), _mm_cvtepu8_epi32(packed));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(code_points + 4),
                   _mm_cvtepu8_epi32(_mm_srli_si128(packed, 4)));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(code_points + 8),
                   _mm_cvtepu8_epi32(_mm_srli_si128(packed, 8)));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(code_points + 12),
                   _mm_cvtepu8_epi32(_mm_srli_si128(packed, 12)));
  for (int q = 0; q < 4; ++q) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(offsets + 4 * q), offset);
    offset = _mm_add_epi32(offset, _mm_set1_epi32(4));
  }
}

#define NEARDUP_FUSED_SSSE3 1
#include "features/fused_ngram_simhash_pass.inc"
#undef NEARDUP_FUSED_SSSE3
}  // namespace avx2_pass
#pragma GCC pop_options
#endif

}  // namespace

bool FusedNgramSimHash::Fingerprint(std::string_view text, DocumentFingerprint* out,
                                    std::vector<uint64_t>* set) const {
#if NEARDUP_FUSED_X86
  if (avx2_) return avx2_pass::Run(ngram_, bits_, *tables_, text, out, set);
#endif
  return baseline_pass::Run(ngram_, bits_, *tables_, text, out, set);
}

}  // namespace neardup
