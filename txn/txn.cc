#include "txn/txn.h"

#include <cstring>
#include <optional>

#include "absl/container/inlined_vector.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "glog/logging.h"
#include "index/blink_tree.h"
#include "storage/tuple_header.h"
#include "txn/epoch_manager.h"
#include "txn/index_key.h"
#include "txn/index_writes.h"
#include "txn/write_set.h"

namespace strand::txn {

uint64_t Access::version() const {
  return storage::TupleHeader::From(original.data()).write_ts();
}

Txn::~Txn() {
  if (phase_ == Phase::kActive || phase_ == Phase::kPrepared) {
    Abort(AbortReason::kUser);
  }
}

absl::Status Txn::CheckActive() const {
  if (phase_ != Phase::kActive) {
    return absl::FailedPreconditionError(
        "the transaction is not active (aborted, committed or not begun)");
  }
  return absl::OkStatus();
}

absl::Status Txn::Begin() {
  if (phase_ != Phase::kIdle) {
    return absl::FailedPreconditionError("a transaction begins only once");
  }
  if (state_.db.marks != nullptr) {
    if (state_.watermark_slot == nullptr) {
      return absl::FailedPreconditionError(
          "this compute node keeps durable timestamp marks: the "
          "transaction needs a slot (Txn::set_watermark_slot)");
    }
    // Before any timestamp is taken, here or by a 2PC coordinator for this
    // branch: every one of them is above the node's last one.
    state_.watermark_slot->Hold(state_.db.oracle->last_seen());
  }
  phase_ = Phase::kActive;
  // Announced before the algorithm's Begin (TO takes its timestamp there)
  // and before any read: epoch_manager.h says why both matter.
  if (state_.db.epochs != nullptr) {
    state_.epoch_slot = state_.db.epochs->Enter();
  }
  if (absl::Status s = cc_.Begin(state_); !s.ok()) return Fail(s);
  return absl::OkStatus();
}

namespace {

// A transaction that latched more GCLs than its node's cache has frames
// (the cc/ layer's "every frame ... latched"): says which limit that is.
absl::Status ExplainCacheLimit(const TxnState& txn, absl::Status status) {
  if (!absl::IsResourceExhausted(status) ||
      !absl::StrContains(status.message(), "cache")) {
    return status;
  }
  const cc::CcOptions& o = txn.db.manager->options();
  return absl::ResourceExhaustedError(absl::StrCat(
      status.message(),
      ": a transaction can hold at most as many GCLs "
      "latched as its compute node's cache has frames (",
      o.cache_bytes / o.gcl_size,
      " = EngineOptions::cc.cache_bytes / "
      "cc.gcl_size, --cache_mb / --gcl_size), fewer while other threads "
      "hold some; raise --cache_mb or make the transaction smaller"));
}

}  // namespace

absl::Status Txn::Fail(absl::Status status) {
  status = ExplainCacheLimit(state_, std::move(status));
  if (state_.abort_reason == AbortReason::kNone) {
    switch (status.code()) {
      case absl::StatusCode::kAborted:
      case absl::StatusCode::kDeadlineExceeded:
        state_.abort_reason = AbortReason::kConflict;
        break;
      default:
        state_.abort_reason = AbortReason::kError;
    }
  }
  Abort(state_.abort_reason);
  return status;
}

absl::StatusOr<Access*> Txn::Touch(TableId table, storage::TupleAddress address,
                                   bool for_update) {
  if (table >= state_.db.tables.size()) {
    return absl::InvalidArgumentError(absl::StrCat("no table with id ", table));
  }
  // One hash probe for both outcomes: the slot for a new access is made
  // now and filled (or dropped) after the read. Algorithms' reads never
  // touch by_address, so `it` stays valid across cc_.Read.
  auto [it, fresh] = state_.by_address.try_emplace(address, nullptr);
  if (!fresh) {
    Access* access = it->second;
    if (access->deleted) {
      return absl::NotFoundError(
          absl::StrCat("tuple ", address.ToString(), " was deleted"));
    }
    if (for_update && !access->writes()) {
      if (absl::Status s = cc_.PrepareWrite(state_, *access); !s.ok()) {
        return Fail(s);
      }
    }
    return access;
  }
  auto access = TxnState::NewAccess();
  access->table = table;
  access->address = address;
  absl::Status s = cc_.Read(state_, *access, for_update);
  if (!s.ok()) {
    state_.by_address.erase(it);
    if (absl::IsNotFound(s) || absl::IsInvalidArgument(s) ||
        absl::IsOutOfRange(s)) {
      return s;  // a bad or dead address: the procedure decides
    }
    return Fail(s);
  }
  it->second = access.get();
  state_.accesses.push_back(std::move(access));
  return it->second;
}

absl::StatusOr<storage::TupleView> Txn::Read(TableId table,
                                             storage::TupleAddress address) {
  if (absl::Status s = CheckActive(); !s.ok()) return s;
  auto access = Touch(table, address, /*for_update=*/false);
  if (!access.ok()) return access.status();
  const storage::Schema& schema = state_.table(table).schema();
  if ((*access)->modified) return (*access)->modified->view();
  return storage::TupleView(schema, (*access)->original.data());
}

absl::StatusOr<storage::TupleBuffer*> Txn::Modify(
    TableId table, storage::TupleAddress address) {
  if (absl::Status s = CheckActive(); !s.ok()) return s;
  auto access = Touch(table, address, /*for_update=*/true);
  if (!access.ok()) return access.status();
  Access& a = **access;
  if (!a.modified) a.SetModified(state_.table(table).schema(), a.original);
  return a.modified;
}

absl::StatusOr<storage::TupleAddress> Txn::Insert(
    TableId table, const storage::TupleBuffer& tuple) {
  if (absl::Status s = CheckActive(); !s.ok()) return s;
  if (table >= state_.db.tables.size()) {
    return absl::InvalidArgumentError(absl::StrCat("no table with id ", table));
  }
  // Not into a page this transaction holds latched (2PL: it read a tuple
  // there): the heap would wait for our own latch.
  const PageLatches& latches = state_.latches;
  auto address = state_.table(table).Insert(
      state_.ctx, absl::MakeConstSpan(tuple.data(), tuple.size()),
      /*pending=*/true,
      [&latches](rdma::GlobalAddress page) { return latches.Holds(page); });
  if (!address.ok()) return Fail(address.status());
  auto access = TxnState::NewAccess();
  access->table = table;
  access->address = *address;
  access->inserted = true;
  access->original.assign(tuple.data(), tuple.data() + tuple.size());
  access->SetModified(state_.table(table).schema(),
                      absl::MakeConstSpan(tuple.data(), tuple.size()));
  state_.by_address[*address] = access.get();
  state_.accesses.push_back(std::move(access));
  return *address;
}

absl::Status Txn::Delete(TableId table, storage::TupleAddress address) {
  if (absl::Status s = CheckActive(); !s.ok()) return s;
  auto access = Touch(table, address, /*for_update=*/true);
  if (!access.ok()) return access.status();
  (*access)->deleted = true;
  return absl::OkStatus();
}

absl::Status Txn::CheckIndex(IndexId index) const {
  if (index >= state_.db.indexes.size()) {
    return absl::InvalidArgumentError(absl::StrCat("no index with id ", index));
  }
  return absl::OkStatus();
}

absl::StatusOr<storage::TupleAddress> Txn::Lookup(IndexId index,
                                                  std::string_view key) {
  if (absl::Status s = CheckActive(); !s.ok()) return s;
  if (absl::Status s = CheckIndex(index); !s.ok()) return s;
  state_.leaf_scratch.clear();
  auto value =
      state_.db.indexes[index]->Lookup(state_.ctx, key, &state_.leaf_scratch);
  RecordLeafReads(index);
  if (absl::IsNotFound(value.status())) return value.status();
  if (!value.ok()) return Fail(value.status());
  return storage::TupleAddress::FromRaw(*value);
}

absl::Status Txn::LookupBatch(IndexId index,
                              absl::Span<const std::string_view> keys,
                              absl::Span<storage::TupleAddress> addresses) {
  if (absl::Status s = CheckActive(); !s.ok()) return s;
  if (absl::Status s = CheckIndex(index); !s.ok()) return s;
  if (keys.size() != addresses.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("LookupBatch: ", keys.size(), " keys but room for ",
                     addresses.size(), " addresses"));
  }
  absl::InlinedVector<std::optional<uint64_t>, 16> values(keys.size());
  state_.leaf_scratch.clear();
  absl::Status s = state_.db.indexes[index]->LookupBatch(
      state_.ctx, keys, absl::MakeSpan(values), &state_.leaf_scratch);
  RecordLeafReads(index);
  if (!s.ok()) return Fail(s);  // as Lookup: only an absent key is no error
  for (size_t i = 0; i < keys.size(); ++i) {
    addresses[i] = values[i] ? storage::TupleAddress::FromRaw(*values[i])
                             : storage::TupleAddress();
  }
  return absl::OkStatus();
}

