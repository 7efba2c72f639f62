#include "txn/txn.h"

#include <cstring>
#include <optional>

#include "absl/base/optimization.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "glog/logging.h"
#include "index/blink_tree.h"
#include "storage/tuple_header.h"
#include "txn/declared_indexes.h"
#include "txn/epoch_manager.h"
#include "txn/index_iterator.h"
#include "txn/index_key.h"
#include "txn/index_writes.h"
#include "txn/own_writes.h"
#include "txn/write_set.h"
#include "txn/write_through.h"

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
  if (absl::Status s = CheckTable(table); !s.ok()) return s;
  // One hash probe for both outcomes: the slot for a new access is made
  // now and filled (or dropped) after the read. Algorithms' reads never
  // touch by_address, so `it` stays valid across cc_.Read.
  auto [it, fresh] = state_.by_address.try_emplace(address, nullptr);
  if (!fresh) {
    Access* access = it->second;
    if (access->table != table) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "row %s is a row of table %s, not of table %s", address.ToString(),
          state_.db.table_names[access->table], state_.db.table_names[table]));
    }
    if (access->deleted) {
      return absl::NotFoundError(
          absl::StrFormat("table %s: row %s was deleted by this transaction",
                          state_.db.table_names[table], address.ToString()));
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

absl::Status Txn::NoSuchTable(TableId table) const {
  return absl::InvalidArgumentError(
      absl::StrFormat("no table with id %d (this engine has %d)", table,
                      state_.db.tables.size()));
}

absl::Status Txn::CheckIndex(IndexId index) const {
  if (ABSL_PREDICT_TRUE(index < state_.db.indexes.size())) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("no index with id %d (this engine has %d)", index,
                      state_.db.indexes.size()));
}

absl::Status Txn::CheckKey(IndexId index, std::string_view key) const {
  if (ABSL_PREDICT_TRUE(index < state_.db.indexes.size() &&
                        key.size() == state_.db.indexes[index]->key_width())) {
    return absl::OkStatus();
  }
  if (absl::Status s = CheckIndex(index); !s.ok()) return s;
  return absl::InvalidArgumentError(absl::StrFormat(
      "index %s takes %d-byte keys; key %s has %d bytes",
      state_.db.index_names[index], state_.db.indexes[index]->key_width(),
      DescribeKey(state_.db, index, key), key.size()));
}

