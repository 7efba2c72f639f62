#include "tpcc/delivery_result_file.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstring>

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
  const int fd =
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::InternalError(
        absl::StrFormat("open %s: %s", path, std::strerror(errno)));
  }
  return std::unique_ptr<DeliveryResultFile>(new DeliveryResultFile(fd));
}

DeliveryResultFile::~DeliveryResultFile() { ::close(fd_); }

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
  const std::string line = Line(delivery, result, completed);
  const ssize_t n = ::write(fd_, line.data(), line.size());
  if (n != static_cast<ssize_t>(line.size())) {
    return absl::InternalError(
        absl::StrFormat("delivery result file: write returned %d: %s", n,
                        std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace strand::tpcc
