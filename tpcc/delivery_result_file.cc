#include "tpcc/delivery_result_file.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace strand::tpcc {
namespace {

std::string Time(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", t, absl::UTCTimeZone());
}

}  // namespace

absl::StatusOr<std::unique_ptr<DeliveryResultFile>> DeliveryResultFile::Open(
    const std::string& path) {
  auto file = AppendOnlyFile::Open(path);
  if (!file.ok()) return file.status();
  return std::unique_ptr<DeliveryResultFile>(
      new DeliveryResultFile(*std::move(file)));
}

std::string DeliveryResultFile::Line(const QueuedDelivery& delivery,
                                     const DeliveryOutput& result,
                                     absl::Time completed) {
  std::string line = absl::StrFormat(
      "queued=%s completed=%s w=%d carrier=%d skipped=%d districts=",
      Time(delivery.queued), Time(completed), delivery.input.w,
      delivery.input.carrier_id, result.skipped);
  for (size_t d = 0; d < result.o_ids.size(); ++d) {
    absl::StrAppend(&line, d == 0 ? "" : ",", d + 1, ":",
                    result.o_ids[d] == 0 ? std::string("-")
                                         : absl::StrCat(result.o_ids[d]));
  }
  line += '\n';
  return line;
}

absl::Status DeliveryResultFile::Append(const QueuedDelivery& delivery,
                                        const DeliveryOutput& result,
                                        absl::Time completed) {
  return file_->Append(Line(delivery, result, completed));
}

}  // namespace strand::tpcc
