#ifndef STRAND_TXN_THREAD_SPARES_H_
#define STRAND_TXN_THREAD_SPARES_H_

// Per-thread spare containers for transaction state. A transaction Take()s
// its vectors and hash maps here and Give()s them back emptied when it ends,
// so their capacity carries over to the thread's next transaction instead of
// one allocation and free per container per transaction. Internal to txn/.
//
// Give() keeps a few containers per type (a thread may run transactions
// inside one another, e.g. a loader). What a spare keeps: a vector the
// capacity of the largest transaction the thread ran (a pointer or an
// index entry per access); a hash map at most 127 slots (absl's clear()
// frees larger ones).

#include <utility>
#include <vector>

namespace strand::txn {

template <typename Container>
class ThreadSpares {
 public:
  static Container Take() {
    std::vector<Container>& spares = Spares();
    if (spares.empty()) return Container();
    Container c = std::move(spares.back());
    spares.pop_back();
    return c;
  }
  static void Give(Container c) {
    std::vector<Container>& spares = Spares();
    if (spares.size() >= kMaxSpares) return;
    c.clear();
    spares.push_back(std::move(c));
  }

 private:
  static constexpr size_t kMaxSpares = 4;
  static std::vector<Container>& Spares() {
    thread_local std::vector<Container> spares;
    return spares;
  }
};

}  // namespace strand::txn

#endif  // STRAND_TXN_THREAD_SPARES_H_
