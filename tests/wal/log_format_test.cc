#include "wal/log_format.h"

#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "wal/crc32c.h"
#include "wal/redo_record.h"

namespace strand::wal {
namespace {

TEST(LogFormatTest, RecordRoundTrip) {
  for (size_t payload_bytes : {0, 1, 7, 8, 9, 100, 4096}) {
    std::string payload(payload_bytes, '\0');
    for (size_t i = 0; i < payload_bytes; ++i)
      payload[i] = static_cast<char>(i * 7);
    const RecordHeader in{.type = RecordType::kCommit,
                          .lsn = 42,
                          .txn_id = 0x1122334455667788,
                          .commit_ts = 987654321};
    std::string buf(EncodedRecordBytes(payload_bytes) + 64, '\0');
    EncodeRecord(in, payload, buf.data());
    EXPECT_EQ(EncodedRecordBytes(payload_bytes) % kRecordAlignment, 0u);
    RecordHeader out;
    std::string_view out_payload;
    ASSERT_EQ(DecodeRecord(buf, &out, &out_payload), DecodeResult::kOk);
    EXPECT_EQ(out.type, RecordType::kCommit);
    EXPECT_EQ(out.payload_bytes, payload_bytes);
    EXPECT_EQ(out.lsn, 42u);
    EXPECT_EQ(out.txn_id, 0x1122334455667788u);
    EXPECT_EQ(out.commit_ts, 987654321u);
    EXPECT_EQ(out_payload, payload);
    // What follows the record is zeros: the clean end.
    EXPECT_EQ(DecodeRecord(std::string_view(buf).substr(
                               EncodedRecordBytes(payload_bytes)),
                           &out, &out_payload),
              DecodeResult::kEnd);
  }
}

// The durable watermark (format 4) survives the round trip when it can be
// stored exactly, and decodes as 0 ("unknown", as in older formats' zero
// bytes) otherwise: it never claims more was durable than was.
TEST(LogFormatTest, DurableWatermarkRoundTripOrUnknown) {
  struct Case {
    Lsn lsn, durable, decoded;
  };
  const Lsn far = (uint64_t{1} << 32) + 100;
  for (const Case& c :
       {Case{1, 0, 0}, Case{10, 9, 9}, Case{10, 1, 1}, Case{far + 5, 5, 0},
        Case{far, far - 1, far - 1}, Case{7, 7, 0}}) {
    std::string buf(EncodedRecordBytes(3), '\0');
    EncodeRecord({.lsn = c.lsn, .durable_lsn = c.durable}, "abc", buf.data());
    RecordHeader out;
    std::string_view payload;
    ASSERT_EQ(DecodeRecord(buf, &out, &payload), DecodeResult::kOk);
    EXPECT_EQ(out.durable_lsn, c.decoded)
        << "lsn " << c.lsn << " durable " << c.durable;
  }
}

TEST(LogFormatTest, EveryFlippedBitIsCorrupt) {
  const std::string payload = "after-image bytes";
  std::string buf(EncodedRecordBytes(payload.size()), '\0');
  EncodeRecord({.lsn = 1, .txn_id = 2, .commit_ts = 3}, payload, buf.data());
  RecordHeader h;
  std::string_view p;
  const size_t covered = kRecordHeaderBytes + payload.size();
  for (size_t bit = 0; bit < covered * 8; ++bit) {
    std::string bad = buf;
    bad[bit / 8] ^= static_cast<char>(1 << (bit % 8));
    EXPECT_EQ(DecodeRecord(bad, &h, &p), DecodeResult::kCorrupt)
        << "bit " << bit;
  }
}

TEST(LogFormatTest, UnknownTypeWithValidCrcIsNotATornWrite) {
  std::string buf(EncodedRecordBytes(0), '\0');
  EncodeRecord({.lsn = 1}, "", buf.data());
  buf[8] = 9;  // type; recompute the CRC as a buggy writer would have
  const uint32_t crc =
      Crc32c(std::string_view(buf).substr(4, kRecordHeaderBytes - 4));
  std::memcpy(buf.data(), &crc, 4);
  RecordHeader h;
  std::string_view p;
  EXPECT_EQ(DecodeRecord(buf, &h, &p), DecodeResult::kBadType);
}

TEST(LogFormatTest, SegmentHeaderRoundTripAndRefusals) {
  const SegmentHeader in{.database_id = 0xdb,
                         .compute_node_id = 3,
                         .segment_index = 7,
                         .first_lsn = 1000,
                         .segment_bytes = 1 << 20};
  std::string block(kSegmentHeaderBytes, '\0');
  EncodeSegmentHeader(in, block.data());
  auto out = DecodeSegmentHeader(block, 0xdb, "x.wal");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->format_version, kFormatVersion);
  EXPECT_EQ(out->compute_node_id, 3u);
  EXPECT_EQ(out->segment_index, 7u);
  EXPECT_EQ(out->first_lsn, 1000u);
  EXPECT_EQ(out->segment_bytes, 1u << 20);

