// Read your own writes in partitioned mode: a branch of a transaction on
// another compute node (and the coordinator's own, for a partition of its
// node) sees the writes of the fragments that ran in it before, within a
// fragment and across fragment rounds, through Lookup, LookupBatch, Scan
// both ways and the iterator; the declared indexes follow; the commit
// (two-phase when a remote branch wrote) leaves exactly that, and a
// rollback nothing. Both protocols.

#include <string>

#include "absl/strings/str_cat.h"
#include "engine/engine.h"
#include "engine/session.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "index/key_codec.h"
#include "partition/fragment.h"
#include "tests/testing/test_fabric.h"

namespace strand::partition {
namespace {

using storage::TupleAddress;
using txn::Txn;

constexpr int kNodes = 2;
constexpr int kPartitions = 2;

std::string IdKey(int64_t id) { return index::KeyBuilder().Int64(id).Build(8); }
std::string TagKey(int64_t tag) {
  return index::KeyBuilder().Int32(static_cast<int32_t>(tag)).Build(4);
}

// What a fragment does to item `id` of its partition, then reports.
enum Action : int32_t { kSee = 0, kInsert, kRetag, kDelete };
struct WriteIn {
  int32_t action;
  int64_t id;
  int64_t tag;
};
// What it saw afterwards: the row's tag by Lookup (-1: absent), by
// LookupBatch, and the rows of that tag by Scan forward, Scan backward,
// the iterator.
struct Seen {
  int64_t lookup_tag;
  int64_t batch_tag;
  int64_t scan_forward;
  int64_t scan_backward;
  int64_t iterated;
};

std::string Text(const Seen& s) {
  return absl::StrCat(s.lookup_tag, "/", s.batch_tag, "/", s.scan_forward, "/",
                      s.scan_backward, "/", s.iterated);
}

class OwnWritesPartitionedTest : public ::testing::TestWithParam<cc::Protocol> {
 protected:
  void SetUp() override {
    engine::EngineOptions o;
    o.mode = engine::EngineMode::kPartitioned;
    o.partitioned.partitions = kPartitions;
    o.fabric = testing::TestFabricOptions(1, kNodes);
    o.cc.protocol = GetParam();
    o.cc.gcl_size = 256;
    auto engine = engine::Engine::Open(o);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = *std::move(engine);
    auto schema =
        *storage::Schema::Create({{"id", storage::ColumnType::kInt64},
                                  {"tag", storage::ColumnType::kInt32}});
    const txn::TableId items = *engine_->CreateTable("items", schema);
    const txn::IndexId by_id =
        *engine_->CreateIndex("by_id", items, {"id"}, true);
    const txn::IndexId by_tag =
        *engine_->CreateIndex("by_tag", items, {"tag"}, false);
    write_ = *engine_->RegisterFragment<WriteIn, Seen>(
        "write", [=](Txn& txn, const WriteIn& in) -> absl::StatusOr<Seen> {
          auto at = txn.Lookup(by_id, IdKey(in.id));
          switch (in.action) {
            case kInsert: {
              auto row = *txn.NewRow(items);
              row.SetInt("id", in.id);
              row.SetInt("tag", in.tag);
              if (auto a = txn.Insert(items, row); !a.ok()) return a.status();
              break;
            }
            case kRetag: {
              if (!at.ok()) return at.status();
              auto row = txn.Modify(items, *at);
              if (!row.ok()) return row.status();
              (*row)->SetInt("tag", in.tag);
              break;
            }
            case kDelete:
              if (!at.ok()) return at.status();
              if (absl::Status s = txn.Delete(items, *at); !s.ok()) return s;
              break;
          }
          Seen seen{-1, -1, 0, 0, 0};
          auto found = txn.Lookup(by_id, IdKey(in.id));
          if (found.ok()) seen.lookup_tag = txn.Read(items, *found)->GetInt(1);
          const std::string key = IdKey(in.id);
          std::string_view keys[] = {key};
          TupleAddress batch[1];
          if (absl::Status s = txn.LookupBatch(by_id, keys, batch); !s.ok()) {
            return s;
          }
          if (!batch[0].is_null()) {
            seen.batch_tag = txn.Read(items, batch[0])->GetInt(1);
          }
          for (bool forward : {true, false}) {
            int64_t& n = forward ? seen.scan_forward : seen.scan_backward;
            absl::Status s =
                txn.Scan(by_tag, TagKey(in.tag), TagKey(in.tag), forward,
                         UINT64_MAX, [&](std::string_view, TupleAddress) {
                           ++n;
                           return true;
                         });
            if (!s.ok()) return s;
          }
          txn::IndexIterator it = txn.NewIterator(
              by_tag, {.low = TagKey(in.tag), .high = TagKey(in.tag)});
          for (; it.Valid(); it.Next()) ++seen.iterated;
          if (!it.status().ok()) return it.status();
          return seen;
        });
    const partition::Fragment<WriteIn, Seen> write = write_;
    // Runs the fragment calls `script` (action, id, tag triples) on
    // `partition`, one round each, and reports what each saw; commits if
    // `commit`.
    script_ = *engine_->RegisterProcedure(
        "script",
        std::function<absl::StatusOr<std::string>(Txn&, int64_t,
                                                  std::vector<int64_t>, bool)>(
            [=](Txn& txn, int64_t partition, std::vector<int64_t> script,
                bool commit) -> absl::StatusOr<std::string> {
              std::string out;
              for (size_t i = 0; i + 2 < script.size(); i += 3) {
                auto seen = RunAt(txn, partition, write,
                                  WriteIn{static_cast<int32_t>(script[i]),
                                          script[i + 1], script[i + 2]});
                if (!seen.ok()) return seen.status();
                absl::StrAppend(&out, Text(*seen), " ");
              }
              if (!commit) return txn.UserAbort(out);
              return out;
            }));
  }

