#include "wal/redo_record.h"

#include <cstring>

#include "absl/strings/str_format.h"
#include "base/coding.h"

namespace strand::wal {
namespace {

constexpr size_t Padded(size_t n) { return (n + 7) / 8 * 8; }

}  // namespace

void RedoBuilder::Add(const RedoOp& op) {
  const size_t start = payload_.size();
  payload_.resize(start + kRedoOpHeaderBytes + Padded(op.after_image.size()),
                  '\0');
  char* p = payload_.data() + start;
  p[0] = static_cast<char>(op.kind);
  const uint32_t length = static_cast<uint32_t>(op.after_image.size());
  EncodeFixed<uint32_t>(p + 4, op.object_id);
  EncodeFixed<uint64_t>(p + 8, op.address);
  EncodeFixed<uint64_t>(p + 16, op.key);
  EncodeFixed<uint32_t>(p + 24, op.offset);
  EncodeFixed<uint32_t>(p + 28, length);
  if (length > 0) {
    std::memcpy(p + kRedoOpHeaderBytes, op.after_image.data(), length);
  }
  ++op_count_;
}

RedoBuilder& RedoBuilder::Update(uint32_t object_id, uint64_t address,
                                 uint64_t key, uint32_t offset,
                                 std::string_view after_image) {
  Add({RedoKind::kUpdate, object_id, address, key, offset, after_image});
  return *this;
}

RedoBuilder& RedoBuilder::Insert(uint32_t object_id, uint64_t address,
                                 uint64_t key, std::string_view tuple) {
  Add({RedoKind::kInsert, object_id, address, key, 0, tuple});
  return *this;
}

RedoBuilder& RedoBuilder::Delete(uint32_t object_id, uint64_t address,
                                 uint64_t key) {
  Add({RedoKind::kDelete, object_id, address, key, 0, {}});
  return *this;
}

RedoBuilder& RedoBuilder::IndexInsert(uint32_t index_id, std::string_view key,
                                      uint64_t value) {
  Add({RedoKind::kIndexInsert, index_id, value, 0, 0, key});
  return *this;
}

RedoBuilder& RedoBuilder::IndexRemove(uint32_t index_id, std::string_view key,
                                      uint64_t value) {
  Add({RedoKind::kIndexRemove, index_id, value, 0, 0, key});
  return *this;
}

absl::Status ParseRedo(std::string_view payload, std::vector<RedoOp>* ops) {
  size_t pos = 0;
  while (pos < payload.size()) {
    if (payload.size() - pos < kRedoOpHeaderBytes) {
      return absl::DataLossError(absl::StrFormat(
          "redo payload: %d trailing bytes at offset %d are no op",
          payload.size() - pos, pos));
    }
    const char* p = payload.data() + pos;
    RedoOp op;
    const uint8_t kind = static_cast<uint8_t>(p[0]);
    if (kind < 1 || kind > 5) {
      return absl::DataLossError(absl::StrFormat(
          "redo payload: unknown op kind %d at offset %d", kind, pos));
    }
    op.kind = static_cast<RedoKind>(kind);
    op.object_id = DecodeFixed<uint32_t>(p + 4);
    op.address = DecodeFixed<uint64_t>(p + 8);
    op.key = DecodeFixed<uint64_t>(p + 16);
    op.offset = DecodeFixed<uint32_t>(p + 24);
    const uint32_t length = DecodeFixed<uint32_t>(p + 28);
    if (Padded(length) > payload.size() - pos - kRedoOpHeaderBytes) {
      return absl::DataLossError(absl::StrFormat(
          "redo payload: op at offset %d claims %d bytes past the end", pos,
          length));
    }
    op.after_image = payload.substr(pos + kRedoOpHeaderBytes, length);
    ops->push_back(op);
    pos += kRedoOpHeaderBytes + Padded(length);
  }
  return absl::OkStatus();
}

}  // namespace strand::wal
