// A terminal's identity and draws: its Stock-Level district is fixed for
// the run and differs from the other terminals' of its warehouse (clause
// 2.8.1.1), and its transaction types are dealt from a deck that holds
// every type's share exactly (clause 5.2.4).

#include "tpcc/terminal.h"

#include <array>
#include <set>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace strand::tpcc {
namespace {

Terminal MakeTerminal(int index, int warehouses, const Mix& mix = Mix()) {
  return Terminal(index, warehouses, HomeWarehouse::kPerThread, Scale(), mix,
                  RemotePolicy(), /*seed=*/3, NURandConstants::ForRun({}, 3));
}

TEST(TerminalTest, StockLevelUsesTheTerminalsOwnFixedDistrict) {
  constexpr int kWarehouses = 2;
  std::set<std::pair<int, int>> seen;
  for (int index = 0; index < 10 * kWarehouses; ++index) {
    Terminal terminal = MakeTerminal(index, kWarehouses);
    const StockLevelInput first = terminal.StockLevel();
    EXPECT_EQ(first.w, terminal.warehouse());
    for (int i = 0; i < 50; ++i) {
      const StockLevelInput in = terminal.StockLevel();
      EXPECT_EQ(in.w, first.w);
      EXPECT_EQ(in.d, first.d) << "terminal " << index << " draw " << i;
      EXPECT_GE(in.threshold, 10);
      EXPECT_LE(in.threshold, 20);
    }
    EXPECT_TRUE(seen.insert({first.w, first.d}).second)
        << "terminals share warehouse " << first.w << " district " << first.d;
  }
}

// Every pass over the deck deals each type exactly its weight (reduced by
// the weights' common divisor), in an order that varies.
TEST(TerminalTest, TypesAreDealtFromADeckWithExactShares) {
  struct Case {
    Mix mix;
    int deck;
  };
  for (const Case& c : {Case{Mix(), 100}, Case{*Mix::Parse("50,50,0,0,0"), 2},
                        Case{*Mix::Parse("40,40,8,4,8"), 25}}) {
    SCOPED_TRACE(c.mix.ToString());
    Terminal terminal = MakeTerminal(0, 1, c.mix);
    std::vector<int> first_pass;
    bool orders_differ = false;
    for (int pass = 0; pass < 20; ++pass) {
      std::array<int, kTxnTypes> count{};
      std::vector<int> order;
      for (int i = 0; i < c.deck; ++i) {
        const int type = terminal.NextType();
        ++count[type];
        order.push_back(type);
      }
      for (int t = 0; t < kTxnTypes; ++t) {
        EXPECT_EQ(count[t] * 100, c.mix.weights[t] * c.deck)
            << "pass " << pass << " type " << TxnTypeName(t);
      }
      if (pass == 0) first_pass = order;
      orders_differ |= order != first_pass;
    }
    EXPECT_TRUE(orders_differ) << "the deck is never shuffled";
  }
}

}  // namespace
}  // namespace strand::tpcc
