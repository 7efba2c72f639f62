// HeapTable: insert, read, update in place, delete and scan under cc/
// latches, from several compute nodes and threads.

#include "storage/heap_table.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "gtest/gtest.h"
#include "storage/heap_page.h"
#include "storage/tuple_header.h"
#include "tests/testing/cc_cluster.h"
#include "tests/testing/cpu_path.h"
#include "tests/testing/protocols.h"
#include "tests/testing/test_fabric.h"

namespace strand::storage {
namespace {

class HeapTableTest : public ::testing::TestWithParam<cc::Protocol> {
 protected:
  // `pool_bytes`: the memory node's size (0: the test fabric's default).
  void Start(int nodes, uint32_t gcl_size, TableOptions options = {},
             uint64_t pool_bytes = 0) {
    cc::CcOptions o;
    o.protocol = GetParam();
    o.gcl_size = gcl_size;
    rdma::FabricOptions f = testing::TestFabricOptions(1, nodes);
    if (pool_bytes != 0) f.pool_bytes = pool_bytes;
    auto cluster = testing::CcCluster::Create(nodes, o, f);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = *std::move(cluster);
    schema_ = *Schema::Create({{"id", ColumnType::kInt64},
                               {"node", ColumnType::kInt32},
                               {"name", ColumnType::kChar, 12},
                               {"amount", ColumnType::kDecimal, 0, 2}});
    ctx_ = *m(0).NewThreadContext();
    auto root =
        HeapTable::Create(m(0), *ctx_, /*table_id=*/7, schema_, options);
    ASSERT_TRUE(root.ok()) << root.status();
    root_ = *root;
  }
  cc::GclManager& m(int i) { return cluster_->manager(i); }
  std::unique_ptr<HeapTable> OpenOn(int node, cc::ThreadContext& ctx) {
    auto t = HeapTable::Open(m(node), ctx, root_, schema_,
                             testing::TestHeapTuning());
    EXPECT_TRUE(t.ok()) << t.status();
    return t.ok() ? *std::move(t) : nullptr;
  }
  TupleBuffer Row(int64_t id, int node) {
    TupleBuffer t(schema_);
    t.SetInt(0, id);
    t.SetInt(1, node);
    t.SetChars(2, "row" + std::to_string(id));
    t.SetDecimal(3, id * 100);
    return t;
  }

  // Inserts rows first_id.. first_id + n - 1 through `ctx` (one thread, so
  // one insert page at a time); returns their addresses.
  std::vector<TupleAddress> InsertRows(HeapTable& table, cc::ThreadContext& ctx,
                                       int64_t first_id, int n) {
    std::vector<TupleAddress> addresses;
    for (int64_t id = first_id; id < first_id + n; ++id) {
      TupleBuffer row = Row(id, 0);
      auto a = table.Insert(ctx, absl::MakeConstSpan(row.data(), row.size()));
      EXPECT_TRUE(a.ok()) << a.status();
      if (a.ok()) addresses.push_back(*a);
    }
    return addresses;
  }
  // Rows per page, by page, of `addresses`.
  static absl::flat_hash_map<rdma::GlobalAddress, int> RowsByPage(
      const std::vector<TupleAddress>& addresses) {
    absl::flat_hash_map<rdma::GlobalAddress, int> rows;
    for (const TupleAddress& a : addresses) ++rows[a.gcl()];
    return rows;
  }
  // Ids of the rows a scan of `table` sees.
  std::vector<int64_t> ScannedIds(HeapTable& table, cc::ThreadContext& ctx) {
    std::vector<int64_t> ids;
    absl::Status s = table.Scan(ctx, [&](TupleAddress, const uint8_t* t) {
      ids.push_back(TupleView(schema_, t).GetInt(0));
      return true;
    });
    EXPECT_TRUE(s.ok()) << s;
    std::sort(ids.begin(), ids.end());
    return ids;
  }
  static std::vector<int64_t> Ids(int64_t first, int n) {
    std::vector<int64_t> ids(n);
    for (int i = 0; i < n; ++i) ids[i] = first + i;
    return ids;
  }

