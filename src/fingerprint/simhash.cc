// Copyright 2026 The neardup Authors.

#include <openssl/evp.h>

#include <algorithm>
#include <cassert>
#include <cstring>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "neardup/fingerprint.h"

namespace neardup {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

uint64_t ReadBigEndian64(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | p[i];
  return v;
}

// SimHasher::Add: v[j] += w where bit j of the hash is set, -w where it is
// clear. Four lanes at a time: the 4 bits select which lanes get w's sign bit
// flipped (kSignFlips), and the lanes are added as doubles. Every counter gets
// the same additions in the same order as the scalar loop, and flipping the
// sign bit is exactly multiplying by -1, so the sums are bit-identical.
using Double4 = double __attribute__((vector_size(32)));
using Bits4 = uint64_t __attribute__((vector_size(32)));

constexpr uint64_t kSignBit = uint64_t{1} << 63;

struct SignFlips {
  alignas(32) uint64_t lanes[16][4];
};

constexpr SignFlips MakeSignFlips() {
  SignFlips t{};
  for (int m = 0; m < 16; ++m) {
    for (int i = 0; i < 4; ++i) t.lanes[m][i] = ((m >> i) & 1) != 0 ? 0 : kSignBit;
  }
  return t;
}
constexpr SignFlips kSignFlips = MakeSignFlips();

[[gnu::always_inline]] inline void AccumulateWords(const uint64_t* words, int num_words, double w,
                                                   double* v) {
  uint64_t w_bits;
  std::memcpy(&w_bits, &w, sizeof(w_bits));
  const Bits4 w4 = {w_bits, w_bits, w_bits, w_bits};
  for (int k = 0; k < num_words; ++k) {
    const uint64_t word = words[k];
    double* out = v + 64 * k;
    for (int j = 0; j < 64; j += 4) {
      Bits4 flip;
      std::memcpy(&flip, kSignFlips.lanes[(word >> j) & 15], sizeof(flip));
      const Bits4 add_bits = w4 ^ flip;
      Double4 add, cur;
      std::memcpy(&add, &add_bits, sizeof(add));
      std::memcpy(&cur, out + j, sizeof(cur));
      cur += add;
      std::memcpy(out + j, &cur, sizeof(cur));
    }
  }
}

void AccumulateBaseline(const uint64_t* words, int num_words, double w, double* v) {
  AccumulateWords(words, num_words, w, v);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
[[gnu::target("avx2")]] void AccumulateAvx2(const uint64_t* words, int num_words, double w,
                                            double* v) {
  AccumulateWords(words, num_words, w, v);
}

using AccumulateFn = void (*)(const uint64_t*, int, double, double*);
const AccumulateFn kAccumulate = [] {
  __builtin_cpu_init();  // this may run before libgcc's own initializer
  return __builtin_cpu_supports("avx2") ? AccumulateAvx2 : AccumulateBaseline;
}();
#else
constexpr auto kAccumulate = AccumulateBaseline;
#endif

// UnitSimHasher: 128 one-bit counters side by side, as two 64-bit lanes.
using Lanes = uint64_t __attribute__((vector_size(16)));

inline Lanes Load(const std::array<uint64_t, 2>& a) { return Lanes{a[0], a[1]}; }
inline void Store(Lanes x, std::array<uint64_t, 2>* a) { *a = {x[0], x[1]}; }
inline bool Any(Lanes x) { return (x[0] | x[1]) != 0; }

// Carry-save adder: a + b + c = 2 * high + low, lane by lane.
inline void Csa(Lanes* high, Lanes* low, Lanes a, Lanes b, Lanes c) {
  const Lanes u = a ^ b;
  *high = (a & b) | (u & c);
  *low = u ^ c;
}

// Harley-Seal: adds 16 hashes to ones + 2 twos + 4 fours + 8 eights and
// returns what overflows, a word of 16s.
Lanes AddBlock(const FeatureHash* h, Lanes* ones, Lanes* twos, Lanes* fours, Lanes* eights) {
  Lanes twos_a, twos_b, fours_a, fours_b, eights_a, eights_b, sixteens;
  Csa(&twos_a, ones, *ones, Lanes{h[0].lo, h[0].hi}, Lanes{h[1].lo, h[1].hi});
  Csa(&twos_b, ones, *ones, Lanes{h[2].lo, h[2].hi}, Lanes{h[3].lo, h[3].hi});
  Csa(&fours_a, twos, *twos, twos_a, twos_b);
  Csa(&twos_a, ones, *ones, Lanes{h[4].lo, h[4].hi}, Lanes{h[5].lo, h[5].hi});
  Csa(&twos_b, ones, *ones, Lanes{h[6].lo, h[6].hi}, Lanes{h[7].lo, h[7].hi});
  Csa(&fours_b, twos, *twos, twos_a, twos_b);
  Csa(&eights_a, fours, *fours, fours_a, fours_b);
  Csa(&twos_a, ones, *ones, Lanes{h[8].lo, h[8].hi}, Lanes{h[9].lo, h[9].hi});
  Csa(&twos_b, ones, *ones, Lanes{h[10].lo, h[10].hi}, Lanes{h[11].lo, h[11].hi});
  Csa(&fours_a, twos, *twos, twos_a, twos_b);
  Csa(&twos_a, ones, *ones, Lanes{h[12].lo, h[12].hi}, Lanes{h[13].lo, h[13].hi});
  Csa(&twos_b, ones, *ones, Lanes{h[14].lo, h[14].hi}, Lanes{h[15].lo, h[15].hi});
  Csa(&fours_b, twos, *twos, twos_a, twos_b);
  Csa(&eights_b, fours, *fours, fours_a, fours_b);
  Csa(&sixteens, eights, *eights, eights_a, eights_b);
  return sixteens;
}

// Adds one to the bit-sliced binary counter of every lane set in `carry`.
template <size_t N>
void Increment(Lanes carry, std::array<std::array<uint64_t, 2>, N>* planes, int* planes_used) {
  for (int k = 0; Any(carry); ++k) {
    assert(k < static_cast<int>(N));
    const Lanes plane = Load((*planes)[static_cast<size_t>(k)]);
    Store(plane ^ carry, &(*planes)[static_cast<size_t>(k)]);
    carry &= plane;
    if (k >= *planes_used) *planes_used = k + 1;
  }
}

}  // namespace

Result<Fingerprint> Fingerprint::FromHex(std::string_view hex) {
  if (hex.size() != 16 && hex.size() != 32) {
    return Status::InvalidArgument("fingerprint must have 16 or 32 hex digits, got " +
                                   std::to_string(hex.size()) + ": '" + std::string(hex) + "'");
  }
  uint64_t words[2] = {0, 0};
  for (size_t i = 0; i < hex.size(); ++i) {
    const int d = HexValue(hex[i]);
    if (d < 0) {
      return Status::InvalidArgument("fingerprint has a non-hex character at position " +
                                     std::to_string(i) + ": '" + std::string(hex) + "'");
    }
    uint64_t& w = words[i / 16];
    w = (w << 4) | static_cast<uint64_t>(d);
  }
  if (hex.size() == 16) return From64(words[0]);
  return From128(words[0], words[1]);
}

std::string Fingerprint::ToHex() const {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(static_cast<size_t>(bits_ / 4), '0');
  size_t pos = out.size();
  for (int j = 0; j < bits_; j += 4) {
    const uint64_t word = j < 64 ? lo_ : hi_;
    out[--pos] = kDigits[(word >> (j % 64)) & 0xf];
  }
  return out;
}

FeatureHash HashFeature(std::string_view text, int bits, FeatureHashAlgorithm algorithm) {
  assert(bits == 64 || bits == 128);
  FeatureHash h;
  if (algorithm == FeatureHashAlgorithm::kMd5) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    EVP_Digest(text.data(), text.size(), digest, &len, EVP_md5(), nullptr);
    if (bits == 64) {
      h.lo = ReadBigEndian64(digest);
    } else {
      h.hi = ReadBigEndian64(digest);
      h.lo = ReadBigEndian64(digest + 8);
    }
    return h;
  }
  if (bits == 64) {
    h.lo = XXH3_64bits(text.data(), text.size());
  } else {
    const XXH128_hash_t x = XXH3_128bits(text.data(), text.size());
    h.hi = x.high64;
    h.lo = x.low64;
  }
  return h;
}

