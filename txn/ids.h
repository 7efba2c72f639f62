#ifndef STRAND_TXN_IDS_H_
#define STRAND_TXN_IDS_H_

// How a procedure names a table or an index: a dense id the engine hands
// out (Engine::CreateTable, CreateIndex), never a string on the hot path.

#include <cstdint>

namespace strand::txn {

using TableId = uint32_t;
using IndexId = uint32_t;
inline constexpr TableId kNoTable = UINT32_MAX;

}  // namespace strand::txn

#endif  // STRAND_TXN_IDS_H_