  auto other = DecodeSegmentHeader(block, 0xdc, "x.wal");
  EXPECT_EQ(other.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(other.status().message().find("database 0xdb"), std::string::npos)
      << other.status();

  SegmentHeader newer = in;
  newer.format_version = kFormatVersion + 1;
  EncodeSegmentHeader(newer, block.data());
  auto refused = DecodeSegmentHeader(block, 0xdb, "x.wal");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("newer"), std::string::npos)
      << refused.status();

  EncodeSegmentHeader(in, block.data());
  block[20] ^= 1;  // inside database_id
  EXPECT_EQ(DecodeSegmentHeader(block, 0xdb, "x.wal").status().code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(DecodeSegmentHeader(std::string(4096, 'x'), 0xdb, "x.wal")
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(RedoRecordTest, RoundTrip) {
  RedoBuilder redo;
  redo.Update(1, 0x0001000000001000, 77, 16, "abc")
      .Insert(2, 0x0002000000000040, 78, std::string(100, 't'))
      .Delete(3, 0x0003000000000080, 79)
      .Update(1, 0x0001000000001000, 77, 0, "");
  EXPECT_EQ(redo.op_count(), 4u);
  std::vector<RedoOp> ops;
  ASSERT_TRUE(ParseRedo(redo.payload(), &ops).ok());
  ASSERT_EQ(ops.size(), 4u);
  EXPECT_EQ(ops[0],
            (RedoOp{RedoKind::kUpdate, 1, 0x0001000000001000, 77, 16, "abc"}));
  EXPECT_EQ(ops[1].kind, RedoKind::kInsert);
  EXPECT_EQ(ops[1].after_image, std::string(100, 't'));
  EXPECT_EQ(ops[2],
            (RedoOp{RedoKind::kDelete, 3, 0x0003000000000080, 79, 0, ""}));
  EXPECT_EQ(ops[3].after_image, "");
}

TEST(RedoRecordTest, IndexEntryOpsCarryLongKeys) {
  const std::string key(255, '\x7f');  // the longest index key
  RedoBuilder redo;
  redo.IndexInsert(5, key, 0x0001000000002008).IndexRemove(6, "k", 42);
  std::vector<RedoOp> ops;
  ASSERT_TRUE(ParseRedo(redo.payload(), &ops).ok());
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0],
            (RedoOp{RedoKind::kIndexInsert, 5, 0x0001000000002008, 0, 0, key}));
  EXPECT_EQ(ops[1], (RedoOp{RedoKind::kIndexRemove, 6, 42, 0, 0, "k"}));
}

TEST(RedoRecordTest, MalformedPayloadIsDataLoss) {
  RedoBuilder redo;
  redo.Update(1, 2, 3, 4, "12345678");
  std::string payload(redo.payload());
  std::vector<RedoOp> ops;
  EXPECT_EQ(ParseRedo(payload.substr(0, payload.size() - 8), &ops).code(),
            absl::StatusCode::kDataLoss);
  payload[0] = 9;
  EXPECT_EQ(ParseRedo(payload, &ops).code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(ParseRedo(std::string(5, '\1'), &ops).code(),
            absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace strand::wal
