#include "tpcc/mix_deck.h"

#include <algorithm>
#include <numeric>

#include "glog/logging.h"

namespace strand::tpcc {

MixDeck::MixDeck(const Mix& mix) {
  int divisor = 0;
  for (int w : mix.weights) divisor = std::gcd(divisor, w);
  CHECK_GT(divisor, 0) << "a mix with no weight: " << mix.ToString();
  for (int type = 0; type < kTxnTypes; ++type) {
    cards_.insert(cards_.end(), mix.weights[type] / divisor,
                  static_cast<TxnType>(type));
  }
  next_ = cards_.size();
}

TxnType MixDeck::Deal(FastRng& rng) {
  if (next_ == cards_.size()) {
    std::shuffle(cards_.begin(), cards_.end(), rng);
    next_ = 0;
  }
  return cards_[next_++];
}

}  // namespace strand::tpcc