  std::unique_ptr<testing::CcCluster> cluster_;
  Schema schema_;
  std::unique_ptr<cc::ThreadContext> ctx_;
  rdma::GlobalAddress root_;
};

TEST_P(HeapTableTest, InsertReadUpdateDeleteScan) {
  Start(1, 256);
  auto table = OpenOn(0, *ctx_);
  ASSERT_NE(table, nullptr);
  ASSERT_GE(table->slots_per_page(), 2u);
  std::vector<TupleAddress> addresses;
  for (int i = 0; i < 50; ++i) {
    TupleBuffer row = Row(i, 0);
    auto a = table->Insert(*ctx_, absl::MakeConstSpan(row.data(), row.size()));
    ASSERT_TRUE(a.ok()) << a.status();
    addresses.push_back(*a);
  }
  EXPECT_GE(*table->PageCount(*ctx_),
            50 / table->slots_per_page());  // several pages
  TupleBuffer out(schema_);
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(
        table->Read(*ctx_, addresses[i], absl::MakeSpan(out.data(), out.size()))
            .ok());
    EXPECT_EQ(out.view().GetInt(0), i);
    EXPECT_EQ(out.view().GetChars(2), "row" + std::to_string(i));
  }

  TupleBuffer changed = Row(3, 0);
  changed.SetDecimal(3, 999);
  ASSERT_TRUE(table
                  ->Update(*ctx_, addresses[3],
                           absl::MakeConstSpan(changed.data(), changed.size()))
                  .ok());
  const int64_t name_col = 2;
  const char new_name[12] = "renamed";
  ASSERT_TRUE(
      table
          ->UpdateColumn(*ctx_, addresses[4], name_col,
                         absl::MakeConstSpan(
                             reinterpret_cast<const uint8_t*>(new_name), 12))
          .ok());
  ASSERT_TRUE(table->Delete(*ctx_, addresses[5]).ok());
  EXPECT_EQ(table->Delete(*ctx_, addresses[5]).code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(
      table->Read(*ctx_, addresses[5], absl::MakeSpan(out.data(), out.size()))
          .code(),
      absl::StatusCode::kNotFound);
  EXPECT_EQ(table
                ->Update(*ctx_, addresses[5],
                         absl::MakeConstSpan(changed.data(), changed.size()))
                .code(),
            absl::StatusCode::kNotFound);

  absl::flat_hash_map<int64_t, int64_t> seen;  // id -> amount
  ASSERT_TRUE(
      table
          ->Scan(*ctx_,
                 [&](TupleAddress, const uint8_t* t) {
                   TupleView v(schema_, t);
                   EXPECT_TRUE(
                       seen.emplace(v.GetInt(0), v.GetDecimal(3)).second);
                   if (v.GetInt(0) == 4) {
                     EXPECT_EQ(v.GetChars(2), "renamed");
                   }
                   return true;
                 })
          .ok());
  EXPECT_EQ(seen.size(), 49u);
  EXPECT_FALSE(seen.contains(5));
  EXPECT_EQ(seen[3], 999);
  EXPECT_EQ(seen[7], 700);

  int visited = 0;
  ASSERT_TRUE(table
                  ->Scan(*ctx_, [&](TupleAddress,
                                    const uint8_t*) { return ++visited < 10; })
                  .ok());
  EXPECT_EQ(visited, 10);  // the visitor stopped the scan
}

// heap_page.h: a 16-byte page header (magic, slots, table id, next page),
// then the slots; an address into another table's page is not a tuple.
TEST_P(HeapTableTest, PagesFollowTheDocumentedLayout) {
  Start(1, 256);
  auto table = OpenOn(0, *ctx_);
  ASSERT_NE(table, nullptr);
  ASSERT_EQ(schema_.tuple_bytes(), 48u);
  TupleBuffer row = Row(1, 0);
  auto a = table->Insert(*ctx_, absl::MakeConstSpan(row.data(), row.size()));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->slot(), 0u);
  {
    auto page = m(0).SLock(*ctx_, a->gcl());
    ASSERT_TRUE(page.ok()) << page.status();
    const uint8_t* p = page->data();
    EXPECT_EQ(heap_page::Get<uint16_t>(p, 0), 0x5048);  // "HP"
    EXPECT_EQ(heap_page::Get<uint16_t>(p, 2), table->slots_per_page());
    EXPECT_EQ(heap_page::Get<uint32_t>(p, 4), 7u);
    EXPECT_EQ(heap_page::Get<uint64_t>(p, 8), 0u);  // the only page
    EXPECT_EQ(TupleView(schema_, p + 16).GetInt(0), 1);
    ASSERT_TRUE(page->Unlock().ok());
  }
  EXPECT_EQ(table->slots_per_page(), (256u - 8 - 16) / 48);

