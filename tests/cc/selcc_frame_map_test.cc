// FrameMap (the cache shard's open-addressing map) against std::map, with
// enough inserts and erases that clusters wrap around the table's end and
// erases shift entries back across it.

#include <map>
#include <random>
#include <vector>

#include "cc/selcc/frame_map.h"
#include "gtest/gtest.h"

namespace strand::cc::selcc {
namespace {

rdma::GlobalAddress Gcl(int i) {
  return rdma::GlobalAddress(1, 4096 + uint64_t{1024} * i);
}

TEST(SelccFrameMapTest, AgreesWithAModelUnderRandomInsertsAndErases) {
  std::vector<Frame> frames(512);
  FrameMap map;
  std::map<uint64_t, Frame*> model;
  std::mt19937 rng(7);
  for (int step = 0; step < 200000; ++step) {
    const int i = static_cast<int>(rng() % frames.size());
    const rdma::GlobalAddress gcl = Gcl(i);
    const uint64_t hash = FrameMap::Hash(gcl);
    if (rng() % 3 != 0) {
      const bool fresh = model.emplace(gcl.raw(), &frames[i]).second;
      ASSERT_EQ(map.Insert(gcl, hash, &frames[i]), fresh) << "step " << step;
    } else {
      model.erase(gcl.raw());
      map.Erase(gcl, hash);
    }
    ASSERT_EQ(map.size(), model.size());
    if (step % 1000 == 0) {
      for (int k = 0; k < static_cast<int>(frames.size()); ++k) {
        auto it = model.find(Gcl(k).raw());
        ASSERT_EQ(map.Find(Gcl(k), FrameMap::Hash(Gcl(k))),
                  it == model.end() ? nullptr : it->second)
            << "key " << k << " step " << step;
      }
    }
  }
  size_t visited = 0;
  map.ForEach([&](const Frame*) { ++visited; });
  EXPECT_EQ(visited, model.size());
}

TEST(SelccFrameMapTest, EraseKeepsEveryOtherEntryReachable) {
  // Fill to just under the growth threshold so probe clusters are long,
  // then erase every entry in turn, checking all the others each time.
  std::vector<Frame> frames(96);
  FrameMap map;
  for (int i = 0; i < 96; ++i) {
    ASSERT_TRUE(map.Insert(Gcl(i), FrameMap::Hash(Gcl(i)), &frames[i]));
  }
  for (int e = 0; e < 96; ++e) {
    map.Erase(Gcl(e), FrameMap::Hash(Gcl(e)));
    for (int k = 0; k < 96; ++k) {
      ASSERT_EQ(map.Find(Gcl(k), FrameMap::Hash(Gcl(k))),
                k <= e ? nullptr : &frames[k])
          << "after erasing " << e << ", key " << k;
    }
  }
  EXPECT_EQ(map.size(), 0u);
}

}  // namespace
}  // namespace strand::cc::selcc
