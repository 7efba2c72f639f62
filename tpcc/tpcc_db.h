#ifndef STRAND_TPCC_TPCC_DB_H_
#define STRAND_TPCC_TPCC_DB_H_

// A TPC-C database on one engine: the engine, the nine tables and their
// indexes, the load procedures and the five transactions, all defined
// before any session is opened (the engine freezes its schema then).

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "engine/engine.h"
#include "tpcc/loader.h"
#include "tpcc/random.h"
#include "tpcc/schema.h"

namespace strand::tpcc {

struct Procedures {
  engine::ProcedureId new_order = 0, payment = 0, order_status = 0,
                      delivery = 0, stock_level = 0;
};

class TpccDatabase {
 public:
  // What Open does with the tables: create them (an empty pool), or open
  // them (a pool restored from an image of a loaded TPC-C database, with
  // `options.image_path`, perhaps plus a recovered log).
  enum class TablesAt { kCreate, kOpen };

  // Opens an engine with `options` and defines everything on it. `seed`
  // fixes the NURand constants of the load and of the run (give the load's
  // seed when opening an image).
  static absl::StatusOr<std::unique_ptr<TpccDatabase>> Open(
      const engine::EngineOptions& options, const Scale& scale, uint64_t seed,
      TablesAt tables = TablesAt::kCreate);
  // The same on an engine already open (a compute process of a verbs
  // deployment opens the tables once node 0 has created them).
  static absl::StatusOr<std::unique_ptr<TpccDatabase>> Define(
      std::unique_ptr<engine::Engine> engine, const Scale& scale, uint64_t seed,
      TablesAt tables);

  engine::Engine& engine() { return *engine_; }
  const Tables& tables() const { return tables_; }
  const Procedures& procedures() const { return procedures_; }
  Loader& loader() { return *loader_; }
  const Scale& scale() const { return scale_; }
  const NURandConstants& load_constants() const { return load_constants_; }
  const NURandConstants& run_constants() const { return run_constants_; }
  int32_t load_time() const { return load_time_; }

 private:
  TpccDatabase() = default;

  std::unique_ptr<engine::Engine> engine_;
  Tables tables_{};
  Procedures procedures_;
  std::unique_ptr<Loader> loader_;
  Scale scale_;
  NURandConstants load_constants_, run_constants_;
  int32_t load_time_ = 0;
};

}  // namespace strand::tpcc

#endif  // STRAND_TPCC_TPCC_DB_H_
