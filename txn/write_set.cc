#include "txn/write_set.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"
#include "storage/heap_page.h"
#include "txn/index_writes.h"

namespace strand::txn {

namespace heap_page = storage::heap_page;
using storage::TupleHeader;

uint32_t TupleOffset(const TxnState& txn, const Access& access) {
  return txn.table(access.table).SlotOffset(access.address.slot());
}

TupleHeader HeaderAt(const TxnState& txn, const uint8_t* payload,
                     const Access& access) {
  TupleHeader header;
  std::memcpy(&header, payload + TupleOffset(txn, access), sizeof(header));
  return header;
}

absl::Status CopyTuple(const TxnState& txn, const uint8_t* payload,
                       Access& access) {
  const storage::HeapTable& table = txn.table(access.table);
  if (heap_page::Get<uint32_t>(payload, heap_page::kMagicOffset) !=
          heap_page::kPageMagic ||
      heap_page::Get<uint32_t>(payload, heap_page::kTableIdOffset) !=
          table.table_id() ||
      access.address.slot() >= table.slots_per_page()) {
    return absl::InvalidArgumentError(absl::StrCat(access.address.ToString(),
                                                   " is not a tuple of table ",
                                                   table.table_id()));
  }
  const uint32_t bytes = table.schema().tuple_bytes();
  const uint8_t* tuple = payload + TupleOffset(txn, access);
  TupleHeader header;
  std::memcpy(&header, tuple, sizeof(header));
  if (!header.live()) {
    return absl::NotFoundError(
        absl::StrCat("no live tuple at ", access.address.ToString()));
  }
  access.original.assign(tuple, tuple + bytes);
  return absl::OkStatus();
}

absl::Status LatchWritePages(TxnState& txn, bool include_inserted) {
  std::vector<rdma::GlobalAddress> pages;
  for (const auto& a : txn.accesses) {
    const bool write = a->inserted
                           ? include_inserted || a->modified_after_insert
                           : a->writes();
    if (write) {
      pages.push_back(a->address.gcl());
    }
  }
  std::sort(pages.begin(), pages.end());
  pages.erase(std::unique(pages.begin(), pages.end()), pages.end());
  for (rdma::GlobalAddress page : pages) {
    auto guard = txn.latches.Exclusive(page, cc::LockOptions{});
    if (!guard.ok()) return guard.status();
  }
  return absl::OkStatus();
}

namespace {

// Writes the bytes of `access.modified` that differ from `original` (the
// columns, not the header) into the latched page: only the changed span is
// marked dirty, so only it is written back.
void ApplyModification(const TxnState& txn, const Access& access,
                       cc::ExclusiveGuard& page) {
  const uint8_t* before = access.original.data();
  const uint8_t* after = access.modified->data();
  const size_t bytes = access.original.size();
  size_t first = sizeof(TupleHeader);
  while (first < bytes && before[first] == after[first]) ++first;
  if (first == bytes) return;
  size_t last = bytes;
  while (last > first && before[last - 1] == after[last - 1]) --last;
  std::memcpy(page.MutableRange(TupleOffset(txn, access) + first,
                                static_cast<uint32_t>(last - first)),
              after + first, last - first);
}

template <typename Field>
void PutHeaderField(const TxnState& txn, const Access& access,
                    cc::ExclusiveGuard& page, size_t field_offset,
                    Field value) {
  std::memcpy(
      page.MutableRange(TupleOffset(txn, access) + field_offset, sizeof(Field)),
      &value, sizeof(Field));
}

}  // namespace

absl::Status ApplyWrites(TxnState& txn, std::optional<uint64_t> stamp) {
  // Index writes first: they are the steps that can fail (a duplicate
  // key), and they undo themselves; the tuple writes below cannot fail.
  if (absl::Status s = InsertIndexEntries(txn); !s.ok()) return s;
  if (absl::Status s = RemoveIndexEntries(txn); !s.ok()) return s;
  for (const auto& a : txn.accesses) {
    const bool touches_page =
        a->inserted ? stamp || a->modified_after_insert : a->writes();
    if (!touches_page) continue;
    cc::ExclusiveGuard* page = txn.latches.HeldExclusive(a->address.gcl());
    CHECK(page != nullptr) << "write page of " << a->address.ToString()
                           << " is not latched at commit";
    if (a->deleted) {
      const TupleHeader header = HeaderAt(txn, page->data(), *a);
      PutHeaderField<uint32_t>(txn, *a, *page, offsetof(TupleHeader, flags),
                               header.flags | TupleHeader::kDeleted);
    } else if (a->modified) {
      ApplyModification(txn, *a, *page);
    }
    if (stamp) {
      PutHeaderField<uint64_t>(txn, *a, *page, offsetof(TupleHeader, write_ts),
                               *stamp);
    }
  }
  return absl::OkStatus();
}

}  // namespace strand::txn