void Txn::Prefetch(TableId table,
                   absl::Span<const storage::TupleAddress> addresses) const {
  if (phase_ != Phase::kActive || table >= state_.db.tables.size()) return;
  const storage::HeapTable& heap = state_.table(table);
  for (storage::TupleAddress a : addresses) {
    if (!a.is_null()) heap.PrefetchEntry(a);
  }
  for (storage::TupleAddress a : addresses) {
    if (!a.is_null()) heap.PrefetchTuple(a);
  }
}

absl::Status Txn::Scan(IndexId index, std::optional<std::string_view> low,
                       std::optional<std::string_view> high, bool forward,
                       uint64_t limit, ScanVisitor visit) {
  if (absl::Status s = CheckActive(); !s.ok()) return s;
  if (absl::Status s = CheckIndex(index); !s.ok()) return s;
  index::BLinkTree& tree = *state_.db.indexes[index];
  auto adapt = [&](std::string_view key, uint64_t value) {
    return visit(key, storage::TupleAddress::FromRaw(value));
  };
  state_.leaf_scratch.clear();
  absl::Status s = forward ? tree.Scan(state_.ctx, low, high, limit, adapt,
                                       &state_.leaf_scratch)
                           : tree.ScanBackward(state_.ctx, high, low, limit,
                                               adapt, &state_.leaf_scratch);
  RecordLeafReads(index);
  if (!s.ok()) return Fail(s);
  return absl::OkStatus();
}

