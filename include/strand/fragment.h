#ifndef STRAND_PUBLIC_FRAGMENT_H_
#define STRAND_PUBLIC_FRAGMENT_H_

// Partitioned mode (EngineOptions::mode = EngineMode::kPartitioned): the
// pieces of a procedure that run where a partition lives, registered with
// Engine::RegisterFragment and called in batches (partition/fragment.h).

#include "partition/fragment.h"  // IWYU pragma: export
#include "strand/txn.h"          // IWYU pragma: export

namespace strand {

using partition::Fragment;
using partition::FragmentBatch;
using partition::RunAt;

}  // namespace strand

#endif  // STRAND_PUBLIC_FRAGMENT_H_