absl::Status Txn::CheckRow(TableId table,
                           const storage::TupleBuffer& row) const {
  if (absl::Status s = CheckTable(table); !s.ok()) return s;
  const storage::Schema& schema = state_.table(table).schema();
  if (&row.schema() != &schema &&
      row.schema().fingerprint() != schema.fingerprint()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("table %s: the row was built for another table's "
                        "columns (use Txn::NewRow or the table's schema)",
                        state_.db.table_names[table]));
  }
  if (!row.status().ok()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "table %s: %s", state_.db.table_names[table], row.status().message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<storage::TupleBuffer> Txn::NewRow(TableId table) const {
  if (absl::Status s = CheckTable(table); !s.ok()) return s;
  return storage::TupleBuffer(state_.table(table).schema());
}

absl::StatusOr<storage::TupleView> Txn::Read(TableId table,
                                             storage::TupleAddress address) {
  if (absl::Status s = CheckActive(); !s.ok()) return s;
  auto access = Touch(table, address, /*for_update=*/false);
  if (!access.ok()) return access.status();
  const storage::Schema& schema = state_.table(table).schema();
  if ((*access)->modified) return (*access)->modified->view();
  return storage::TupleView(schema, (*access)->original.data(),
                            &(*access)->read_misuse);
}

absl::StatusOr<storage::TupleBuffer*> Txn::Modify(
    TableId table, storage::TupleAddress address) {
  if (absl::Status s = CheckActive(); !s.ok()) return s;
  auto access = Touch(table, address, /*for_update=*/true);
  if (!access.ok()) return access.status();
  Access& a = **access;
  if (!a.modified) a.SetModified(state_.table(table).schema(), a.original);
  if (!state_.db.declared_indexes[table].empty()) Track(state_, a);
  return a.modified;
}

absl::Status Txn::Update(TableId table, storage::TupleAddress address,
                         const storage::TupleBuffer& row) {
  if (absl::Status s = CheckActive(); !s.ok()) return s;
  if (absl::Status s = CheckRow(table, row); !s.ok()) return s;
  auto access = Touch(table, address, /*for_update=*/true);
  if (!access.ok()) return access.status();
  Access& a = **access;
  const storage::Schema& schema = state_.table(table).schema();
  if (!state_.db.declared_indexes[table].empty()) {
    Track(state_, a);
    if (absl::Status s = SyncTracked(state_, table); !s.ok()) return Fail(s);
    std::vector<std::string> keys = DeclaredKeys(state_, table, row.view());
    storage::TupleAddress holder;
    absl::Status unique = CheckUniqueKeys(state_, table, keys, &a, &holder);
    if (absl::IsAlreadyExists(unique)) return unique;  // nothing changed
    if (!unique.ok()) return Fail(unique);
    WriteDeclaredEntries(state_, a, std::move(keys));
  }
  // The columns only: the header stays the transaction's (as read).
  if (!a.modified) a.SetModified(schema, a.original);
  std::memcpy(a.modified->data() + storage::kTupleHeaderBytes,
              row.data() + storage::kTupleHeaderBytes,
              schema.tuple_bytes() - storage::kTupleHeaderBytes);
  return absl::OkStatus();
}

absl::StatusOr<storage::TupleAddress> Txn::Insert(
    TableId table, const storage::TupleBuffer& tuple) {
  return InsertRow(table, tuple, /*holder=*/nullptr);
}

absl::StatusOr<Txn::InsertOutcome> Txn::InsertIfAbsent(
    TableId table, const storage::TupleBuffer& row) {
  InsertOutcome outcome;
  auto at = InsertRow(table, row, &outcome.address);
  if (!at.ok()) return at.status();
  if (!at->is_null()) {
    outcome.address = *at;
    outcome.inserted = true;
  }
  return outcome;
}

absl::StatusOr<storage::TupleAddress> Txn::Upsert(
    TableId table, const storage::TupleBuffer& row) {
  if (absl::Status s = CheckActive(); !s.ok()) return s;
  if (absl::Status s = CheckRow(table, row); !s.ok()) return s;
  const Database& db = state_.db;
  std::optional<IndexId> primary;
  for (IndexId index : db.declared_indexes[table]) {
    if (db.indexes[index]->unique()) {
      primary = index;
      break;
    }
  }
  if (!primary) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "table %s has no unique index declared with key columns to upsert "
        "by",
        db.table_names[table]));
  }
  if (absl::Status s = SyncIndex(*primary); !s.ok()) return s;
  auto existing = LookupOwnView(state_, *primary,
                                db.index_keys[*primary]->Build(row.view()),
                                /*record_absent=*/false);
  if (!existing.ok()) return Fail(existing.status());
  if (!existing->has_value()) return InsertRow(table, row, nullptr);
  if (absl::Status s = Update(table, **existing, row); !s.ok()) return s;
  return **existing;
}

