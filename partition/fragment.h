#ifndef STRAND_PARTITION_FRAGMENT_H_
#define STRAND_PARTITION_FRAGMENT_H_

// Fragments: the part of a stored procedure that runs where a partition
// lives. In shared mode (and for its own node's partitions) a fragment
// runs on the procedure's own transaction; in partitioned mode it runs on
// the owner node, in that node's branch of the transaction
// (partition/node.h). The procedure is the same in both modes.
//
//   Fragment<StockIn, StockOut> stock = engine.RegisterFragment<StockIn,
//       StockOut>("stock", [](txn::Txn& txn, const StockIn& in)
//           -> absl::StatusOr<StockOut> { ... });
//   ...in a procedure:
//   FragmentBatch batch(txn);
//   absl::StatusOr<StockOut> a, b;
//   batch.Add(supply_w1, stock, in1, &a);
//   batch.Add(supply_w2, stock, in2, &b);  // one request per owner node,
//   STRAND_RETURN_IF_ERROR(batch.Run());   // all owners at once
//
// A fragment's error (NotFound, a user abort) reaches the procedure
// through its output; a conflict abort of its branch aborts the whole
// transaction, and Run returns it. Inputs and outputs are trivially
// copyable, copied as bytes; one node's calls of a round must fit a
// mailbox each way (protocol.h, kMailboxBytes): InvalidArgument or
// ResourceExhausted otherwise.

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "absl/status/statusor.h"
#include "partition/fragment_registry.h"
#include "txn/remote_branches.h"
#include "txn/txn.h"

namespace strand::partition {

// Calls of fragments gathered, then run together (see the top).
class FragmentBatch {
 public:
  explicit FragmentBatch(txn::Txn& txn) : txn_(txn) {}

  template <typename In, typename Out>
  void Add(int64_t partition, const Fragment<In, Out>& fragment, const In& in,
           absl::StatusOr<Out>* out) {
    Pending p;
    p.partition = partition;
    p.fragment = fragment.id;
    p.fn = fragment.fn;
    p.input.assign(reinterpret_cast<const char*>(&in), sizeof(In));
    p.deliver = [out](const absl::Status& status, std::string_view bytes) {
      if (!status.ok()) {
        *out = status;
      } else if (bytes.size() != sizeof(Out)) {
        *out = absl::InternalError("fragment output of the wrong size");
      } else {
        Out o;
        std::memcpy(&o, bytes.data(), sizeof(Out));
        *out = o;
      }
    };
    pending_.push_back(std::move(p));
  }

  // Runs every call added: remote ones sent first, this node's run while
  // they travel. OK once every call has an outcome; an error (the
  // transaction aborted) otherwise.
  absl::Status Run();

 private:
  struct Pending {
    int64_t partition = 0;
    FragmentId fragment = 0;
    const ErasedFragment* fn = nullptr;
    std::string input;
    std::function<void(const absl::Status&, std::string_view)> deliver;
  };
  txn::Txn& txn_;
  std::vector<Pending> pending_;
};

// One call: Run of a batch of one.
template <typename In, typename Out>
absl::StatusOr<Out> RunAt(txn::Txn& txn, int64_t partition,
                          const Fragment<In, Out>& fragment, const In& in) {
  absl::StatusOr<Out> out = absl::UnknownError("fragment did not run");
  FragmentBatch batch(txn);
  batch.Add(partition, fragment, in, &out);
  if (absl::Status s = batch.Run(); !s.ok()) return s;
  return out;
}

}  // namespace strand::partition

#endif  // STRAND_PARTITION_FRAGMENT_H_