  std::unique_ptr<engine::Engine> engine_;
  partition::Fragment<WriteIn, Seen> write_;
  engine::Procedure<std::string(int64_t, std::vector<int64_t>, bool)> script_;
};

TEST_P(OwnWritesPartitionedTest, ABranchSeesItsOwnWritesAcrossRounds) {
  auto on_node0 = *engine_->NewSession(0);
  auto on_node1 = *engine_->NewSession(1);
  // Partition 1 is node 0's, 2 is node 1's: from node 0, one script runs
  // in its own branch, the other in a remote one.
  ASSERT_EQ(engine_->partition_map()->Owner(1), 0u);
  ASSERT_EQ(engine_->partition_map()->Owner(2), 1u);
  const std::vector<int64_t> script = {
      kInsert, 10, 5,  // inserted: seen at once, in every read path
      kSee,    10, 5,  // the next round, same branch: still seen
      kInsert, 11, 5,  // two rows of tag 5
      kRetag,  10, 6,  // 10 moves to tag 6 (Modify's buffer)
      kSee,    11, 5,  // tag 5 has one row again
      kDelete, 11, 5,  // gone from every path
  };
  // Tags as seen, less the partition's base.
  const std::vector<std::string> want_tags = {"5", "5", "5", "6", "5", "-1"};
  const std::vector<std::string> want_counts = {"1/1/1", "1/1/1", "2/2/2",
                                                "1/1/1", "1/1/1", "0/0/0"};
  for (int64_t partition : {1, 2}) {
    SCOPED_TRACE(absl::StrCat("partition ", partition));
    const int64_t base = 100 * partition;
    std::vector<int64_t> mine = script;
    for (size_t i = 0; i < mine.size(); i += 3) {
      mine[i + 1] += base;  // the id
      mine[i + 2] += base;  // the tag
    }
    auto rolled_back = on_node0->Call(script_, partition, mine, false);
    EXPECT_TRUE(engine::IsUserAbort(rolled_back.status()))
        << rolled_back.status();
    std::string want;
    for (size_t i = 0; i < want_tags.size(); ++i) {
      const std::string tag =
          want_tags[i] == "-1" ? "-1"
                               : absl::StrCat(base + std::stoi(want_tags[i]));
      absl::StrAppend(&want, tag, "/", tag, "/", want_counts[i], " ");
    }
    EXPECT_EQ(std::string(rolled_back.status().message()),
              "user abort: " + want);
    // Nothing stayed: row 10 is absent, from either node.
    const std::vector<int64_t> see = {kSee, base + 10, base + 6};
    EXPECT_EQ(*on_node1->Call(script_, partition, see, true), "-1/-1/0/0/0 ");
    auto committed = on_node0->Call(script_, partition, mine, true);
    ASSERT_TRUE(committed.ok()) << committed.status();
    EXPECT_EQ(*committed, want);
    // Committed: row 10 with tag 6, read from the other node.
    const std::string six = absl::StrCat(base + 6);
    EXPECT_EQ(*on_node1->Call(script_, partition, see, true),
              absl::StrCat(six, "/", six, "/1/1/1 "));
  }
  EXPECT_GT(engine_->PartitionStats().distributed, 0u);
}

INSTANTIATE_TEST_SUITE_P(Protocols, OwnWritesPartitionedTest,
                         ::testing::Values(cc::Protocol::kSel,
                                           cc::Protocol::kSelcc),
                         [](const auto& info) {
                           return std::string(cc::ProtocolName(info.param));
                         });

}  // namespace
}  // namespace strand::partition
