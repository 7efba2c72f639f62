// Space overhead of heap tables for a TPC-C-like schema: bytes of GCL space
// per byte of user tuple data, per table and weighted by the row counts of
// one warehouse, for several --gcl_size values. The overhead is the latch
// word (8 B per GCL), the page header (16 B), each tuple's TupleHeader
// (16 B) and the tail of the page no tuple fits in. Prints a table; run
//   build/tests/storage/tpcc_overhead_test --gtest_filter=*Prints*
// to see it.

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "storage/heap_page.h"
#include "storage/heap_table.h"
#include "storage/schema.h"
#include "storage/tuple_header.h"
#include "tests/testing/cc_cluster.h"
#include "tests/testing/protocols.h"

namespace strand::storage {
namespace {

struct TpccTable {
  std::string name;
  double rows_per_warehouse;
  std::vector<ColumnSpec> columns;
};

ColumnSpec I32(std::string n) { return {std::move(n), ColumnType::kInt32}; }
ColumnSpec I64(std::string n) { return {std::move(n), ColumnType::kInt64}; }
ColumnSpec Dec(std::string n) {
  return {std::move(n), ColumnType::kDecimal, 0, 2};
}
ColumnSpec Chr(std::string n, uint16_t len) {
  return {std::move(n), ColumnType::kChar, len};
}

std::vector<TpccTable> TpccTables() {
  std::vector<ColumnSpec> stock = {I32("s_i_id"), I32("s_w_id"),
                                   I32("s_quantity")};
  for (int i = 1; i <= 10; ++i) {
    stock.push_back(Chr(absl::StrFormat("s_dist_%02d", i), 24));
  }
  for (auto c : {I64("s_ytd"), I32("s_order_cnt"), I32("s_remote_cnt"),
                 Chr("s_data", 50)}) {
    stock.push_back(c);
  }
  return {
      {"warehouse",
       1,
       {I32("w_id"), Chr("w_name", 10), Chr("w_street_1", 20),
        Chr("w_street_2", 20), Chr("w_city", 20), Chr("w_state", 2),
        Chr("w_zip", 9), Dec("w_tax"), Dec("w_ytd")}},
      {"district",
       10,
       {I32("d_id"), I32("d_w_id"), Chr("d_name", 10), Chr("d_street_1", 20),
        Chr("d_street_2", 20), Chr("d_city", 20), Chr("d_state", 2),
        Chr("d_zip", 9), Dec("d_tax"), Dec("d_ytd"), I32("d_next_o_id")}},
      {"customer",
       30000,
       {I32("c_id"),           I32("c_d_id"),         I32("c_w_id"),
        Chr("c_first", 16),    Chr("c_middle", 2),    Chr("c_last", 16),
        Chr("c_street_1", 20), Chr("c_street_2", 20), Chr("c_city", 20),
        Chr("c_state", 2),     Chr("c_zip", 9),       Chr("c_phone", 16),
        I64("c_since"),        Chr("c_credit", 2),    Dec("c_credit_lim"),
        Dec("c_discount"),     Dec("c_balance"),      Dec("c_ytd_payment"),
        I32("c_payment_cnt"),  I32("c_delivery_cnt"), Chr("c_data", 500)}},
      {"history",
       30000,
       {I32("h_c_id"), I32("h_c_d_id"), I32("h_c_w_id"), I32("h_d_id"),
        I32("h_w_id"), I64("h_date"), Dec("h_amount"), Chr("h_data", 24)}},
      {"new_order", 9000, {I32("no_o_id"), I32("no_d_id"), I32("no_w_id")}},
      {"order",
       30000,
       {I32("o_id"), I32("o_d_id"), I32("o_w_id"), I32("o_c_id"),
        I64("o_entry_d"), I32("o_carrier_id"), I32("o_ol_cnt"),
        I32("o_all_local")}},
      {"order_line",
       300000,
       {I32("ol_o_id"), I32("ol_d_id"), I32("ol_w_id"), I32("ol_number"),
        I32("ol_i_id"), I32("ol_supply_w_id"), I64("ol_delivery_d"),
        I32("ol_quantity"), Dec("ol_amount"), Chr("ol_dist_info", 24)}},
      {"item",
       100000,
       {I32("i_id"), I32("i_im_id"), Chr("i_name", 24), Dec("i_price"),
        Chr("i_data", 50)}},
      {"stock", 100000, stock},
  };
}

// GCL bytes per byte of user data for one table at `gcl_size`.
double Overhead(const Schema& s, uint32_t gcl_size) {
  const uint32_t slots = heap_page::SlotsPerPage(gcl_size - 8, s.tuple_bytes(),
                                                 TupleAddress::kMaxSlots);
  if (slots == 0) return 0;  // does not fit
  return static_cast<double>(gcl_size) /
         (static_cast<double>(slots) * s.data_bytes());
}

TEST(TpccOverheadTest, PrintsGclBytesPerTupleByte) {
  const std::vector<uint32_t> sizes = {512, 1024, 2048, 4096};
  std::string out =
      absl::StrFormat("%-11s %6s %6s", "table", "data_B", "tuple_B");
  for (uint32_t g : sizes) out += absl::StrFormat("  gcl=%-5d", g);
  out += "\n";
  std::vector<double> weighted_gcl(sizes.size(), 0);
  double weighted_data = 0;
  for (const TpccTable& t : TpccTables()) {
    auto s = Schema::Create(t.columns);
    ASSERT_TRUE(s.ok()) << t.name << ": " << s.status();
    out += absl::StrFormat("%-11s %6d %6d", t.name, s->data_bytes(),
                           s->tuple_bytes());
    weighted_data += t.rows_per_warehouse * s->data_bytes();
    for (size_t i = 0; i < sizes.size(); ++i) {
      const double o = Overhead(*s, sizes[i]);
      out +=
          o == 0 ? std::string("  no fit   ") : absl::StrFormat("  %-9.3f", o);
      if (o == 0) weighted_gcl[i] = -1e300;  // the sum means nothing
      weighted_gcl[i] += t.rows_per_warehouse * s->data_bytes() * o;
      if (sizes[i] >= 1024) {
        EXPECT_GT(o, 1.0) << t.name;
        // new_order (12 data bytes) pays over 2x for its 16-byte header.
        EXPECT_LT(o, 3.5) << t.name << " at gcl_size " << sizes[i];
      }
    }
    out += "\n";
  }
  out += absl::StrFormat("%-25s", "one warehouse (weighted)");
  for (size_t i = 0; i < sizes.size(); ++i) {
    out += weighted_gcl[i] < 0
               ? std::string("  n/a      ")
               : absl::StrFormat("  %-9.3f", weighted_gcl[i] / weighted_data);
  }
  std::printf(
      "GCL bytes per tuple data byte (latch word, page header, %d-byte tuple "
      "header, unused tail):\n%s\n",
      kTupleHeaderBytes, out.c_str());
}

// The layout the figures assume is the one HeapTable uses: fill one page of
// every table and count the pages.
class TpccLayoutTest : public ::testing::TestWithParam<cc::Protocol> {};

TEST_P(TpccLayoutTest, EveryTableFitsAndPacksAsComputed) {
  cc::CcOptions o;
  o.protocol = GetParam();
  o.gcl_size = 1024;
  auto cluster = *testing::CcCluster::Create(1, o);
  auto ctx = *cluster->manager(0).NewThreadContext();
  uint32_t id = 1;
  for (const TpccTable& t : TpccTables()) {
    const Schema s = *Schema::Create(t.columns);
    auto root = HeapTable::Create(cluster->manager(0), *ctx, id++, s);
    ASSERT_TRUE(root.ok()) << t.name << ": " << root.status();
    auto table = *HeapTable::Open(cluster->manager(0), *ctx, *root, s);
    const uint32_t slots = table->slots_per_page();
    EXPECT_EQ(slots, (1024 - 8 - 16) / s.tuple_bytes()) << t.name;
    TupleBuffer row(s);
    for (uint32_t i = 0; i < slots + 1; ++i) {
      ASSERT_TRUE(
          table->Insert(*ctx, absl::MakeConstSpan(row.data(), row.size()))
              .ok());
    }
    EXPECT_EQ(*table->PageCount(*ctx), 2u) << t.name;
  }
}

INSTANTIATE_TEST_SUITE_P(Protocols, TpccLayoutTest,
                         ::testing::ValuesIn(testing::TestProtocols()),
                         testing::ProtocolTestName);

}  // namespace
}  // namespace strand::storage
