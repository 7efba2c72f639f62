#ifndef STRAND_TPCC_SCHEMA_H_
#define STRAND_TPCC_SCHEMA_H_

// The nine TPC-C tables (specification clause 1.3), their indexes and the
// encoders of their keys.
//
// Columns keep the specification's names and domains, each stored in the
// narrowest type that holds its domain (memory per warehouse is a target:
// at most 1.3x the clause 1.3 row bytes): warehouse and customer numbers
// are int16 and district numbers int8 (limits below); other ids, counters
// and bounded amounts int32 or narrower; money in cents (int64 for the
// sums that grow with the run); rates int16 counts of 10^-4; dates int32
// seconds since the epoch, 0 for the specification's null. Procedures read
// every column with GetInt / GetDecimal, which sign-extend to int64, so no
// code depends on a width; a write out of a column's range is a CHECK
// failure (storage/schema.h).
//
// Keys are memcmp-ordered (index/key_codec.h), with a warehouse and
// district packed into one 32-bit "district number" (w << 8 | d).
// Non-unique lookups are made unique by appending the row's own id:
// customer by (w, d, last, first, c_id) and orders by (w, d, c_id, o_id),
// both read with Txn::Scan over a [low, high] range.
// Design (every column's width, and why): docs/design/tpcc.md.

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "engine/engine.h"
#include "storage/schema.h"
#include "txn/database.h"

namespace strand::tpcc {

// Cardinalities (clause 1.2 and 4.3). The defaults are the specification's;
// tests scale items and customers down to keep loads short.
struct Scale {
  int items = 100000;    // ITEM rows, and STOCK rows per warehouse
  int districts = 10;    // per warehouse (fixed by the specification)
  int customers = 3000;  // per district; also the orders per district
  int new_orders() const { return customers * 3 / 10; }  // 900 of 3000

  static constexpr int kMaxOrderLines = 15;
};

// Limits of the narrow id columns above (Loader rejects larger loads).
inline constexpr int kMaxWarehouses = INT16_MAX;
inline constexpr int kMaxDistricts = INT8_MAX;
inline constexpr int kMaxCustomers = INT16_MAX;  // per district

namespace warehouse {
enum : size_t {
  kId,
  kName,
  kStreet1,
  kStreet2,
  kCity,
  kState,
  kZip,
  kTax,
  kYtd
};
}
namespace district {
enum : size_t {
  kId,
  kWId,
  kName,
  kStreet1,
  kStreet2,
  kCity,
  kState,
  kZip,
  kTax,
  kYtd,
  kNextOId
};
}
namespace customer {
enum : size_t {
  kId,
  kDId,
  kWId,
  kFirst,
  kMiddle,
  kLast,
  kStreet1,
  kStreet2,
  kCity,
  kState,
  kZip,
  kPhone,
  kSince,
  kCredit,
  kCreditLim,
  kDiscount,
  kBalance,
  kYtdPayment,
  kPaymentCnt,
  kDeliveryCnt,
  kData
};
}
namespace history {
enum : size_t { kCId, kCDId, kCWId, kDId, kWId, kDate, kAmount, kData };
}
namespace new_order {
enum : size_t { kOId, kDId, kWId };
}
namespace order {
enum : size_t { kId, kDId, kWId, kCId, kEntryD, kCarrierId, kOlCnt, kAllLocal };
}
namespace order_line {
enum : size_t {
  kOId,
  kDId,
  kWId,
  kNumber,
  kIId,
  kSupplyWId,
  kDeliveryD,
  kQuantity,
  kAmount,
  kDistInfo
};
}
namespace item {
enum : size_t { kId, kImId, kName, kPrice, kData };
}
namespace stock {
enum : size_t {
  kIId,
  kWId,
  kQuantity,
  kDist01,
  kYtd = kDist01 + 10,
  kOrderCnt,
  kRemoteCnt,
  kData
};
}

// Ids of the tables and indexes in one engine, and their schemas.
struct Tables {
  txn::TableId warehouse, district, customer, history, new_order, order,
      order_line, item, stock;
  txn::IndexId warehouse_pk, district_pk, customer_pk, customer_by_name,
      new_order_pk, order_pk, order_by_customer, order_line_pk, item_pk,
      stock_pk;
  // Owned by the engine; valid while it lives (the schema is frozen once
  // every table exists).
  const storage::Schema* warehouse_schema;
  const storage::Schema* district_schema;
  const storage::Schema* customer_schema;
  const storage::Schema* history_schema;
  const storage::Schema* new_order_schema;
  const storage::Schema* order_schema;
  const storage::Schema* order_line_schema;
  const storage::Schema* item_schema;
  const storage::Schema* stock_schema;
};

// Creates every table and index in `engine` (before its first session).
absl::StatusOr<Tables> CreateTables(engine::Engine& engine);
// Opens them by name in an engine restored from an image (engine/image.h)
// of a TPC-C database (NotFound if one is missing).
absl::StatusOr<Tables> OpenTables(engine::Engine& engine);

// Bytes of one row of each table as clause 1.3 sizes it ("raw TPC-C tuple
// bytes"), and the raw bytes of one warehouse (ITEM excluded: it is one
// table for all warehouses).
struct RawBytes {
  static constexpr uint64_t kWarehouse = 89, kDistrict = 95, kCustomer = 655,
                            kHistory = 46, kNewOrder = 8, kOrder = 24,
                            kOrderLine = 54, kItem = 82, kStock = 306;
  // Expected rows: each order has 10 lines on average.
  static uint64_t PerWarehouse(const Scale& scale);
  static uint64_t Items(const Scale& scale) { return kItem * scale.items; }
};

// Key encoders. `w` < 2^24, `d` < 256.
// S_DIST_01..10 and OL_DIST_INFO: CHAR(24).
inline constexpr size_t kDistInfoWidth = 24;

inline constexpr uint16_t kWarehouseKeyWidth = 4;
inline constexpr uint16_t kDistrictKeyWidth = 4;
inline constexpr uint16_t kCustomerKeyWidth = 8;
inline constexpr uint16_t kCustomerNameKeyWidth = 40;
inline constexpr uint16_t kNewOrderKeyWidth = 8;
inline constexpr uint16_t kOrderKeyWidth = 8;
inline constexpr uint16_t kOrderCustomerKeyWidth = 12;
inline constexpr uint16_t kOrderLineKeyWidth = 9;
inline constexpr uint16_t kItemKeyWidth = 4;
inline constexpr uint16_t kStockKeyWidth = 8;

std::string WarehouseKey(int w);
std::string DistrictKey(int w, int d);
std::string CustomerKey(int w, int d, int c);
// Last and first names fill 16-byte fields; c_id makes the key unique.
std::string CustomerNameKey(int w, int d, std::string_view last,
                            std::string_view first, int c);
std::string NewOrderKey(int w, int d, int o);
std::string OrderKey(int w, int d, int o);
std::string OrderCustomerKey(int w, int d, int c, int o);
std::string OrderLineKey(int w, int d, int o, int ol);
std::string ItemKey(int i);
std::string StockKey(int w, int i);

}  // namespace strand::tpcc

#endif  // STRAND_TPCC_SCHEMA_H_
