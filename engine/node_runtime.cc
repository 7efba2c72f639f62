#include "engine/node_runtime.h"

namespace strand::engine {

absl::StatusOr<std::unique_ptr<NodeRuntime>> NodeRuntime::Create(
    rdma::Fabric& fabric, rdma::ComputeNodeId node, const cc::CcOptions& cc,
    txn::CcAlgorithm algorithm, const index::BLinkTreeTuning& index) {
  std::unique_ptr<NodeRuntime> r(new NodeRuntime());
  r->id_ = node;
  r->index_tuning_ = index;
  auto manager = cc::GclManager::Create(fabric, node, cc);
  if (!manager.ok()) return manager.status();
  r->manager_ = *std::move(manager);
  r->oracle_ = std::make_unique<txn::TimestampOracle>(*r->manager_);
  auto admin = r->manager_->NewThreadContext();
  if (!admin.ok()) return admin.status();
  r->admin_ = *std::move(admin);
  auto catalog = storage::Catalog::Open(*r->manager_, *r->admin_);
  if (!catalog.ok()) return catalog.status();
  r->catalog_ = *std::move(catalog);
  r->db_.manager = r->manager_.get();
  r->db_.oracle = r->oracle_.get();
  r->db_.algorithm = algorithm;
  return r;
}

absl::Status NodeRuntime::AddTable(const storage::TableDescriptor& table) {
  absl::MutexLock lock(&admin_mu_);
  auto heap = storage::HeapTable::Open(*manager_, *admin_, table.root,
                                       table.schema, heap_tuning_);
  if (!heap.ok()) return heap.status();
  tables_.push_back(*std::move(heap));
  db_.tables.push_back(tables_.back().get());
  db_.table_names.push_back(table.name);
  db_.declared_indexes.emplace_back();
  return absl::OkStatus();
}

absl::Status NodeRuntime::AddIndex(const storage::IndexDescriptor& index,
                                   txn::TableId table,
                                   const txn::IndexKey* key) {
  absl::MutexLock lock(&admin_mu_);
  auto tree =
      index::BLinkTree::Open(*manager_, *admin_, index.anchor, index_tuning_);
  if (!tree.ok()) return tree.status();
  indexes_.push_back(*std::move(tree));
  db_.indexes.push_back(indexes_.back().get());
  db_.index_catalog_ids.push_back(index.id);
  db_.index_tables.push_back(table);
  db_.index_keys.push_back(key);
  db_.index_names.push_back(index.name);
  if (key != nullptr) {
    db_.declared_indexes[table].push_back(
        static_cast<txn::IndexId>(db_.indexes.size() - 1));
  }
  return absl::OkStatus();
}

void NodeRuntime::SetLog(std::unique_ptr<wal::LogWriter> log,
                         std::unique_ptr<txn::CommitWatermark> marks,
                         bool acknowledge_by_marks) {
  watermark_ = std::move(marks);
  log_ = std::move(log);
  db_.log = log_.get();
  db_.marks = watermark_.get();
  db_.watermark = acknowledge_by_marks ? watermark_.get() : nullptr;
  if (ring_ != nullptr) HoldRingForLog();
}

void NodeRuntime::SetRing(std::unique_ptr<txn::RedoRing> ring) {
  ring_ = std::move(ring);
  if (watermark_ != nullptr) HoldRingForLog();
  db_.ring = ring_.get();
}

void NodeRuntime::HoldRingForLog() {
  // A record's room comes back once this node's log made it durable.
  txn::CommitWatermark* marks = watermark_.get();
  ring_->set_durable_mark([marks] { return marks->node_mark(); });
}

}  // namespace strand::engine
