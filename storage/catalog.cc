#include "storage/catalog.h"

#include <cstring>
#include <optional>

#include "absl/strings/str_format.h"
#include "cc/root_words.h"
#include "storage/heap_page.h"
#include "storage/heap_table.h"

namespace strand::storage {
namespace {

using heap_page::Get;
using heap_page::Put;
using rdma::GlobalAddress;

constexpr uint32_t kMagic = 0x4c544143;  // "CATL"
constexpr uint32_t kCountOffset = 4;
constexpr uint32_t kNextOffset = 8;
constexpr uint32_t kNextIdOffset = 16;
constexpr uint32_t kHeaderBytes = 24;
constexpr uint32_t kEntryBytes = 64;
constexpr uint32_t kCatalogNameField = 32;

constexpr uint8_t kKindTable = 1;
constexpr uint8_t kKindIndex = 2;
constexpr uint8_t kFlagUnique = 1;

// Blob GCL: [u64 next][u32 bytes][u32 0][bytes...].
constexpr uint32_t kBlobHeaderBytes = 16;

const char* KindName(uint8_t kind) {
  return kind == kKindTable ? "table" : "index";
}

}  // namespace

struct Catalog::Entry {
  std::string name;
  uint8_t kind = 0;
  uint8_t flags = 0;
  uint16_t key_width = 0;
  uint32_t id = 0;
  uint64_t root = 0;    // table root or index anchor
  uint64_t blob = 0;    // table: schema blob; index: table id
  uint64_t length = 0;  // table: schema bytes; index: key columns