SimHasher::SimHasher(int bits) : bits_(bits) { assert(bits == 64 || bits == 128); }

void SimHasher::Add(const FeatureHash& hash, double weight) {
  const uint64_t words[2] = {hash.lo, hash.hi};
  kAccumulate(words, bits_ / 64, weight, v_.data());
  ++count_;
}

Fingerprint SimHasher::Finish() const {
  uint64_t words[2] = {0, 0};
  for (int j = 0; j < bits_; ++j) {
    if (v_[j] > 0) words[j / 64] |= uint64_t{1} << (j % 64);
  }
  return bits_ == 64 ? Fingerprint::From64(words[0]) : Fingerprint::From128(words[1], words[0]);
}

void SimHasher::Reset() {
  v_.fill(0.0);
  count_ = 0;
}

UnitSimHasher::UnitSimHasher(int bits) : bits_(bits) { assert(bits == 64 || bits == 128); }

void UnitSimHasher::FlushBlock() {
  Lanes ones = Load(ones_), twos = Load(twos_), fours = Load(fours_), eights = Load(eights_);
  const Lanes sixteens = AddBlock(block_.data(), &ones, &twos, &fours, &eights);
  Store(ones, &ones_);
  Store(twos, &twos_);
  Store(fours, &fours_);
  Store(eights, &eights_);
  Increment(sixteens, &sixteens_, &planes_used_);
  pending_ = 0;
  flushed_ += kBlock;
}

