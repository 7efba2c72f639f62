#ifndef STRAND_TPCC_DELIVERY_RESULT_FILE_H_
#define STRAND_TPCC_DELIVERY_RESULT_FILE_H_

// The result file of deferred Deliveries (clause 2.7.2.2, `tpcc
// --delivery_results=FILE`, tpcc/deferred_delivery.h): one line per
// executed Delivery, with when it was queued and completed (UTC, in
// microseconds), its warehouse and carrier, and per district the order
// delivered or "-" for a district skipped for lack of an undelivered order
// (clause 2.7.4.2), e.g.
//   queued=2026-11-23T17:00:00.123456Z completed=2026-11-23T17:00:00.124001Z
//   w=1 carrier=7 skipped=1 districts=1:2101,2:2101,3:-,...,10:2099
// (one line). Each line is one write(2) (base/append_only_file.h), so
// Append is thread-safe and lines never interleave.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "base/append_only_file.h"
#include "tpcc/deferred_delivery.h"
#include "tpcc/delivery.h"

namespace strand::tpcc {

class DeliveryResultFile {
 public:
  // Creates `path` or appends to it.
  static absl::StatusOr<std::unique_ptr<DeliveryResultFile>> Open(
      const std::string& path);

  absl::Status Append(const QueuedDelivery& delivery,
                      const DeliveryOutput& result, absl::Time completed);

  // The line Append writes, with its '\n'.
  static std::string Line(const QueuedDelivery& delivery,
                          const DeliveryOutput& result, absl::Time completed);

 private:
  explicit DeliveryResultFile(std::unique_ptr<AppendOnlyFile> file)
      : file_(std::move(file)) {}
  std::unique_ptr<AppendOnlyFile> file_;
};

}  // namespace strand::tpcc

#endif  // STRAND_TPCC_DELIVERY_RESULT_FILE_H_
