#ifndef STRAND_TPCC_MIX_DECK_H_
#define STRAND_TPCC_MIX_DECK_H_

// The order in which a terminal runs the mix's types (clause 5.2.4): dealt
// from a deck of cards, each type having its weight's share of the cards
// (the weights divided by their greatest common divisor: 45/43/4/4/4 is a
// deck of 100, 50/50/0/0/0 one of 2). The deck is shuffled, dealt to its
// end, and shuffled again, so every pass holds each type's share exactly
// and the minimum percentages of clause 5.2.3 hold over any full pass,
// not only on average. Cost: a shuffle of the deck per pass.

#include <cstdint>
#include <vector>

#include "tpcc/mix.h"
#include "tpcc/random.h"

namespace strand::tpcc {

class MixDeck {
 public:
  // `mix`'s weights sum to 100 (Mix::Parse).
  explicit MixDeck(const Mix& mix);

  // The next card, shuffling with `rng` when the deck is dealt out.
  TxnType Deal(FastRng& rng);

  size_t size() const { return cards_.size(); }

 private:
  std::vector<TxnType> cards_;
  size_t next_;  // cards_.size(): shuffle before dealing
};

}  // namespace strand::tpcc

#endif  // STRAND_TPCC_MIX_DECK_H_
