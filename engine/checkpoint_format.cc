#include "engine/checkpoint_format.h"

#include "absl/strings/str_format.h"
#include "base/coding.h"

namespace strand::engine {
namespace {

// Reads from a byte string, remembering whether it ran past the end.
class Cursor {
 public:
  explicit Cursor(std::string_view bytes) : bytes_(bytes) {}
  template <typename T>
  T Get() {
    if (pos_ + sizeof(T) > bytes_.size()) {
      ok_ = false;
      return T{};
    }
    const T value = DecodeFixed<T>(bytes_.data() + pos_);
    pos_ += sizeof(T);
    return value;
  }
  std::string_view Bytes(size_t n) {
    if (pos_ + n > bytes_.size()) {
      ok_ = false;
      return {};
    }
    std::string_view out = bytes_.substr(pos_, n);
    pos_ += n;
    return out;
  }
  bool ok() const { return ok_; }
  bool done() const { return pos_ == bytes_.size(); }

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
  bool ok_ = true;
};

std::string FileHeader(uint64_t magic, uint32_t id, uint32_t extra) {
  std::string out;
  PutFixed<uint64_t>(&out, magic);
  PutFixed<uint32_t>(&out, id);
  PutFixed<uint32_t>(&out, extra);
  return out;
}

absl::StatusOr<CheckpointRecords> ParseFile(std::string_view bytes,
                                            uint64_t magic, uint32_t id,
                                            uint32_t extra, size_t record_bytes,
                                            const std::string& path) {
  auto damaged = [&path](std::string_view why) {
    return absl::DataLossError(
        absl::StrFormat("checkpoint file %s: %s", path, std::string(why)));
  };
  if (bytes.size() < kCheckpointFileHeaderBytes + kCheckpointTrailerBytes) {
    return damaged("shorter than a header and a trailer");
  }
  Cursor header(bytes.substr(0, kCheckpointFileHeaderBytes));
  if (header.Get<uint64_t>() != magic || header.Get<uint32_t>() != id ||
      header.Get<uint32_t>() != extra) {
    return damaged("header names another object or layout");
  }
  CheckpointRecords r;
  r.record_bytes = record_bytes;
  r.records = bytes.substr(
      kCheckpointFileHeaderBytes,
      bytes.size() - kCheckpointFileHeaderBytes - kCheckpointTrailerBytes);
  if (r.records.size() % record_bytes != 0) {
    return damaged("its records do not fill it");
  }
  r.count = r.records.size() / record_bytes;
  const uint64_t trailer = DecodeFixed<uint64_t>(bytes.data() + bytes.size() -
                                                 kCheckpointTrailerBytes);
  if (trailer != r.count) {
    return damaged(
        absl::StrFormat("%d records, its trailer says %d", r.count, trailer));
  }
  return r;
}

}  // namespace

std::string EncodeCatalog(const std::vector<CheckpointObject>& objects) {
  std::string out;
  PutFixed<uint64_t>(&out, kCheckpointCatalogMagic);
  PutFixed<uint32_t>(&out, static_cast<uint32_t>(objects.size()));
  for (const CheckpointObject& o : objects) {
    PutFixed<uint8_t>(&out, static_cast<uint8_t>(o.kind));
    PutFixed<uint32_t>(&out, o.id);
    PutFixed<uint8_t>(&out, static_cast<uint8_t>(o.name.size()));
    out.append(o.name);
    if (o.kind == CheckpointObject::Kind::kTable) {
      PutFixed<uint32_t>(&out, o.table_options.max_rows_per_page);
      PutFixed<uint32_t>(&out, static_cast<uint32_t>(o.schema.size()));
      out.append(o.schema);
    } else {
      PutFixed<uint32_t>(&out, o.index.table_id);
      PutFixed<uint16_t>(&out, o.index.key_width);
      PutFixed<uint8_t>(&out, o.index.unique ? 1 : 0);
      PutFixed<uint8_t>(&out, static_cast<uint8_t>(o.index.key_columns.size()));
      for (uint16_t c : o.index.key_columns) PutFixed<uint16_t>(&out, c);
    }
  }
  return out;
}

absl::StatusOr<std::vector<CheckpointObject>> DecodeCatalog(
    std::string_view bytes, const std::string& path) {
  Cursor in(bytes);
  std::vector<CheckpointObject> objects;
  const uint64_t magic = in.Get<uint64_t>();
  const uint32_t count = in.Get<uint32_t>();
  if (!in.ok() || magic != kCheckpointCatalogMagic) {
    return absl::DataLossError(
        absl::StrFormat("checkpoint file %s is not a catalog file", path));
  }
  for (uint32_t i = 0; i < count && in.ok(); ++i) {
    CheckpointObject o;
    const uint8_t kind = in.Get<uint8_t>();
    o.id = in.Get<uint32_t>();
    o.name = std::string(in.Bytes(in.Get<uint8_t>()));
    if (kind == static_cast<uint8_t>(CheckpointObject::Kind::kTable)) {
      o.kind = CheckpointObject::Kind::kTable;
      o.table_options.max_rows_per_page = in.Get<uint32_t>();
      o.schema = std::string(in.Bytes(in.Get<uint32_t>()));
    } else if (kind == static_cast<uint8_t>(CheckpointObject::Kind::kIndex)) {
      o.kind = CheckpointObject::Kind::kIndex;
      o.index.table_id = in.Get<uint32_t>();
      o.index.key_width = in.Get<uint16_t>();
      o.index.unique = in.Get<uint8_t>() != 0;
      const uint8_t columns = in.Get<uint8_t>();
      for (uint8_t c = 0; c < columns && in.ok(); ++c) {
        o.index.key_columns.push_back(in.Get<uint16_t>());
      }
    } else {
      return absl::DataLossError(absl::StrFormat(
          "checkpoint file %s: object %d has unknown kind %d", path, i, kind));
    }
    objects.push_back(std::move(o));
  }
  if (!in.ok() || !in.done()) {
    return absl::DataLossError(absl::StrFormat(
        "checkpoint file %s: the catalog is cut short or has extra bytes",
        path));
  }
  return objects;
}

std::string TableFileName(uint32_t table_id) {
  return absl::StrFormat("table-%d", table_id);
}

std::string IndexFileName(uint32_t index_id) {
  return absl::StrFormat("index-%d", index_id);
}

std::string TableFileHeader(uint32_t table_id, uint32_t tuple_bytes) {
  return FileHeader(kCheckpointTableMagic, table_id, tuple_bytes);
}

std::string IndexFileHeader(uint32_t index_id, uint16_t key_width,
                            bool unique) {
  return FileHeader(kCheckpointIndexMagic, index_id,
                    uint32_t{key_width} | (unique ? uint32_t{1} << 16 : 0));
}

absl::StatusOr<CheckpointRecords> ParseTableFile(std::string_view bytes,
                                                 uint32_t table_id,
                                                 uint32_t tuple_bytes,
                                                 const std::string& path) {
  return ParseFile(bytes, kCheckpointTableMagic, table_id, tuple_bytes,
                   sizeof(uint64_t) + tuple_bytes, path);
}

absl::StatusOr<CheckpointRecords> ParseIndexFile(std::string_view bytes,
                                                 uint32_t index_id,
                                                 uint16_t key_width,
                                                 const std::string& path) {
  // The unique flag is the reader's to check against the catalog: accept
  // either.
  if (bytes.size() >= 16) {
    const uint32_t extra = DecodeFixed<uint32_t>(bytes.data() + 12);
    if ((extra & 0xffff) == key_width) {
      return ParseFile(bytes, kCheckpointIndexMagic, index_id, extra,
                       key_width + sizeof(uint64_t), path);
    }
  }
  return ParseFile(bytes, kCheckpointIndexMagic, index_id, key_width,
                   key_width + sizeof(uint64_t), path);
}

}  // namespace strand::engine