  auto other_root = HeapTable::Create(m(0), *ctx_, /*table_id=*/8, schema_);
  ASSERT_TRUE(other_root.ok());
  auto other = *HeapTable::Open(m(0), *ctx_, *other_root, schema_);
  auto b = other->Insert(*ctx_, absl::MakeConstSpan(row.data(), row.size()));
  ASSERT_TRUE(b.ok());
  TupleBuffer out(schema_);
  EXPECT_EQ(
      table->Read(*ctx_, *b, absl::MakeSpan(out.data(), out.size())).code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(
      other->Read(*ctx_, *b, absl::MakeSpan(out.data(), out.size())).ok());
}

// TableOptions::max_rows_per_page 1: every row gets its own page (GCL, the
// unit of latching), and the page header says so.
TEST_P(HeapTableTest, OneRowPerPageGivesEachRowItsOwnGcl) {
  Start(1, 256, TableOptions{.max_rows_per_page = 1});
  auto table = OpenOn(0, *ctx_);
  ASSERT_NE(table, nullptr);
  EXPECT_EQ(table->slots_per_page(), 1u);
  constexpr int kRows = 12;
  const std::vector<TupleAddress> addresses =
      InsertRows(*table, *ctx_, 0, kRows);
  ASSERT_EQ(addresses.size(), kRows);
  EXPECT_EQ(*table->PageCount(*ctx_), kRows);
  EXPECT_EQ(RowsByPage(addresses).size(), kRows);  // distinct GCLs
  for (const TupleAddress& a : addresses) {
    EXPECT_EQ(a.slot(), 0u);
    auto page = m(0).SLock(*ctx_, a.gcl());
    ASSERT_TRUE(page.ok()) << page.status();
    EXPECT_EQ(heap_page::Get<uint16_t>(page->data(), heap_page::kSlotsOffset),
              1u);
    ASSERT_TRUE(page->Unlock().ok());
  }
  EXPECT_EQ(ScannedIds(*table, *ctx_), Ids(0, kRows));
  // Slot 1 of a one-row page is not a tuple address of the table.
  TupleBuffer out(schema_);
  EXPECT_EQ(table
                ->Read(*ctx_, *TupleAddress::Encode(addresses[0].gcl(), 1),
                       absl::MakeSpan(out.data(), out.size()))
                .code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_P(HeapTableTest, RowsPerPageLimitFillsPagesUpToTheLimit) {
  Start(1, 256, TableOptions{.max_rows_per_page = 3});
  auto table = OpenOn(0, *ctx_);
  ASSERT_NE(table, nullptr);
  EXPECT_EQ(table->slots_per_page(), 3u);  // 4 would fit
  const std::vector<TupleAddress> addresses = InsertRows(*table, *ctx_, 0, 10);
  EXPECT_EQ(*table->PageCount(*ctx_), 4u);  // 3 + 3 + 3 + 1
  std::vector<int> fill;
  for (const auto& [page, rows] : RowsByPage(addresses)) fill.push_back(rows);
  std::sort(fill.begin(), fill.end());
  EXPECT_EQ(fill, (std::vector<int>{1, 3, 3, 3}));
  EXPECT_EQ(ScannedIds(*table, *ctx_), Ids(0, 10));
}

// No limit (0, the default and what older roots hold) and a limit above
// what fits both mean as many rows as fit.
TEST_P(HeapTableTest, NoLimitOrALimitAboveWhatFitsFillsPages) {
  Start(1, 256);
  const uint32_t fits = (256u - 8 - 16) / 48;  // 4
  uint32_t table_id = 10;
  for (uint32_t limit : {0u, fits, fits + 1, 1000u, 1u << 20}) {
    SCOPED_TRACE(limit);
    auto root = HeapTable::Create(m(0), *ctx_, table_id++, schema_,
                                  TableOptions{.max_rows_per_page = limit});
    ASSERT_TRUE(root.ok()) << root.status();
    auto table = *HeapTable::Open(m(0), *ctx_, *root, schema_);
    EXPECT_EQ(table->slots_per_page(), fits);
    const std::vector<TupleAddress> addresses =
        InsertRows(*table, *ctx_, 0, 10);
    EXPECT_EQ(*table->PageCount(*ctx_), 3u);  // 4 + 4 + 2
    EXPECT_EQ(RowsByPage(addresses).size(), 3u);
    EXPECT_EQ(ScannedIds(*table, *ctx_), Ids(0, 10));
  }
}

// The limit lives in the root: a table opened again, or on another node,
// keeps it, and each node's scan accepts the other's pages.
TEST_P(HeapTableTest, RowsPerPageLimitSurvivesReopening) {
  Start(2, 256, TableOptions{.max_rows_per_page = 1});
  {
    auto first = OpenOn(0, *ctx_);
    ASSERT_NE(first, nullptr);
    EXPECT_EQ(InsertRows(*first, *ctx_, 0, 3).size(), 3u);
  }
  auto again = OpenOn(0, *ctx_);
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->slots_per_page(), 1u);
  auto ctx1 = *m(1).NewThreadContext();
  auto remote = OpenOn(1, *ctx1);
  ASSERT_NE(remote, nullptr);
  EXPECT_EQ(remote->slots_per_page(), 1u);
  const std::vector<TupleAddress> more = InsertRows(*remote, *ctx1, 3, 4);
  EXPECT_EQ(RowsByPage(more).size(), 4u);
  EXPECT_EQ(*again->PageCount(*ctx_), 7u);
  EXPECT_EQ(ScannedIds(*again, *ctx_), Ids(0, 7));
  EXPECT_EQ(ScannedIds(*remote, *ctx1), Ids(0, 7));
}

TEST_P(HeapTableTest, UpdateWritesBackOnlyTheChangedBytes) {
  Start(1, 512);
  auto table = OpenOn(0, *ctx_);
  TupleBuffer row = Row(1, 0);
  auto a = *table->Insert(*ctx_, absl::MakeConstSpan(row.data(), row.size()));
  row.SetDecimal(3, 4242);  // one 8-byte column
  const uint64_t before = m(0).Stats().flushed_bytes;
  ASSERT_TRUE(
      table->Update(*ctx_, a, absl::MakeConstSpan(row.data(), row.size()))
          .ok());
  if (GetParam() == cc::Protocol::kSel) {  // SEL writes back at unlock
    // 4242 and 100 differ in their two low bytes only.
    EXPECT_LE(m(0).Stats().flushed_bytes - before, 8u);
    EXPECT_GE(m(0).Stats().flushed_bytes - before, 1u);
  }
  const uint64_t before_delete = m(0).Stats().flushed_bytes;
  ASSERT_TRUE(table->Delete(*ctx_, a).ok());
  if (GetParam() == cc::Protocol::kSel) {
    EXPECT_EQ(m(0).Stats().flushed_bytes - before_delete, 1u);  // flags byte
  }
}

TEST_P(HeapTableTest, TupleLargerThanAGclIsRejected) {
  Start(1, 128);
  auto wide = *Schema::Create({{"blob", ColumnType::kChar, 200}});
  auto root = HeapTable::Create(m(0), *ctx_, 1, wide);
  EXPECT_EQ(root.status().code(), absl::StatusCode::kInvalidArgument);
  auto opened = HeapTable::Open(m(0), *ctx_, root_, wide);
  EXPECT_EQ(opened.status().code(), absl::StatusCode::kFailedPrecondition);
}

// A slot handed back on a thread's current page (an aborted insert's) is
// that thread's to reuse: another thread inserting there would collide
// with it on the page's latch at commit.
TEST_P(HeapTableTest, ReleasedSlotsOnAThreadsPageWaitForThatThread) {
  Start(1, 4096);
  auto a_ctx = *m(0).NewThreadContext();
  auto b_ctx = *m(0).NewThreadContext();
  auto table = OpenOn(0, *ctx_);
  ASSERT_NE(table, nullptr);
  const std::vector<TupleAddress> a_rows = InsertRows(*table, *a_ctx, 0, 3);
  const std::vector<TupleAddress> b_rows = InsertRows(*table, *b_ctx, 3, 1);
  ASSERT_EQ(a_rows.size(), 3u);
  ASSERT_EQ(b_rows.size(), 1u);
  ASSERT_NE(a_rows[0].gcl(), b_rows[0].gcl());
  table->ReleaseSlot(a_rows[2]);  // as an aborted insert of A's would
  const std::vector<TupleAddress> b_more = InsertRows(*table, *b_ctx, 4, 5);
  for (const TupleAddress& a : b_more) {
    EXPECT_EQ(a.gcl(), b_rows[0].gcl()) << a.ToString();
  }
  const std::vector<TupleAddress> a_more = InsertRows(*table, *a_ctx, 9, 1);
  ASSERT_EQ(a_more.size(), 1u);
  EXPECT_EQ(a_more[0], a_rows[2]);
}

// A full pool fails the insert that needed a new page, and every slot
// keeps one owner: the rest of a page the inserting thread left behind
// (the caller held it) goes to the free slots and is no longer the
// thread's page, though no new page replaced it.
TEST_P(HeapTableTest, InsertsIntoAFullPoolNeverShareASlot) {
  Start(1, 256, {}, 1 << 20);
  auto table = OpenOn(0, *ctx_);
  ASSERT_NE(table, nullptr);
  auto insert = [&](int64_t id, bool hold_own_page,
                    rdma::GlobalAddress own_page) {
    TupleBuffer row = Row(id, 0);
    return table->Insert(*ctx_, absl::MakeConstSpan(row.data(), row.size()),
                         false, [&](rdma::GlobalAddress page) {
                           return hold_own_page && page == own_page;
                         });
  };
  auto first = insert(0, false, {});
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_GT(table->slots_per_page(), 2u);
  // Nothing left for a new page.
  for (;;) {
    auto gcl = m(0).Allocate(*ctx_);
    if (!gcl.ok()) {
      ASSERT_TRUE(absl::IsResourceExhausted(gcl.status())) << gcl.status();
      break;
    }
  }
  // The caller holds the thread's page: its rest is left behind, and the
  // new page cannot be had.
  auto refused = insert(1, true, first->gcl());
  ASSERT_TRUE(absl::IsResourceExhausted(refused.status())) << refused.status();
  // Now every insert takes a slot of that rest, until none is left.
  absl::flat_hash_set<TupleAddress> taken = {*first};
  int64_t id = 2;
  for (;; ++id) {
    auto a = insert(id, false, {});
    if (!a.ok()) {
      ASSERT_TRUE(absl::IsResourceExhausted(a.status())) << a.status();
      break;
    }
    EXPECT_TRUE(taken.insert(*a).second)
        << "slot " << a->ToString() << " handed out twice";
    ASSERT_LT(id, 1000);
  }
  EXPECT_EQ(taken.size(), table->slots_per_page());
  // Every row is there once: none overwrote another.
  std::vector<int64_t> expected = Ids(2, id - 2);
  expected.insert(expected.begin(), 0);
  EXPECT_EQ(ScannedIds(*table, *ctx_), expected);
}

// A thread finds its insert page in each table through a small cache:
// tables that share a cache entry, and a table closed and opened again
// (a new object, likely at the old one's address), still insert only into
// their own pages.
TEST_P(HeapTableTest, InterleavedInsertsIntoManyTablesStayInTheirTables) {
  Start(1, 4096);
  constexpr int kTables = 40;  // more than the cache's entries
  constexpr int kRowsPerRound = 20;
  std::vector<rdma::GlobalAddress> roots;
  std::vector<std::unique_ptr<HeapTable>> tables;
  for (int t = 0; t < kTables; ++t) {
    auto root = HeapTable::Create(m(0), *ctx_, /*table_id=*/100 + t, schema_);
    ASSERT_TRUE(root.ok()) << root.status();
    auto table = HeapTable::Open(m(0), *ctx_, *root, schema_);
    ASSERT_TRUE(table.ok()) << table.status();
    roots.push_back(*root);
    tables.push_back(*std::move(table));
  }
  auto insert_rows = [&](int64_t first_row) {
    for (int64_t row = first_row; row < first_row + kRowsPerRound; ++row) {
      for (int t = 0; t < kTables; ++t) {
        InsertRows(*tables[t], *ctx_, t * 1000 + row, 1);
      }
    }
  };
  insert_rows(0);
  for (int t = 0; t < kTables; t += 7) {
    tables[t].reset();
    auto reopened = HeapTable::Open(m(0), *ctx_, roots[t], schema_);
    ASSERT_TRUE(reopened.ok()) << reopened.status();
    tables[t] = *std::move(reopened);
  }
  insert_rows(kRowsPerRound);
  for (int t = 0; t < kTables; ++t) {
    EXPECT_EQ(ScannedIds(*tables[t], *ctx_), Ids(t * 1000, 2 * kRowsPerRound))
        << "table " << t;
  }
}

TEST_P(HeapTableTest, ConcurrentInsertsFromSeveralNodesAreAllReadable) {
  constexpr int kNodes = 4, kThreads = 2, kRows = 150;
  Start(kNodes, 256);
  std::vector<std::unique_ptr<HeapTable>> tables(kNodes);
  // Each node's table through a context of that node: a context belongs to
  // its node's manager (SELCC refuses another node's).
  for (int n = 0; n < kNodes; ++n) {
    auto ctx = *m(n).NewThreadContext();
    tables[n] = OpenOn(n, *ctx);
  }
  std::vector<std::vector<TupleAddress>> inserted(kNodes * kThreads);
  std::vector<std::thread> threads;
  // Every context lives until all threads are done: a context that went
  // early could leave its address, and with it its current page, to a
  // later thread's context.
  std::atomic<int> inserting{kNodes * kThreads};
  for (int n = 0; n < kNodes; ++n) {
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, n, t] {
        auto ctx = *m(n).NewThreadContext();
        for (int i = 0; i < kRows; ++i) {
          const int64_t id = (n * kThreads + t) * kRows + i;
          TupleBuffer row = Row(id, n);
          auto a = tables[n]->Insert(
              *ctx, absl::MakeConstSpan(row.data(), row.size()));
          if (!a.ok()) {
            ADD_FAILURE() << a.status();
            break;
          }
          inserted[n * kThreads + t].push_back(*a);
        }
        --inserting;
        while (inserting.load() > 0) std::this_thread::yield();
      });
    }
  }
  for (auto& t : threads) t.join();
  for (const auto& rows : inserted) ASSERT_EQ(rows.size(), kRows);