absl::StatusOr<storage::TupleAddress> Txn::InsertRow(
    TableId table, const storage::TupleBuffer& tuple,
    storage::TupleAddress* holder) {
  if (absl::Status s = CheckActive(); !s.ok()) return s;
  if (absl::Status s = CheckRow(table, tuple); !s.ok()) return s;
  const bool declared = !state_.db.declared_indexes[table].empty();
  std::vector<std::string> keys;
  if (declared) {
    // Checked before the heap is touched: a refused row leaves nothing.
    if (absl::Status s = SyncTracked(state_, table); !s.ok()) return Fail(s);
    keys = DeclaredKeys(state_, table, tuple.view());
    storage::TupleAddress taken;
    absl::Status unique =
        CheckUniqueKeys(state_, table, keys, /*self=*/nullptr, &taken);
    if (absl::IsAlreadyExists(unique)) {
      if (holder == nullptr) return unique;
      *holder = taken;
      return storage::TupleAddress();
    }
    if (!unique.ok()) return Fail(unique);
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
  Access& a = *access;
  state_.by_address[*address] = access.get();
  state_.accesses.push_back(std::move(access));
  if (declared) {
    WriteDeclaredEntries(state_, a, std::move(keys));
    Track(state_, a);
  }
  return *address;
}

absl::Status Txn::Delete(TableId table, storage::TupleAddress address) {
  if (absl::Status s = CheckActive(); !s.ok()) return s;
  auto access = Touch(table, address, /*for_update=*/true);
  if (!access.ok()) return access.status();
  Access& a = **access;
  if (!state_.db.declared_indexes[table].empty()) {
    // The row's entries as they are now (its buffer may have moved them).
    if (absl::Status s = SyncTracked(state_, table); !s.ok()) return Fail(s);
    RemoveDeclaredEntries(state_, a);
  }
  a.deleted = true;
  return absl::OkStatus();
}

absl::Status Txn::SyncTrackedOf(IndexId index) {
  const TableId table = state_.db.index_tables[index];
  if (table == kNoTable) return absl::OkStatus();
  if (absl::Status s = SyncTracked(state_, table); !s.ok()) return Fail(s);
  return absl::OkStatus();
}

absl::Status Txn::LookupMisuse(IndexId index, std::string_view key) const {
  if (absl::Status s = CheckKey(index, key); !s.ok()) return s;
  return absl::InvalidArgumentError(absl::StrFormat(
      "index %s is not unique: Scan it (or NewIterator) for key %s",
      state_.db.index_names[index], DescribeKey(state_.db, index, key)));
}

absl::StatusOr<storage::TupleAddress> Txn::Lookup(IndexId index,
                                                  std::string_view key) {
  if (absl::Status s = CheckActive(); !s.ok()) return s;
  if (absl::Status s = CheckIndex(index); !s.ok()) return s;
  if (absl::Status s = SyncIndex(index); !s.ok()) return s;
  auto value = LookupOwnView(state_, index, key);
  if (!value.ok()) {
    // The tree checks the key's width and the index's kind before it
    // reads anything: the procedure's mistake, not the transaction's end.
    if (absl::IsInvalidArgument(value.status()) ||
        absl::IsFailedPrecondition(value.status())) {
      return LookupMisuse(index, key);
    }
    return Fail(value.status());
  }
  if (!value->has_value()) {
    return absl::NotFoundError(
        absl::StrFormat("index %s has no key %s", state_.db.index_names[index],
                        DescribeKey(state_.db, index, key)));
  }
  return **value;
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
  if (absl::Status s = SyncIndex(index); !s.ok()) return s;
  absl::InlinedVector<std::optional<uint64_t>, 16> values(keys.size());
  state_.leaf_scratch.clear();
  absl::Status s = state_.db.indexes[index]->LookupBatch(
      state_.ctx, keys, absl::MakeSpan(values), &state_.leaf_scratch);
  if (absl::IsInvalidArgument(s) || absl::IsFailedPrecondition(s)) {
    // As Lookup: the tree checks these before it reads anything.
    for (std::string_view key : keys) {
      if (absl::Status bad = CheckKey(index, key); !bad.ok()) return bad;
    }
    if (!state_.db.indexes[index]->unique() && !keys.empty()) {
      return LookupMisuse(index, keys[0]);
    }
  }
  RecordLeafReads(state_, index);
  if (!s.ok()) return Fail(s);
  for (size_t i = 0; i < keys.size(); ++i) {
    addresses[i] = values[i] ? storage::TupleAddress::FromRaw(*values[i])
                             : storage::TupleAddress();
  }
  PatchOwnLookups(state_, index, keys, addresses);
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
  for (std::optional<std::string_view> bound : {low, high}) {
    if (!bound) continue;
    if (absl::Status s = CheckKey(index, *bound); !s.ok()) return s;
  }
  if (absl::Status s = SyncIndex(index); !s.ok()) return s;
  absl::Status s = ScanOwnView(state_, index, low, high, forward, limit, visit);
  RecordLeafReads(state_, index);
  if (!s.ok()) return Fail(s);
  return absl::OkStatus();
}

IndexIterator Txn::NewIterator(IndexId index, IndexRange range) {
  return IndexIterator(*this, index, std::move(range));
}

absl::Status Txn::AddIndexEntry(IndexId index, std::string_view key,
                                storage::TupleAddress value) {
  if (absl::Status s = CheckActive(); !s.ok()) return s;
  if (absl::Status s = CheckKey(index, key); !s.ok()) return s;
  const Database& db = state_.db;
  if (db.index_keys[index] != nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "index %s is declared with key columns: the transaction keeps its "
        "entries (Insert, Update, Delete), AddIndexEntry may not",
        db.index_names[index]));
  }
  // A unique key is checked at commit, not here: a Lookup before tells
  // the procedure sooner, and a bulk load reads no leaf per entry.
  if (db.indexes[index]->unique()) state_.unchecked_unique_adds = true;
  AddOwnEntry(state_, index, key, value);
  return absl::OkStatus();
}