  static Entry Decode(const uint8_t* p) {
    Entry e;
    e.name.assign(reinterpret_cast<const char*>(p),
                  strnlen(reinterpret_cast<const char*>(p), kCatalogNameField));
    e.kind = p[32];
    e.flags = p[33];
    e.key_width = Get<uint16_t>(p, 34);
    e.id = Get<uint32_t>(p, 36);
    e.root = Get<uint64_t>(p, 40);
    e.blob = Get<uint64_t>(p, 48);
    e.length = Get<uint64_t>(p, 56);
    return e;
  }
  void Encode(uint8_t* p) const {
    std::memset(p, 0, kEntryBytes);
    std::memcpy(p, name.data(), name.size());
    p[32] = kind;
    p[33] = flags;
    Put<uint16_t>(p + 34, key_width);
    Put<uint32_t>(p + 36, id);
    Put<uint64_t>(p + 40, root);
    Put<uint64_t>(p + 48, blob);
    Put<uint64_t>(p + 56, length);
  }
};

namespace {

absl::Status CheckName(std::string_view name) {
  if (name.empty() || name.size() > Catalog::kMaxNameBytes ||
      name.find('\0') != std::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrFormat("catalog name '%s' must have 1 to %d bytes and no NUL",
                        name, Catalog::kMaxNameBytes));
  }
  return absl::OkStatus();
}

uint32_t EntriesPerGcl(uint32_t payload_bytes) {
  return (payload_bytes - kHeaderBytes) / kEntryBytes;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Catalog>> Catalog::Open(cc::GclManager& manager,
                                                       cc::ThreadContext& ctx) {
  if (EntriesPerGcl(manager.payload_bytes()) == 0) {
    return absl::InvalidArgumentError(
        "EngineOptions::cc.gcl_size (--gcl_size) is too small for the "
        "catalog");
  }
  const GlobalAddress word = cc::RootWordAddress(cc::RootWord::kCatalog);
  // The cc/ API has no plain read of a global word: FAA(0) reads it.
  auto current = manager.FetchAndAdd(ctx, word, 0);
  if (!current.ok()) return current.status();
  GlobalAddress head = GlobalAddress::FromRaw(*current);
  if (head.is_null()) {
    auto mine = manager.Allocate(ctx);
    if (!mine.ok()) return mine.status();
    {
      auto guard = manager.XLock(ctx, *mine);
      if (!guard.ok()) return guard.status();
      uint8_t* p = guard->MutableRange(0, kHeaderBytes);
      Put<uint32_t>(p, kMagic);
      Put<uint32_t>(p + kNextIdOffset, 1);
      if (absl::Status s = guard->Unlock(); !s.ok()) return s;
    }
    auto old = manager.CompareAndSwap(ctx, word, 0, mine->raw());
    if (!old.ok()) return old.status();
    if (*old == 0) {
      head = *mine;
    } else {  // another node installed its catalog first
      head = GlobalAddress::FromRaw(*old);
      if (absl::Status s = manager.Free(ctx, *mine); !s.ok()) return s;
    }
  }
  auto guard = manager.SLock(ctx, head);
  if (!guard.ok()) return guard.status();
  if (Get<uint32_t>(guard->data(), 0) != kMagic) {
    return absl::DataLossError(absl::StrFormat(
        "RootWord::kCatalog points to %s, which is not a catalog",
        head.ToString()));
  }
  return std::unique_ptr<Catalog>(new Catalog(manager, head));
}

absl::Status Catalog::Walk(cc::ThreadContext& ctx,
                           absl::FunctionRef<bool(const Entry&)> visit) {
  GlobalAddress at = head_;
  while (!at.is_null()) {
    auto guard = manager_.SLock(ctx, at);
    if (!guard.ok()) return guard.status();
    const uint8_t* p = guard->data();
    const uint32_t count = Get<uint32_t>(p, kCountOffset);
    for (uint32_t i = 0; i < count; ++i) {
      if (!visit(Entry::Decode(p + kHeaderBytes + i * kEntryBytes))) {
        return absl::OkStatus();
      }
    }
    at = GlobalAddress::FromRaw(Get<uint64_t>(p, kNextOffset));
  }
  return absl::OkStatus();
}

absl::StatusOr<Catalog::Entry> Catalog::Find(cc::ThreadContext& ctx,
                                             std::string_view name) {
  if (absl::Status s = CheckName(name); !s.ok()) return s;
  std::optional<Entry> found;
  absl::Status s = Walk(ctx, [&](const Entry& e) {
    if (e.name != name) return true;
    found = e;
    return false;
  });
  if (!s.ok()) return s;
  if (!found) {
    return absl::NotFoundError(
        absl::StrFormat("no table or index named '%s' in the catalog", name));
  }
  return *found;
}

absl::StatusOr<std::vector<std::string>> Catalog::ListNames(
    cc::ThreadContext& ctx) {
  std::vector<std::string> names;
  absl::Status s = Walk(ctx, [&](const Entry& e) {
    names.push_back(e.name);
    return true;
  });
  if (!s.ok()) return s;
  return names;
}

absl::StatusOr<Catalog::Entry> Catalog::Append(
    cc::ThreadContext& ctx, std::string_view name,
    absl::FunctionRef<absl::Status(Entry& entry)> fill) {
  if (absl::Status s = CheckName(name); !s.ok()) return s;
  const uint32_t per_gcl = EntriesPerGcl(manager_.payload_bytes());
  // The first GCL's exclusive latch serializes creators; later GCLs are
  // only changed by a creator, so shared latches suffice to read them.
  auto head = manager_.XLock(ctx, head_);
  if (!head.ok()) return head.status();
  GlobalAddress last = head_;
  uint32_t last_count = 0;
  {
    cc::SharedGuard other;
    const uint8_t* p = head->data();
    for (;;) {
      last_count = Get<uint32_t>(p, kCountOffset);
      for (uint32_t i = 0; i < last_count; ++i) {
        const Entry e = Entry::Decode(p + kHeaderBytes + i * kEntryBytes);
        if (e.name == name) {
          return absl::AlreadyExistsError(
              absl::StrFormat("the catalog already has a %s named '%s'",
                              KindName(e.kind), name));
        }
      }
      const uint64_t next = Get<uint64_t>(p, kNextOffset);
      if (next == 0) break;
      last = GlobalAddress::FromRaw(next);
      auto g = manager_.SLock(ctx, last);
      if (!g.ok()) return g.status();
      other = *std::move(g);
      p = other.data();
    }
  }

  Entry entry;
  entry.name = std::string(name);
  entry.id = Get<uint32_t>(head->data(), kNextIdOffset);
  Put<uint32_t>(head->MutableRange(kNextIdOffset, 4), entry.id + 1);
  if (absl::Status s = fill(entry); !s.ok()) return s;

  uint8_t encoded[kEntryBytes];
  entry.Encode(encoded);
  auto append_to = [&](cc::ExclusiveGuard& g, uint32_t count) {
    std::memcpy(g.MutableRange(kHeaderBytes + count * kEntryBytes, kEntryBytes),
                encoded, kEntryBytes);
    Put<uint32_t>(g.MutableRange(kCountOffset, 4), count + 1);
  };
  auto link_to = [&](cc::ExclusiveGuard& g, GlobalAddress next) {
    Put<uint64_t>(g.MutableRange(kNextOffset, 8), next.raw());
  };
  if (last_count < per_gcl) {
    if (last == head_) {
      append_to(*head, last_count);
    } else {
      auto g = manager_.XLock(ctx, last);
      if (!g.ok()) return g.status();
      append_to(*g, last_count);
      if (absl::Status s = g->Unlock(); !s.ok()) return s;
    }
  } else {
    auto fresh = manager_.Allocate(ctx);
    if (!fresh.ok()) return fresh.status();
    {
      auto g = manager_.XLock(ctx, *fresh);
      if (!g.ok()) return g.status();
      Put<uint32_t>(g->MutableRange(0, 4), kMagic);
      append_to(*g, 0);
      if (absl::Status s = g->Unlock(); !s.ok()) return s;
    }
    if (last == head_) {
      link_to(*head, *fresh);
    } else {
      auto g = manager_.XLock(ctx, last);
      if (!g.ok()) return g.status();
      link_to(*g, *fresh);
      if (absl::Status s = g->Unlock(); !s.ok()) return s;
    }
  }
  if (absl::Status s = head->Unlock(); !s.ok()) return s;
  return entry;
}

absl::StatusOr<TableDescriptor> Catalog::CreateTable(
    cc::ThreadContext& ctx, std::string_view name, const Schema& schema,
    const TableOptions& options) {
  auto entry = Append(ctx, name, [&](Entry& e) -> absl::Status {
    auto root = HeapTable::Create(manager_, ctx, e.id, schema, options);
    if (!root.ok()) return root.status();
    const std::string bytes = schema.Serialize();
    auto blob = WriteBlob(ctx, bytes);
    if (!blob.ok()) return blob.status();
    e.kind = kKindTable;
    e.root = root->raw();
    e.blob = blob->raw();
    e.length = bytes.size();
    return absl::OkStatus();
  });
  if (!entry.ok()) return entry.status();
  return TableDescriptor{entry->name, entry->id, schema,
                         GlobalAddress::FromRaw(entry->root)};
}

absl::StatusOr<TableDescriptor> Catalog::FindTable(cc::ThreadContext& ctx,
                                                   std::string_view name) {
  auto entry = Find(ctx, name);
  if (!entry.ok()) return entry.status();
  if (entry->kind != kKindTable) {
    return absl::FailedPreconditionError(
        absl::StrFormat("'%s' is an index, not a table", name));
  }
  auto bytes = ReadBlob(ctx, GlobalAddress::FromRaw(entry->blob));
  if (!bytes.ok()) return bytes.status();
  if (bytes->size() != entry->length) {
    return absl::DataLossError(
        absl::StrFormat("schema of table '%s' is truncated", name));
  }
  auto schema = Schema::Deserialize(*bytes);
  if (!schema.ok()) return schema.status();
  return TableDescriptor{entry->name, entry->id, *std::move(schema),
                         GlobalAddress::FromRaw(entry->root)};
}

absl::StatusOr<IndexDescriptor> Catalog::CreateIndex(
    cc::ThreadContext& ctx, std::string_view name, const IndexSpec& spec,
    AnchorFactory make_anchor) {
  if (spec.key_columns.size() > IndexSpec::kMaxKeyColumns) {
    return absl::InvalidArgumentError(
        absl::StrFormat("index '%s' has %d key columns; at most %d", name,
                        spec.key_columns.size(), IndexSpec::kMaxKeyColumns));
  }
  // The key columns, packed into the entry's 8 length bytes.
  uint64_t key_columns = spec.key_columns.size();
  for (size_t i = 0; i < spec.key_columns.size(); ++i) {
    if (spec.key_columns[i] > UINT8_MAX) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "index '%s': key column %d is beyond the %d a table has", name,
          spec.key_columns[i], Schema::kMaxColumns));
    }
    key_columns |= uint64_t{spec.key_columns[i]} << (8 * (i + 1));
  }
  auto entry = Append(ctx, name, [&](Entry& e) -> absl::Status {
    auto anchor = make_anchor(e.id);
    if (!anchor.ok()) return anchor.status();
    e.kind = kKindIndex;
    e.flags = spec.unique ? kFlagUnique : 0;
    e.key_width = spec.key_width;
    e.root = anchor->raw();
    e.blob = spec.table_id;
    e.length = key_columns;
    return absl::OkStatus();
  });
  if (!entry.ok()) return entry.status();
  return IndexDescriptor{entry->name, entry->id, spec,
                         GlobalAddress::FromRaw(entry->root)};
}

