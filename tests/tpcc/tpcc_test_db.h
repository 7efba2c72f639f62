#ifndef STRAND_TESTS_TPCC_TPCC_TEST_DB_H_
#define STRAND_TESTS_TPCC_TPCC_TEST_DB_H_

// Small TPC-C databases for tests: a scaled-down load (few items and
// customers, so a warehouse loads in milliseconds) on a given algorithm,
// protocol and number of compute nodes, and a way to read a table's rows
// straight from its heap.

#include <functional>
#include <memory>

#include "engine/engine_internals.h"
#include "gtest/gtest.h"
#include "storage/catalog.h"
#include "storage/heap_table.h"
#include "tests/testing/cpu_path.h"
#include "tests/testing/test_fabric.h"
#include "tpcc/tpcc_db.h"

namespace strand::tpcc::testing {

inline Scale TestScale() {
  Scale s;
  s.items = 1000;
  s.customers = 60;  // 18 new orders per district
  return s;
}

inline engine::EngineOptions TestOptions(txn::CcAlgorithm algorithm,
                                         cc::Protocol protocol, int nodes) {
  engine::EngineOptions o;
  o.fabric = strand::testing::TestFabricOptions(1, nodes);
  o.fabric.pool_bytes = uint64_t{128} << 20;
  o.cc.protocol = protocol;
  // 1024 lines: smaller than the data, but larger than the footprint of
  // the largest transaction (Stock-Level latches up to ~300 lines), which
  // a cache must hold at once.
  o.cc.cache_bytes = 1024 * 1024;
  o.algorithm = algorithm;
  o.retry.max_retries = 100000;
  strand::testing::ApplyTestCpuPathToEngine(o);
  return o;
}

// Opens and loads `warehouses` warehouses.
inline std::unique_ptr<TpccDatabase> LoadTestDb(
    const engine::EngineOptions& options, int warehouses,
    const Scale& scale = TestScale()) {
  auto db = TpccDatabase::Open(options, scale, /*seed=*/42);
  EXPECT_TRUE(db.ok()) << db.status();
  if (!db.ok()) return nullptr;
  auto load = (*db)->loader().Load(warehouses, 1, 42, false);
  EXPECT_TRUE(load.ok()) << load.status();
  return *std::move(db);
}

// Calls `visit` for every live row of table `name` (compute node 0).
inline void ForEachRow(
    engine::Engine& engine, const char* name,
    const std::function<void(const storage::TupleView&)>& visit) {
  cc::GclManager& m = **engine::EngineInternals::manager(engine, 0);
  auto ctx = *m.NewThreadContext();
  auto catalog = *storage::Catalog::Open(m, *ctx);
  auto desc = *catalog->FindTable(*ctx, name);
  auto heap = *storage::HeapTable::Open(m, *ctx, desc.root, desc.schema);
  const storage::Schema& schema = heap->schema();
  ASSERT_TRUE(heap->Scan(*ctx,
                         [&](storage::TupleAddress, const uint8_t* t) {
                           visit(storage::TupleView(schema, t));
                           return true;
                         })
                  .ok());
}

inline int64_t CountRows(engine::Engine& engine, const char* name) {
  int64_t n = 0;
  ForEachRow(engine, name, [&](const storage::TupleView&) { ++n; });
  return n;
}

}  // namespace strand::tpcc::testing

#endif  // STRAND_TESTS_TPCC_TPCC_TEST_DB_H_