  // Every tuple is readable at its address from any node; addresses are
  // distinct; pages are never shared between threads, of one node or of
  // two (each thread fills its own page).
  absl::flat_hash_set<TupleAddress> all;
  absl::flat_hash_map<rdma::GlobalAddress, int> page_owner;
  auto reader = *m(1).NewThreadContext();
  TupleBuffer out(schema_);
  for (int w = 0; w < kNodes * kThreads; ++w) {
    for (int i = 0; i < kRows; ++i) {
      const TupleAddress a = inserted[w][i];
      EXPECT_TRUE(all.insert(a).second) << a.ToString();
      auto [it, fresh] = page_owner.emplace(a.gcl(), w);
      EXPECT_EQ(it->second, w)
          << "page shared by threads " << it->second << " and " << w
          << " (nodes " << it->second / kThreads << " and " << w / kThreads
          << ")";
      ASSERT_TRUE(tables[1]
                      ->Read(*reader, a, absl::MakeSpan(out.data(), out.size()))
                      .ok());
      EXPECT_EQ(out.view().GetInt(0), w * kRows + i);
    }
  }
  uint64_t scanned = 0;
  auto scanner = *m(2).NewThreadContext();
  ASSERT_TRUE(tables[2]
                  ->Scan(*scanner,
                         [&](TupleAddress a, const uint8_t*) {
                           EXPECT_TRUE(all.contains(a));
                           ++scanned;
                           return true;
                         })
                  .ok());
  EXPECT_EQ(scanned, all.size());
}

INSTANTIATE_TEST_SUITE_P(Protocols, HeapTableTest,
                         ::testing::ValuesIn(testing::TestProtocols()),
                         testing::ProtocolTestName);

}  // namespace
}  // namespace strand::storage
