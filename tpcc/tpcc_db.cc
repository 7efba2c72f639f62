#include "tpcc/tpcc_db.h"

#include "absl/time/clock.h"
#include "tpcc/delivery.h"
#include "tpcc/new_order.h"
#include "tpcc/order_status.h"
#include "tpcc/payment.h"
#include "tpcc/stock_level.h"

namespace strand::tpcc {

absl::StatusOr<std::unique_ptr<TpccDatabase>> TpccDatabase::Open(
    const engine::EngineOptions& options, const Scale& scale, uint64_t seed,
    TablesAt at) {
  auto engine = engine::Engine::Open(options);
  if (!engine.ok()) return engine.status();
  return Define(*std::move(engine), scale, seed, at);
}

absl::StatusOr<std::unique_ptr<TpccDatabase>> TpccDatabase::Define(
    std::unique_ptr<engine::Engine> engine, const Scale& scale, uint64_t seed,
    TablesAt at) {
  std::unique_ptr<TpccDatabase> db(new TpccDatabase());
  db->engine_ = std::move(engine);
  db->scale_ = scale;
  db->load_constants_ = NURandConstants::ForLoad(seed);
  db->run_constants_ = NURandConstants::ForRun(db->load_constants_, seed);
  db->load_time_ = static_cast<int32_t>(absl::ToUnixSeconds(absl::Now()));
  auto tables = at == TablesAt::kCreate ? CreateTables(*db->engine_)
                                        : OpenTables(*db->engine_);
  if (!tables.ok()) return tables.status();
  db->tables_ = *tables;
  auto loader = Loader::Register(*db->engine_, db->tables_, scale,
                                 db->load_constants_, db->load_time_);
  if (!loader.ok()) return loader.status();
  db->loader_ = *std::move(loader);
  engine::Engine& e = *db->engine_;
  Procedures& p = db->procedures_;
  auto no = RegisterNewOrder(e, db->tables_);
  if (!no.ok()) return no.status();
  p.new_order = *no;
  auto pay = RegisterPayment(e, db->tables_);
  if (!pay.ok()) return pay.status();
  p.payment = *pay;
  auto os = RegisterOrderStatus(e, db->tables_);
  if (!os.ok()) return os.status();
  p.order_status = *os;
  auto del = RegisterDelivery(e, db->tables_, scale);
  if (!del.ok()) return del.status();
  p.delivery = *del;
  auto sl = RegisterStockLevel(e, db->tables_);
  if (!sl.ok()) return sl.status();
  p.stock_level = *sl;
  return db;
}

}  // namespace strand::tpcc