absl::StatusOr<IndexDescriptor> Catalog::FindIndex(cc::ThreadContext& ctx,
                                                   std::string_view name) {
  auto entry = Find(ctx, name);
  if (!entry.ok()) return entry.status();
  if (entry->kind != kKindIndex) {
    return absl::FailedPreconditionError(
        absl::StrFormat("'%s' is a table, not an index", name));
  }
  IndexSpec spec;
  spec.table_id = static_cast<uint32_t>(entry->blob);
  spec.key_width = entry->key_width;
  spec.unique = (entry->flags & kFlagUnique) != 0;
  const size_t key_columns = entry->length & 0xff;
  if (key_columns > IndexSpec::kMaxKeyColumns) {
    return absl::DataLossError(
        absl::StrFormat("index '%s' has a corrupt key column count", name));
  }
  for (size_t i = 0; i < key_columns; ++i) {
    spec.key_columns.push_back((entry->length >> (8 * (i + 1))) & 0xff);
  }
  return IndexDescriptor{entry->name, entry->id, spec,
                         GlobalAddress::FromRaw(entry->root)};
}

absl::StatusOr<GlobalAddress> Catalog::WriteBlob(cc::ThreadContext& ctx,
                                                 std::string_view bytes) {
  const uint32_t room = manager_.payload_bytes() - kBlobHeaderBytes;
  // Written back to front so each GCL can point to the next one at once.
  const size_t pieces = bytes.empty() ? 1 : (bytes.size() + room - 1) / room;
  GlobalAddress next;
  for (size_t i = pieces; i-- > 0;) {
    const size_t begin = i * room;
    const uint32_t length =
        static_cast<uint32_t>(std::min<size_t>(room, bytes.size() - begin));
    auto gcl = manager_.Allocate(ctx);
    if (!gcl.ok()) return gcl.status();
    auto g = manager_.XLock(ctx, *gcl);
    if (!g.ok()) return g.status();
    uint8_t* p = g->MutableRange(0, kBlobHeaderBytes + length);
    Put<uint64_t>(p, next.raw());
    Put<uint32_t>(p + 8, length);
    std::memcpy(p + kBlobHeaderBytes, bytes.data() + begin, length);
    if (absl::Status s = g->Unlock(); !s.ok()) return s;
    next = *gcl;
  }
  return next;
}

absl::StatusOr<std::string> Catalog::ReadBlob(cc::ThreadContext& ctx,
                                              GlobalAddress first) {
  std::string out;
  const uint32_t room = manager_.payload_bytes() - kBlobHeaderBytes;
  for (GlobalAddress at = first; !at.is_null();) {
    auto g = manager_.SLock(ctx, at);
    if (!g.ok()) return g.status();
    const uint32_t length = Get<uint32_t>(g->data(), 8);
    if (length > room) return absl::DataLossError("corrupt catalog blob");
    out.append(reinterpret_cast<const char*>(g->data() + kBlobHeaderBytes),
               length);
    at = GlobalAddress::FromRaw(Get<uint64_t>(g->data(), 0));
  }
  return out;
}

}  // namespace strand::storage
