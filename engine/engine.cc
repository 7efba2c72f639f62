#include "engine/engine.h"

#include "engine/engine_impl.h"
#include "engine/image.h"
#include "engine/node_reclaim.h"
#include "engine/session.h"

namespace strand::engine {

absl::StatusOr<std::unique_ptr<Engine>> Engine::Open(
    const EngineOptions& options) {
  auto impl = EngineImpl::Open(options);
  if (!impl.ok()) return impl.status();
  return std::unique_ptr<Engine>(new Engine(*std::move(impl)));
}

Engine::Engine(std::unique_ptr<EngineImpl> impl) : impl_(std::move(impl)) {}
Engine::~Engine() = default;

const EngineOptions& Engine::options() const { return impl_->options(); }

std::vector<rdma::ComputeNodeId> Engine::local_compute_nodes() const {
  return impl_->local_compute_nodes();
}

absl::StatusOr<txn::TableId> Engine::CreateTable(
    std::string_view name, const storage::Schema& schema,
    const storage::TableOptions& options) {
  return impl_->CreateTable(name, schema, options);
}

absl::StatusOr<txn::TableId> Engine::OpenTable(std::string_view name) {
  return impl_->OpenTable(name);
}

absl::StatusOr<txn::IndexId> Engine::CreateIndex(
    std::string_view name, txn::TableId table,
    const std::vector<std::string>& key_columns, bool unique) {
  return impl_->CreateIndex(name, table, key_columns, unique);
}

absl::StatusOr<txn::IndexId> Engine::CreateIndex(std::string_view name,
                                                 txn::TableId table,
                                                 uint16_t key_width,
                                                 bool unique) {
  return impl_->CreateIndex(name, table, key_width, unique);
}

absl::StatusOr<txn::IndexId> Engine::OpenIndex(std::string_view name) {
  return impl_->OpenIndex(name);
}

const txn::IndexKey* Engine::index_key(txn::IndexId index) const {
  return impl_->index_key(index);
}

absl::StatusOr<const storage::Schema*> Engine::schema(
    txn::TableId table) const {
  return impl_->schema(table);
}

uint32_t Engine::max_row_bytes() const { return impl_->max_row_bytes(); }

absl::StatusOr<ProcedureId> Engine::Register(ErasedProcedure procedure) {
  return impl_->Register(std::move(procedure));
}

absl::StatusOr<
    std::pair<partition::FragmentId, const partition::ErasedFragment*>>
Engine::RegisterErasedFragment(std::string name, partition::ErasedFragment fn) {
  return impl_->RegisterFragment(std::move(name), std::move(fn));
}

absl::StatusOr<ProcedureId> Engine::FindProcedure(std::string_view name) const {
  return impl_->FindProcedure(name);
}

absl::StatusOr<ProcedureId> Engine::FindProcedureOfTypes(
    std::string_view name, const std::optional<ProcedureTypes>& types) const {
  return impl_->FindProcedureOfTypes(name, types);
}

absl::StatusOr<std::string> Engine::procedure_name(ProcedureId id) const {
  return impl_->procedure_name(id);
}

size_t Engine::procedure_count() const { return impl_->procedure_count(); }

absl::StatusOr<std::unique_ptr<Session>> Engine::NewSession(
    rdma::ComputeNodeId node) {
  return impl_->NewSession(node);
}

std::vector<ProcedureStats> Engine::Stats() const { return impl_->Stats(); }

std::vector<ProcedureStats> Engine::Stats(rdma::ComputeNodeId node) const {
  return impl_->Stats(node);
}

const partition::PartitionMap* Engine::partition_map() const {
  return impl_->partition_map();
}

partition::PartitionStats Engine::PartitionStats() const {
  return impl_->PartitionStats();
}

cc::CacheStats Engine::CacheStats() const { return impl_->CacheStats(); }

rdma::FabricCounters Engine::FabricCounters() const {
  return impl_->FabricCounters();
}

uint64_t Engine::database_id() const { return impl_->database_id(); }

const RecoveryReport* Engine::recovery_report() const {
  return impl_->recovery_report();
}

absl::Status Engine::WriteBackCaches() { return impl_->WriteBackCaches(); }

absl::StatusOr<ImageInfo> Engine::WriteImage(const std::string& path) {
  return engine::WriteImage(impl_->fabric(), path,
                            impl_->options().cc.gcl_size);
}

absl::Status Engine::StartLogging(const WalOptions& wal) {
  return impl_->StartLogging(wal);
}

absl::StatusOr<ImageInfo> Engine::SaveImage(const std::string& path) {
  return impl_->SaveImage(path);
}

absl::StatusOr<CheckpointResult> Engine::Checkpoint(std::string_view kind) {
  return impl_->Checkpoint(kind);
}

std::vector<CheckpointResult> Engine::CheckpointHistory() const {
  return impl_->CheckpointHistory();
}

bool Engine::checkpoint_running() const { return impl_->checkpoint_running(); }

absl::Status Engine::FailNode(rdma::ComputeNodeId node) {
  return impl_->FailNode(node);
}

absl::Status Engine::WaitReclaimed(rdma::ComputeNodeId node,
                                   absl::Duration timeout) {
  return impl_->WaitReclaimed(node, timeout);
}

absl::Status Engine::RejoinNode(rdma::ComputeNodeId node,
                                absl::Duration timeout) {
  return impl_->RejoinNode(node, timeout);
}

absl::Status Engine::PauseHeartbeats(rdma::ComputeNodeId node) {
  return impl_->PauseHeartbeats(node);
}

absl::Status Engine::ResumeHeartbeats(rdma::ComputeNodeId node) {
  return impl_->ResumeHeartbeats(node);
}

std::vector<ReclaimReport> Engine::ReclaimReports() const {
  return impl_->ReclaimReports();
}

absl::Time Engine::DeclaredFailedAt(rdma::ComputeNodeId node) const {
  return impl_->DeclaredFailedAt(node);
}

absl::Time Engine::LastDeclaredFailedAt(rdma::ComputeNodeId node) const {
  return impl_->LastDeclaredFailedAt(node);
}

absl::Time Engine::LeaseRenewedAt(rdma::ComputeNodeId node) const {
  return impl_->LeaseRenewedAt(node);
}

}  // namespace strand::engine