void Txn::RecordLeafReads(IndexId index) {
  if (!state_.db.validate_index_reads) return;
  for (const index::LeafRead& read : state_.leaf_scratch) {
    state_.leaf_reads.push_back({index, read});
  }
}

void Txn::AddIndexEntry(IndexId index, std::string_view key,
                        storage::TupleAddress value) {
  state_.index_inserts.push_back({index, std::string(key), value});
}

void Txn::RemoveIndexEntry(IndexId index, std::string_view key,
                           storage::TupleAddress value) {
  state_.index_removes.push_back({index, std::string(key), value});
}

absl::Status Txn::AddIndexEntries(TableId table,
                                  const storage::TupleView& tuple,
                                  storage::TupleAddress value) {
  return WriteDeclaredIndexes(table, nullptr, &tuple, value);
}

absl::Status Txn::RemoveIndexEntries(TableId table,
                                     const storage::TupleView& tuple,
                                     storage::TupleAddress value) {
  return WriteDeclaredIndexes(table, &tuple, nullptr, value);
}

absl::Status Txn::UpdateIndexEntries(TableId table,
                                     const storage::TupleView& before,
                                     const storage::TupleView& after,
                                     storage::TupleAddress value) {
  return WriteDeclaredIndexes(table, &before, &after, value);
}

absl::Status Txn::WriteDeclaredIndexes(TableId table,
                                       const storage::TupleView* before,
                                       const storage::TupleView* after,
                                       storage::TupleAddress value) {
  const Database& db = state_.db;
  if (table >= db.tables.size()) {
    return absl::InvalidArgumentError(absl::StrCat("no table with id ", table));
  }
  for (IndexId index = 0; index < db.index_keys.size(); ++index) {
    const IndexKey* key = db.index_keys[index];
    if (db.index_tables[index] != table || key == nullptr) continue;
    std::string old_key = before != nullptr ? key->Build(*before) : "";
    std::string new_key = after != nullptr ? key->Build(*after) : "";
    // Both present and equal: the entry stays as it is.
    if (before != nullptr && after != nullptr && old_key == new_key) continue;
    if (before != nullptr) {
      state_.index_removes.push_back({index, std::move(old_key), value});
    }
    if (after != nullptr) {
      state_.index_inserts.push_back({index, std::move(new_key), value});
    }
  }
  return absl::OkStatus();
}

absl::Status Txn::Commit() {
  const bool branches = remote_ != nullptr && phase_ == Phase::kActive;
  absl::Status s = branches ? remote_->Commit(*this) : CommitImpl();
  if (!s.ok()) return s;
  return WaitAcknowledged();
}

absl::Status Txn::CommitNoWait() {
  if (remote_ != nullptr && phase_ == Phase::kActive) {
    return remote_->Commit(*this);
  }
  return CommitImpl();
}

absl::Status Txn::CommitOnePhase() { return CommitImpl(); }

absl::StatusOr<uint64_t> Txn::AckTimestamp() {
  if (state_.db.watermark == nullptr) return 0;
  if (phase_ == Phase::kCommitted && state_.commit_ts != 0) {
    return state_.commit_ts;
  }
  return state_.db.oracle->Current(state_.ctx);
}

