#ifndef STRAND_STORAGE_CATALOG_H_
#define STRAND_STORAGE_CATALOG_H_

// The catalog: names -> table descriptors and index anchors, kept in a chain
// of catalog GCLs so any compute node can open what another node created.
// The chain's first GCL is in RootWord::kCatalog; the first node to Open()
// installs it with CompareAndSwap(0 -> address), and a node that loses the
// race frees its GCL and uses the winner's. Byte layout of the chain and of
// a table's schema blobs: docs/design/storage.md, "The catalog".
//
// Names are one namespace for tables and indexes, 1 to 31 bytes. Entries
// are only appended (no drop), so readers walk the chain under shared
// latches one GCL at a time. Creators serialize on the first GCL's
// exclusive latch, which makes "is the name free" and "append" atomic.
//
// Errors: AlreadyExists for a duplicate name, NotFound for an unknown one,
// InvalidArgument for a bad name or spec, FailedPrecondition for a name of
// the other kind (a table opened as an index).
//
// Costs (SEL round trips; SELCC is free on cache hits): Find 2 per catalog
// GCL walked (3 entries fit a 256-byte GCL, 15 a 1 KiB one) plus 2 per
// schema blob GCL; Create adds a blob write and 2-6 for the entry.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cc/gcl_manager.h"
#include "storage/schema.h"
#include "storage/table_options.h"

namespace strand::storage {

struct TableDescriptor {
  std::string name;
  uint32_t id = 0;
  Schema schema;
  rdma::GlobalAddress root;  // HeapTable root GCL
};

struct IndexSpec {
  static constexpr size_t kMaxKeyColumns = 7;

  uint32_t table_id = 0;  // the table it indexes (0: none)
  uint16_t key_width = 0;
  bool unique = true;
  // The table's columns whose values make the key, in key order (at most
  // kMaxKeyColumns, each < 256: Schema::kMaxColumns); empty: the
  // application builds the keys (txn/index_key.h).
  std::vector<uint16_t> key_columns = {};
};

struct IndexDescriptor {
  std::string name;
  uint32_t id = 0;
  IndexSpec spec;
  rdma::GlobalAddress anchor;  // the index's root GCL (index/ owns it)
};

class Catalog {
 public:
  static constexpr size_t kMaxNameBytes = 31;

  // Opens the pool's catalog, creating it if no node has yet.
  static absl::StatusOr<std::unique_ptr<Catalog>> Open(cc::GclManager& manager,
                                                       cc::ThreadContext& ctx);

  rdma::GlobalAddress head() const { return head_; }

  // Creates the heap table `name` (HeapTable::Create) and records it. The
  // options live in the table's root, not in the entry.
  absl::StatusOr<TableDescriptor> CreateTable(cc::ThreadContext& ctx,
                                              std::string_view name,
                                              const Schema& schema,
                                              const TableOptions& options = {});
  absl::StatusOr<TableDescriptor> FindTable(cc::ThreadContext& ctx,
                                            std::string_view name);

  // Records index `name`. `make_anchor` builds the index (index/
  // BLinkTree::Create) and is called only once the name is known to be
  // free, under the catalog's latch, so a lost race leaks nothing.
  using AnchorFactory =
      absl::FunctionRef<absl::StatusOr<rdma::GlobalAddress>(uint32_t id)>;
  absl::StatusOr<IndexDescriptor> CreateIndex(cc::ThreadContext& ctx,
                                              std::string_view name,
                                              const IndexSpec& spec,
                                              AnchorFactory make_anchor);
  absl::StatusOr<IndexDescriptor> FindIndex(cc::ThreadContext& ctx,
                                            std::string_view name);

  // Every name, in creation order.
  absl::StatusOr<std::vector<std::string>> ListNames(cc::ThreadContext& ctx);

 private:
  struct Entry;
  Catalog(cc::GclManager& manager, rdma::GlobalAddress head)
      : manager_(manager), head_(head) {}

  // The entry named `name`, or NotFound.
  absl::StatusOr<Entry> Find(cc::ThreadContext& ctx, std::string_view name);
  // Appends under the first GCL's latch; `fill` completes the entry.
  absl::StatusOr<Entry> Append(
      cc::ThreadContext& ctx, std::string_view name,
      absl::FunctionRef<absl::Status(Entry& entry)> fill);
  // Calls `visit` on each entry until it returns false.
  absl::Status Walk(cc::ThreadContext& ctx,
                    absl::FunctionRef<bool(const Entry&)> visit);

  absl::StatusOr<rdma::GlobalAddress> WriteBlob(cc::ThreadContext& ctx,
                                                std::string_view bytes);
  absl::StatusOr<std::string> ReadBlob(cc::ThreadContext& ctx,
                                       rdma::GlobalAddress first);

  cc::GclManager& manager_;
  const rdma::GlobalAddress head_;
};

}  // namespace strand::storage

#endif  // STRAND_STORAGE_CATALOG_H_