Fingerprint UnitSimHasher::Finish() const {
  // The pending hashes, padded with zero hashes (which count nothing), go
  // through one more block on copies of the counters.
  std::array<FeatureHash, kBlock> block{};
  std::copy(block_.begin(), block_.begin() + pending_, block.begin());
  Lanes ones = Load(ones_), twos = Load(twos_), fours = Load(fours_), eights = Load(eights_);
  std::array<Plane, kPlanes> sixteens = sixteens_;
  int planes_used = planes_used_;
  Increment(AddBlock(block.data(), &ones, &twos, &fours, &eights), &sixteens, &planes_used);
  // V_j = (set_j) - (count - set_j) > 0  <=>  2 set_j > count  <=>  set_j >
  // floor(count / 2) = t. All 128 counters at once, compared bit-sliced with
  // t from the most significant plane down: `greater` marks the lanes whose
  // higher planes already exceed t's bits, `equal` those equal so far.
  const uint64_t t = count() / 2;
  const int num_planes = 4 + planes_used;
  Lanes greater = {0, 0};
  Lanes equal = {~uint64_t{0}, ~uint64_t{0}};
  if (num_planes < 64 && (t >> num_planes) != 0) equal = Lanes{0, 0};  // t above every count
  for (int k = num_planes - 1; k >= 0; --k) {
    const Lanes plane = k >= 4   ? Load(sixteens[static_cast<size_t>(k - 4)])
                        : k == 3 ? eights
                        : k == 2 ? fours
                        : k == 1 ? twos
                                 : ones;
    const uint64_t bit = ((t >> k) & 1u) != 0 ? ~uint64_t{0} : 0;
    const Lanes t_plane = {bit, bit};
    greater |= equal & plane & ~t_plane;
    equal &= ~(plane ^ t_plane);
  }
  if (bits_ == 64) return Fingerprint::From64(greater[0]);
  return Fingerprint::From128(greater[1], greater[0]);
}

void UnitSimHasher::Reset() {
  pending_ = 0;
  planes_used_ = 0;
  flushed_ = 0;
  ones_ = twos_ = fours_ = eights_ = Plane{};
  sixteens_.fill(Plane{});
}

}  // namespace neardup
