#include "engine/crashable_log_files.h"

#include "absl/strings/str_format.h"

namespace strand::engine {
namespace {

absl::Status Crashed(const std::string& path) {
  return absl::UnavailableError(absl::StrFormat(
      "%s: the compute node was failed (injected): its log stopped", path));
}

}  // namespace

class CrashableLogFiles::File : public wal::LogFile {
 public:
  File(std::unique_ptr<wal::LogFile> file,
       std::shared_ptr<std::atomic<bool>> crashed)
      : file_(std::move(file)), crashed_(std::move(crashed)) {}

  absl::Status WriteAndSync(std::span<const wal::LogWrite> writes) override {
    if (crashed_->load(std::memory_order_seq_cst)) return Crashed(path());
    return file_->WriteAndSync(writes);
  }
  const std::string& path() const override { return file_->path(); }

 private:
  const std::unique_ptr<wal::LogFile> file_;
  const std::shared_ptr<std::atomic<bool>> crashed_;
};

absl::StatusOr<std::unique_ptr<wal::LogFile>> CrashableLogFiles::Create(
    const std::string& path, const wal::LogFileOptions& options) {
  if (crashed_->load(std::memory_order_seq_cst)) return Crashed(path);
  absl::StatusOr<std::unique_ptr<wal::LogFile>> file =
      base_->Create(path, options);
  if (!file.ok()) return file.status();
  return std::unique_ptr<wal::LogFile>(new File(*std::move(file), crashed_));
}

}  // namespace strand::engine