absl::Status Txn::WaitAcknowledged() {
  if (state_.db.watermark == nullptr) return absl::OkStatus();
  absl::StatusOr<uint64_t> ts = AckTimestamp();
  if (!ts.ok()) return ts.status();
  return state_.db.watermark->WaitAcknowledged(*ts);
}

void Txn::ReleaseWatermarkSlot() {
  if (state_.watermark_slot != nullptr) state_.watermark_slot->Release();
}

absl::Status Txn::FailCommit(absl::Status status) {
  status = ExplainCacheLimit(state_, std::move(status));
  Abort(absl::IsAborted(status) ? AbortReason::kConflict : AbortReason::kError);
  return status;
}

absl::Status Txn::CommitImpl() {
  if (absl::Status s = CheckActive(); !s.ok()) return s;
  if (absl::Status s = cc_.Commit(state_); !s.ok()) return FailCommit(s);
  phase_ = Phase::kCommitted;
  ReleaseWatermarkSlot();
  LeaveEpoch(/*committed=*/true);
  return absl::OkStatus();
}

absl::Status Txn::PrepareBranch(uint64_t commit_ts) {
  if (absl::Status s = CheckActive(); !s.ok()) return s;
  if (absl::Status s = cc_.Prepare(state_, commit_ts); !s.ok()) {
    return FailCommit(s);
  }
  phase_ = Phase::kPrepared;
  return absl::OkStatus();
}

bool Txn::writes_anything() const {
  if (!state_.index_inserts.empty() || !state_.index_removes.empty()) {
    return true;
  }
  for (const auto& a : state_.accesses) {
    if (a->writes()) return true;
  }
  return false;
}

absl::StatusOr<wal::Lsn> Txn::LogBranch(wal::RecordType type, uint64_t txn_id,
                                        std::string_view prefix) {
  if (phase_ != Phase::kPrepared || state_.db.log == nullptr) {
    return absl::FailedPreconditionError(
        "LogBranch needs a prepared transaction and a log");
  }
  auto lsn = txn::LogBranch(state_, type, txn_id, prefix);
  if (!lsn.ok()) return FailCommit(lsn.status());
  return lsn;
}

absl::Status Txn::CommitPrepared() {
  if (phase_ != Phase::kPrepared) {
    return absl::FailedPreconditionError(
        "CommitPrepared needs a prepared transaction");
  }
  ApplyLoggedWrites(state_, std::nullopt);
  phase_ = Phase::kCommitted;
  ReleaseWatermarkSlot();
  absl::Status released = state_.latches.ReleaseAll();
  LeaveEpoch(/*committed=*/true);
  return released;
}

void Txn::Abort(AbortReason reason) {
  if (phase_ != Phase::kActive && phase_ != Phase::kPrepared) return;
  if (state_.abort_reason == AbortReason::kNone) state_.abort_reason = reason;
  phase_ = Phase::kAborted;
  ReleaseWatermarkSlot();
  ReleaseIndexLeaves(state_);
  absl::Status s = state_.latches.ReleaseAll();
  LOG_IF(ERROR, !s.ok()) << "releasing latches on abort: " << s;
  ReleaseInsertedSlots();
  LeaveEpoch(/*committed=*/false);
  if (remote_ != nullptr) remote_->Abort();
}

void Txn::ReleaseInsertedSlots() {
  // Never visible (still pending) and named by no index entry (those are
  // applied only by a commit that can no longer fail): free for reuse.
  for (const auto& a : state_.accesses) {
    if (a->inserted) state_.table(a->table).ReleaseSlot(a->address);
  }
}

void Txn::LeaveEpoch(bool committed) {
  if (state_.epoch_slot == EpochManager::kNoSlot) return;
  EpochManager& epochs = *state_.db.epochs;
  if (committed) {
    // The commit removed their index entries (the caller's part of the
    // contract, epoch_manager.h); readers that found them earlier may
    // still hold the addresses, so the slots wait for them.
    for (const auto& a : state_.accesses) {
      if (a->deleted) {
        epochs.Retire(state_.epoch_slot, state_.table(a->table), a->address);
      }
    }
  }
  epochs.Exit(state_.epoch_slot, state_.ctx.endpoint());
  state_.epoch_slot = EpochManager::kNoSlot;
}

absl::Status Txn::UserAbort(std::string_view why) {
  Abort(AbortReason::kUser);
  return WithAbortReason(
      absl::AbortedError(absl::StrCat("user abort: ", std::string(why))),
      AbortReason::kUser);
}

}  // namespace strand::txn
