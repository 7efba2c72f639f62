#ifndef STRAND_PARTITION_FRAGMENT_REGISTRY_H_
#define STRAND_PARTITION_FRAGMENT_REGISTRY_H_

// Fragments as the engine registers them (fragment.h tells what a
// fragment is and how procedures call them): their ids, their typed
// handles, and the registry every node's participant runs them from.
// Apart from fragment.h so that declaring a fragment needs no more of
// txn/ than the name Txn (engine/engine.h registers them).

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace strand::txn {
class Txn;
}  // namespace strand::txn

namespace strand::partition {

using FragmentId = uint32_t;

// A fragment with its types erased: bytes in, bytes out.
using ErasedFragment = std::function<absl::Status(
    txn::Txn& txn, std::string_view input, std::string* output)>;

// The fragments of an engine, by id; every node's participant runs them.
// Thread-safe; an entry never moves once registered.
class FragmentRegistry {
 public:
  FragmentId Add(std::string name, ErasedFragment fn);
  // Null for an unknown id.
  const ErasedFragment* Find(FragmentId id) const;
  const std::string& name(FragmentId id) const;

 private:
  mutable absl::Mutex mu_;
  std::vector<std::unique_ptr<std::pair<std::string, ErasedFragment>>> all_
      ABSL_GUARDED_BY(mu_);
};

// A typed handle: what procedures call.
template <typename In, typename Out>
struct Fragment {
  static_assert(std::is_trivially_copyable_v<In> &&
                    std::is_trivially_copyable_v<Out>,
                "fragment inputs and outputs travel as bytes");
  FragmentId id = 0;
  const ErasedFragment* fn = nullptr;  // for calls on the caller's node
};

template <typename In, typename Out, typename Fn>
ErasedFragment EraseFragment(Fn fn) {
  return [fn = std::move(fn)](txn::Txn& txn, std::string_view input,
                              std::string* output) -> absl::Status {
    if (input.size() != sizeof(In)) {
      return absl::InvalidArgumentError("fragment input of the wrong size");
    }
    In in;
    std::memcpy(&in, input.data(), sizeof(In));
    absl::StatusOr<Out> out = fn(txn, static_cast<const In&>(in));
    if (!out.ok()) return out.status();
    output->assign(reinterpret_cast<const char*>(&*out), sizeof(Out));
    return absl::OkStatus();
  };
}

}  // namespace strand::partition

#endif  // STRAND_PARTITION_FRAGMENT_REGISTRY_H_
