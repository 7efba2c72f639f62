// Litmus tests for sequential consistency (paper 6.2) across compute nodes,
// run on SELCC under several option sets. Each access is one latched
// operation, so under SC:
//   store buffering (SB): n0: x=k; r0=y   n1: y=k; r1=x
//       forbidden: r0 < k and r1 < k (both reads miss both writes)
//   message passing (MP): n0: data=k; flag=k   n1, n2: f=flag; d=data
//       forbidden: d < f (the flag is seen before the data it publishes)

#include <atomic>
#include <cstring>
#include <thread>

#include "absl/time/clock.h"
#include "cc/gcl_manager.h"
#include "gtest/gtest.h"
#include "tests/testing/cc_cluster.h"

namespace strand::cc {
namespace {

struct LitmusConfig {
  std::string name;
  CcOptions options;
};

void PrintTo(const LitmusConfig& config, std::ostream* os) {
  *os << config.name;
}

CcOptions Base() {
  CcOptions o;
  o.protocol = Protocol::kSelcc;
  o.gcl_size = 128;
  o.cache_bytes = 64 * 128;
  return o;
}

std::vector<LitmusConfig> Configs() {
  std::vector<LitmusConfig> c;
  c.push_back({"selcc", Base()});
  CcOptions o = Base();
  o.gcl_forwarding = false;
  c.push_back({"selcc_no_forwarding", o});
  o = Base();
  o.lease_gamma = 0;
  o.testing_faults.drop_probability = 0.2;
  c.push_back({"selcc_lease_zero_drops", o});
  o = Base();
  o.protocol = Protocol::kSel;
  c.push_back({"sel", o});
  return c;
}

class LitmusTest : public ::testing::TestWithParam<LitmusConfig> {
 protected:
  void SetUp() override {
    auto cluster = testing::CcCluster::Create(3, GetParam().options);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
  }
  GclManager& m(int i) { return cluster_->manager(i); }

  static void Store(GclManager& m, ThreadContext& ctx, rdma::GlobalAddress g,
                    uint64_t v) {
    auto x = m.XLock(ctx, g);
    ASSERT_TRUE(x.ok()) << x.status();
    std::memcpy(x->MutableRange(0, 8), &v, 8);
  }
  static uint64_t Load(GclManager& m, ThreadContext& ctx,
                       rdma::GlobalAddress g) {
    auto s = m.SLock(ctx, g);
    EXPECT_TRUE(s.ok()) << s.status();
    uint64_t v = 0;
    if (s.ok()) std::memcpy(&v, s->data(), 8);
    return v;
  }

  std::unique_ptr<testing::CcCluster> cluster_;
};

// Two threads meet here before every round, so their accesses overlap.
class SpinBarrier {
 public:
  explicit SpinBarrier(int n) : n_(n) {}
  void Wait() {
    const int gen = gen_.load();
    if (arrived_.fetch_add(1) + 1 == n_) {
      arrived_ = 0;
      gen_.fetch_add(1);
      return;
    }
    while (gen_.load() == gen) std::this_thread::yield();
  }

 private:
  const int n_;
  std::atomic<int> arrived_{0};
  std::atomic<int> gen_{0};
};

TEST_P(LitmusTest, StoreBufferingNeverLosesBothStores) {
  auto c0 = *m(0).NewThreadContext();
  auto x = *m(0).Allocate(*c0);
  auto y = *m(0).Allocate(*c0);
  constexpr uint64_t kRounds = 1500;
  std::vector<uint64_t> r0(kRounds + 1), r1(kRounds + 1);
  SpinBarrier barrier(2);
  std::thread t0([&] {
    for (uint64_t k = 1; k <= kRounds; ++k) {
      barrier.Wait();
      Store(m(0), *c0, x, k);
      r0[k] = Load(m(0), *c0, y);
    }
  });
  std::thread t1([&] {
    auto c1 = *m(1).NewThreadContext();
    for (uint64_t k = 1; k <= kRounds; ++k) {
      barrier.Wait();
      Store(m(1), *c1, y, k);
      r1[k] = Load(m(1), *c1, x);
    }
  });
  t0.join();
  t1.join();
  int forbidden = 0;
  for (uint64_t k = 1; k <= kRounds; ++k) {
    if (r0[k] < k && r1[k] < k) ++forbidden;
  }
  EXPECT_EQ(forbidden, 0);
}

TEST_P(LitmusTest, MessagePassingNeverShowsFlagBeforeData) {
  auto c0 = *m(0).NewThreadContext();
  auto data = *m(0).Allocate(*c0);
  auto flag = *m(0).Allocate(*c0);
  std::atomic<bool> stop{false};
  std::atomic<int> forbidden{0}, observed{0};
  std::vector<std::thread> readers;
  for (int n = 1; n <= 2; ++n) {
    readers.emplace_back([&, n] {
      auto c = *m(n).NewThreadContext();
      while (!stop.load()) {
        const uint64_t f = Load(m(n), *c, flag);
        const uint64_t d = Load(m(n), *c, data);
        if (d < f) forbidden++;
        if (f > 0) observed++;
      }
    });
  }
  // Keep publishing until the readers saw plenty of flags (a lazily held
  // line lets the writer run far ahead of them otherwise).
  const absl::Time give_up = absl::Now() + absl::Seconds(20);
  for (uint64_t k = 1;
       (k <= 3000 || observed.load() < 2000) && absl::Now() < give_up; ++k) {
    Store(m(0), *c0, data, k);
    Store(m(0), *c0, flag, k);
  }
  stop = true;
  for (auto& t : readers) t.join();
  EXPECT_EQ(forbidden.load(), 0);
  EXPECT_GE(observed.load(), 2000);
}

INSTANTIATE_TEST_SUITE_P(
    Protocols, LitmusTest, ::testing::ValuesIn(Configs()),
    [](const ::testing::TestParamInfo<LitmusConfig>& info) {
      return info.param.name;
    });

}  // namespace
}  // namespace strand::cc
