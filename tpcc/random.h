#ifndef STRAND_TPCC_RANDOM_H_
#define STRAND_TPCC_RANDOM_H_

// The random numbers and strings of the TPC-C specification (clause 4.3.2
// and 2.1.6): uniform integers, NURand with its run-time constants C,
// alphanumeric and numeric strings, zip codes and last names built from the
// syllable table.

#include <cstdint>
#include <random>
#include <string>

namespace strand::tpcc {

// The constant C of NURand(A, x, y) for each A (clause 2.1.6). The load
// uses one set; a run uses another whose C for C_LAST differs from the
// load's by 65..119, excluding 96 and 112 (clause 2.1.6.1).
struct NURandConstants {
  int c_last = 0;   // A = 255
  int c_id = 0;     // A = 1023
  int ol_i_id = 0;  // A = 8191

  static NURandConstants ForLoad(uint64_t seed);
  static NURandConstants ForRun(const NURandConstants& load, uint64_t seed);
};

// xoshiro256** (Blackman & Vigna), seeded through SplitMix64: a few
// instructions per 64-bit draw, where std::mt19937_64 refills a 2.5 KB
// state every 312 draws (it showed in the driver's CPU profile). Meets
// UniformRandomBitGenerator, so std::shuffle and the distributions take it.
class FastRng {
 public:
  using result_type = uint64_t;
  explicit FastRng(uint64_t seed) {
    for (uint64_t& w : s_) {
      seed += 0x9e3779b97f4a7c15ULL;
      uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      w = z ^ (z >> 31);
    }
  }
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return UINT64_MAX; }
  result_type operator()() {
    const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

class Random {
 public:
  explicit Random(uint64_t seed, NURandConstants c = {}) : rng_(seed), c_(c) {}

  // Uniform in [lo, hi] (Lemire's multiply-shift: the bias is at most
  // (hi - lo + 1) / 2^64, far below anything the benchmark can observe).
  int64_t Uniform(int64_t lo, int64_t hi) {
    const uint64_t range = static_cast<uint64_t>(hi - lo) + 1;
    if (range == 0) return static_cast<int64_t>(rng_());  // the full range
    return lo + static_cast<int64_t>(
                    (static_cast<unsigned __int128>(rng_()) * range) >> 64);
  }
  // True with probability percent/100.
  bool Percent(double percent) {
    return static_cast<double>(rng_() >> 11) * (100.0 / 9007199254740992.0) <
           percent;
  }
  // NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x
  int64_t NURand(int a, int64_t x, int64_t y);

  // Random alphanumeric / numeric strings of a random length in [lo, hi].
  std::string AString(int lo, int hi);
  std::string NString(int lo, int hi);
  // 4 random digits followed by "11111" (clause 4.3.2.7).
  std::string Zip();
  // S_DATA / I_DATA: a-string of 26..50 with "ORIGINAL" at a random place in
  // 10% of the rows.
  std::string DataWithOriginal(int lo, int hi);

  const NURandConstants& constants() const { return c_; }
  FastRng& engine() { return rng_; }

 private:
  FastRng rng_;
  NURandConstants c_;
};

// The last name of number `n` in 0..999: three syllables from
// BAR OUGHT ABLE PRI PRES ESE ANTI CALLY ATION EING (clause 4.3.2.3).
std::string LastName(int n);

}  // namespace strand::tpcc

#endif  // STRAND_TPCC_RANDOM_H_
