#ifndef STRAND_PARTITION_PROTOCOL_H_
#define STRAND_PARTITION_PROTOCOL_H_

// The messages of partitioned mode between compute nodes, and where their
// bodies travel. A message (rdma/message.h) carries a fixed Header; a body
// bigger than that (fragment inputs, fragment outputs) is written first
// into a mailbox of the receiver's registered region with PostWriteToPeer,
// which the fabric delivers before the message that names it.
//
// Region of a node (Mailboxes), for N nodes and S coordinator slots per
// node, kMailboxBytes each:
//   inbox    [sender node][sender slot]      requests' bodies (kWork)
//   replies  [own slot][answering node]      answers' bodies (kWorkReply)
// A coordinator has one round in flight per slot, and a node answers one
// request of it at a time, so no mailbox is ever written twice at once.
// Nodes learn each other's regions from kHello at start.
//
// Exchanges (C coordinator, P participant; gtid = global transaction id):
//   C -> P  kWork(gtid, slot, seq, calls, body)     P runs the fragments in
//   P -> C  kWorkReply(gtid, slot, seq, status, body) its branch of gtid
//   C -> P  kPrepare(gtid, slot, seq, commit_ts)
//   P -> C  kVote(gtid, slot, seq, vote)            yes after its prepare
//                                                   record is durable
//   C -> P  kCommit(gtid) / kAbort(gtid)
//   P -> C  kAck(gtid)                              after kCommit, lazily
// `seq` numbers a coordinator's rounds: an answer to an older round (one
// that timed out) is recognized and dropped.

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
