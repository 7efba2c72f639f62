// The embedding API's errors: bad arguments get clear statuses.

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/engine/txn_test_db.h"

namespace strand::engine {
namespace {

using ::testing::HasSubstr;
using txn::Txn;

EngineOptions Options() {
  return testing::TxnTestOptions(
      {txn::CcAlgorithm::kOptimistic, cc::Protocol::kSel, 2});
}

TEST(EngineApiTest, BadOptionsNameTheFieldToAProgramAndTheFlagToAUser) {
  EngineOptions o = Options();
  o.fabric.compute_nodes = 0;
  auto engine = Engine::Open(o);
  ASSERT_FALSE(engine.ok());
  EXPECT_EQ(engine.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(engine.status().message()),
              HasSubstr("EngineOptions::fabric.compute_nodes=0"));
  EXPECT_THAT(
      std::string(o.Validate(OptionNaming::Flags("EngineOptions::")).message()),
      HasSubstr("--compute_nodes=0"));

  o = Options();
  o.cc.protocol = cc::Protocol::kSelcc;
  o.cc.cache_bytes = 1024;
  EXPECT_THAT(std::string(o.Validate().message()),
              HasSubstr("EngineOptions::cc.cache_bytes=1024"));
  o = Options();
  o.retry.max_retries = -1;  // no flag sets it: named as the field anyway
  EXPECT_THAT(
      std::string(o.Validate(OptionNaming::Flags("EngineOptions::")).message()),
      HasSubstr("EngineOptions::retry.max_retries=-1"));
  o = Options();
  o.wal.dir = o.recover_wal_dir = "/tmp/logs";  // resumes in place: fine
  EXPECT_TRUE(o.Validate().ok()) << o.Validate();
  o.checkpoint_interval = absl::Milliseconds(10);
  EXPECT_THAT(std::string(o.Validate().message()),
              HasSubstr("EngineOptions::checkpoint_interval=10ms must be 0"));
  EXPECT_THAT(
      std::string(o.Validate(OptionNaming::Flags("EngineOptions::")).message()),
      HasSubstr("--checkpoint_interval_s"));
  o = Options();
  o.checkpoints_kept = 0;
  EXPECT_THAT(std::string(o.Validate().message()),
              HasSubstr("EngineOptions::checkpoints_kept=0 must be from 1"));
  o = Options();  // two compute nodes: early lock release is fine
  o.wal.early_lock_release = true;
  EXPECT_TRUE(o.Validate().ok()) << o.Validate();
  o.wal.watermark_interval = absl::ZeroDuration();
  EXPECT_THAT(std::string(o.Validate().message()),
              HasSubstr("EngineOptions::wal.watermark_interval=0 must be "
                        "above 0"));
  o = Options();
  o.wal.ack_timeout = absl::Seconds(-1);
  EXPECT_THAT(std::string(o.Validate().message()),
              HasSubstr("EngineOptions::wal.ack_timeout=-1s must be above 0"));
}

// Unknown tables, indexes and nodes are NotFound; an unknown procedure is
// Unimplemented, so that a call's NotFound is always the procedure's own
// ("no such key").
TEST(EngineApiTest, UnknownNamesAreNotFoundAndProceduresUnimplemented) {
  auto engine = *Engine::Open(Options());
  EXPECT_EQ(engine->OpenTable("nope").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(engine->OpenIndex("nope").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(engine->FindProcedure("nope").status().code(),
            absl::StatusCode::kUnimplemented);
  auto session = *engine->NewSession(1);
  auto r = session->Call<int>("nope", 1);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(engine->NewSession(7).status().code(), absl::StatusCode::kNotFound);
}

TEST(EngineApiTest, DuplicatesAndLateDefinitionsAreRefused) {
  auto engine = *Engine::Open(Options());
  auto schema = *storage::Schema::Create({{"x", storage::ColumnType::kInt64}});
  txn::TableId t = *engine->CreateTable("t", schema);
  EXPECT_EQ(engine->CreateTable("t", schema).status().code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(*engine->OpenTable("t"), t);
  EXPECT_EQ(engine->CreateIndex("i", 99, 8, true).status().code(),
            absl::StatusCode::kInvalidArgument);
  std::function<absl::StatusOr<int>(Txn&, int)> twice =
      [](Txn&, int x) -> absl::StatusOr<int> { return 2 * x; };
  ASSERT_TRUE(engine->RegisterProcedure("twice", twice).ok());
  EXPECT_EQ(engine->RegisterProcedure("twice", twice).status().code(),
            absl::StatusCode::kAlreadyExists);

  auto session = *engine->NewSession(0);
  EXPECT_EQ(*session->Call<int>("twice", 21), 42);
  // Wrong argument or result types: an error, not undefined behaviour.
  EXPECT_EQ(session->Call<int>("twice", 21L).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(session->Call<double>("twice", 21).status().code(),
            absl::StatusCode::kInvalidArgument);
  // The schema is fixed once sessions run.
  EXPECT_EQ(engine->CreateTable("u", schema).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(engine->RegisterProcedure("thrice", twice).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(EngineApiTest, UserAbortsAreReturnedNotRetried) {
  auto engine = *Engine::Open(Options());
  std::function<absl::StatusOr<int>(Txn&)> refuse =
      [](Txn& txn) -> absl::StatusOr<int> { return txn.UserAbort("no"); };
  ProcedureId id = *engine->RegisterProcedure("refuse", refuse);
  auto session = *engine->NewSession(0);
  auto r = session->Call<int>(id);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kAborted);
  const ProcedureStats stats = engine->Stats()[id];
  EXPECT_EQ(stats.calls, 1u);
  EXPECT_EQ(stats.aborts_for(txn::AbortReason::kUser), 1u);
  EXPECT_EQ(stats.aborts_total(), 1u);
  EXPECT_EQ(stats.commits, 0u);
}

TEST(EngineApiTest, BadTableAndIndexIdsInsideProceduresAreErrors) {
  auto engine = *Engine::Open(Options());
  std::function<absl::StatusOr<int>(Txn&)> bad =
      [](Txn& txn) -> absl::StatusOr<int> {
    auto r = txn.Lookup(5, "12345678");
    if (!r.ok()) return r.status();
    return 0;
  };
  ProcedureId id = *engine->RegisterProcedure("bad", bad);
  auto session = *engine->NewSession(0);
  EXPECT_EQ(session->Call<int>(id).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace strand::engine
