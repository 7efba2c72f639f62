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

class Random {
 public:
  explicit Random(uint64_t seed, NURandConstants c = {}) : rng_(seed), c_(c) {}

  // Uniform in [lo, hi].
  int64_t Uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  // True with probability percent/100.
  bool Percent(double percent) {
    return std::uniform_real_distribution<double>(0, 100)(rng_) < percent;
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
  std::mt19937_64& engine() { return rng_; }

 private:
  std::mt19937_64 rng_;
  NURandConstants c_;
};

// The last name of number `n` in 0..999: three syllables from
// BAR OUGHT ABLE PRI PRES ESE ANTI CALLY ATION EING (clause 4.3.2.3).
std::string LastName(int n);

}  // namespace strand::tpcc

#endif  // STRAND_TPCC_RANDOM_H_
