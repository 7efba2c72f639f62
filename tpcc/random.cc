#include "tpcc/random.h"

#include <cstdlib>

namespace strand::tpcc {
namespace {

constexpr const char* kSyllables[] = {"BAR", "OUGHT", "ABLE",  "PRI",   "PRES",
                                      "ESE", "ANTI",  "CALLY", "ATION", "EING"};
constexpr char kAlnum[] =
    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

}  // namespace

NURandConstants NURandConstants::ForLoad(uint64_t seed) {
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ULL);
  NURandConstants c;
  c.c_last = std::uniform_int_distribution<int>(0, 255)(rng);
  c.c_id = std::uniform_int_distribution<int>(0, 1023)(rng);
  c.ol_i_id = std::uniform_int_distribution<int>(0, 8191)(rng);
  return c;
}

NURandConstants NURandConstants::ForRun(const NURandConstants& load,
                                        uint64_t seed) {
  std::mt19937_64 rng(seed ^ 0x7f4a7c159e3779b9ULL);
  NURandConstants c;
  for (;;) {
    c.c_last = std::uniform_int_distribution<int>(0, 255)(rng);
    const int delta = std::abs(c.c_last - load.c_last);
    if (delta >= 65 && delta <= 119 && delta != 96 && delta != 112) break;
  }
  c.c_id = std::uniform_int_distribution<int>(0, 1023)(rng);
  c.ol_i_id = std::uniform_int_distribution<int>(0, 8191)(rng);
  return c;
}

int64_t Random::NURand(int a, int64_t x, int64_t y) {
  const int c = a == 255 ? c_.c_last : a == 1023 ? c_.c_id : c_.ol_i_id;
  return (((Uniform(0, a) | Uniform(x, y)) + c) % (y - x + 1)) + x;
}

std::string Random::AString(int lo, int hi) {
  std::string s(Uniform(lo, hi), ' ');
  for (char& ch : s) ch = kAlnum[Uniform(0, sizeof(kAlnum) - 2)];
  return s;
}

std::string Random::NString(int lo, int hi) {
  std::string s(Uniform(lo, hi), ' ');
  for (char& ch : s) ch = static_cast<char>('0' + Uniform(0, 9));
  return s;
}

std::string Random::Zip() { return NString(4, 4) + "11111"; }

std::string Random::DataWithOriginal(int lo, int hi) {
  std::string s = AString(lo, hi);
  if (Percent(10)) {
    s.replace(Uniform(0, s.size() - 8), 8, "ORIGINAL");
  }
  return s;
}

std::string LastName(int n) {
  return std::string(kSyllables[n / 100]) + kSyllables[(n / 10) % 10] +
         kSyllables[n % 10];
}

}  // namespace strand::tpcc