absl::Status Txn::RemoveIndexEntry(IndexId index, std::string_view key,
                                   storage::TupleAddress value) {
  if (absl::Status s = CheckActive(); !s.ok()) return s;
  if (absl::Status s = CheckKey(index, key); !s.ok()) return s;
  if (state_.db.index_keys[index] != nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "index %s is declared with key columns: the transaction keeps its "
        "entries (Insert, Update, Delete), RemoveIndexEntry may not",
        state_.db.index_names[index]));
  }
  RemoveOwnEntry(state_, index, key, value);
  return absl::OkStatus();
}

absl::Status Txn::FinishStatements() {
  if (!state_.tracked.empty()) {
    if (absl::Status s = SyncTracked(state_, kNoTable); !s.ok()) return s;
  }
  for (const auto& a : state_.accesses) {
    const absl::Status* misuse =
        !a->read_misuse.ok() ? &a->read_misuse
        : a->modified != nullptr && !a->modified->status().ok()
            ? &a->modified->status()
            : nullptr;
    if (misuse != nullptr) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "table %s, row %s: %s", state_.db.table_names[a->table],
          a->address.ToString(), misuse->message()));
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
  if (absl::Status s = FinishStatements(); !s.ok()) return FailCommit(s);
  if (absl::Status s = cc_.Commit(state_); !s.ok()) return FailCommit(s);
  phase_ = Phase::kCommitted;
  ReleaseWatermarkSlot();
  LeaveEpoch(/*committed=*/true);
  return absl::OkStatus();
}

absl::Status Txn::PrepareBranch(uint64_t commit_ts) {
  if (absl::Status s = CheckActive(); !s.ok()) return s;
  if (absl::Status s = FinishStatements(); !s.ok()) return FailCommit(s);
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
                                        std::string_view prefix,
                                        bool abort_on_failure) {
  if (phase_ != Phase::kPrepared || state_.db.log == nullptr) {
    return absl::FailedPreconditionError(
        "LogBranch needs a prepared transaction and a log");
  }
  auto lsn = txn::LogBranch(state_, type, txn_id, prefix);
  if (!lsn.ok() && abort_on_failure) return FailCommit(lsn.status());
  return lsn;
}

absl::Status Txn::RecordPrepared(wal::RecordType type, uint64_t txn_id,
                                 std::string_view prefix) {
  if (phase_ != Phase::kPrepared) {
    return absl::FailedPreconditionError(
        "RecordPrepared needs a prepared transaction");
  }
  return txn::RecordPrepared(state_, type, txn_id, prefix);
}

absl::Status Txn::CommitPrepared() {
  if (phase_ != Phase::kPrepared) {
    return absl::FailedPreconditionError(
        "CommitPrepared needs a prepared transaction");
  }
  absl::Status applied = ApplyLoggedWrites(state_, std::nullopt);
  phase_ = Phase::kCommitted;
  ReleaseWatermarkSlot();
  absl::Status released = state_.latches.ReleaseAll();
  LeaveEpoch(/*committed=*/true);
  return applied.ok() ? released : applied;
}

void Txn::Abort(AbortReason reason) {
  if (phase_ != Phase::kActive && phase_ != Phase::kPrepared) return;
  if (state_.abort_reason == AbortReason::kNone) state_.abort_reason = reason;
  phase_ = Phase::kAborted;
  ReleaseWatermarkSlot();
  if (state_.prepared_record) {
    // Done before the latches go, so that no reclaimer redoes it over a
    // later writer's data. A coordinator's decision record stays
    // undecided instead: done, a reclaimer would log it again as decided;
    // not done, it is dropped unless its decision word names it, and this
    // abort means the word does not (partition/decision_board.h).
    ForgetPreparedRecord(
        state_, state_.prepared_type != wal::RecordType::kDistributedCommit);
  }
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
