#ifndef STRAND_PARTITION_PROTOCOL_H_
#define STRAND_PARTITION_PROTOCOL_H_

// The messages of partitioned mode between compute nodes, and where their
// bodies travel. A message (rdma/message.h) carries a fixed Header; a
// bigger body (fragment inputs and outputs) is first written into a
// mailbox of the receiver's registered region (PostWriteToPeer), which the
// fabric delivers before the message that names it. A coordinator has one
// round in flight per slot, so no mailbox is written twice at once; `seq`
// numbers its rounds, so an answer to an older round is dropped. The
// mailbox layout and the exchanges: docs/design/partitioned.md,
// "Messages and mailboxes".

#include <cstdint>

#include "rdma/fabric.h"
#include "rdma/message.h"

namespace strand::partition {

inline constexpr uint16_t kFirstMessageType = 0x2c00;
inline constexpr uint16_t kLastMessageType = 0x2c0f;

enum class Kind : uint16_t {
  kHello = kFirstMessageType,
  kWork,
  kWorkReply,
  kPrepare,
  kVote,
  kCommit,
  kAbort,
  kAck,
};

enum class Vote : uint8_t { kNo = 0, kYes = 1, kReadOnly = 2 };

struct Header {
  uint64_t gtid = 0;
  uint64_t commit_ts = 0;  // kPrepare
  uint32_t slot = 0;       // the coordinator's slot on its node
  uint32_t seq = 0;        // the coordinator's round
  uint32_t body_bytes = 0;
  uint32_t status_code = 0;  // kWorkReply: absl::StatusCode of the branch
  uint16_t calls = 0;        // kWork
  Vote vote = Vote::kNo;     // kVote
  uint8_t flags = 0;
};
static_assert(sizeof(Header) <= rdma::Message::kPayloadBytes);

struct Hello {
  rdma::PeerAddress region;  // the sender's Mailboxes region
  uint32_t slots = 0;        // its coordinator slots
  uint32_t nodes = 0;
};
static_assert(sizeof(Hello) <= rdma::Message::kPayloadBytes);

inline constexpr uint64_t kMailboxBytes = 4096;

// Offsets in a node's region (see the top).
inline uint64_t InboxOffset(int sender_node, int sender_slot, int slots) {
  return (uint64_t(sender_node) * slots + sender_slot) * kMailboxBytes;
}
inline uint64_t ReplyOffset(int own_slot, int answering_node, int nodes,
                            int slots) {
  return (uint64_t(nodes) * slots + uint64_t(own_slot) * nodes +
          answering_node) *
         kMailboxBytes;
}
inline uint64_t RegionBytes(int nodes, int slots) {
  return 2 * uint64_t(nodes) * slots * kMailboxBytes;
}

inline rdma::Message MakeMessage(Kind kind, const Header& header) {
  rdma::Message m;
  m.type = static_cast<uint16_t>(kind);
  m.Store(header);
  return m;
}

}  // namespace strand::partition

#endif  // STRAND_PARTITION_PROTOCOL_H_
