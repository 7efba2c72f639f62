#ifndef STRAND_ENGINE_CRASHABLE_LOG_FILES_H_
#define STRAND_ENGINE_CRASHABLE_LOG_FILES_H_

// Failure injection for one compute node's log (Engine::FailNode): the
// segment files this factory makes stop reaching the disk once Crash is
// called, as the log of a process that died: what a flush under way
// writes still lands (it was durable before the crash), nothing after it
// does, and the writer fails instead of acknowledging. Restart lets a
// rejoining node's new writer use the files again. Internal to engine/.

#include <atomic>
#include <memory>
#include <string>

#include "wal/log_file.h"

namespace strand::engine {

class CrashableLogFiles : public wal::LogFileFactory {
 public:
  explicit CrashableLogFiles(wal::LogFileFactory* base) : base_(base) {}

  absl::StatusOr<std::unique_ptr<wal::LogFile>> Create(
      const std::string& path, const wal::LogFileOptions& options) override;

  void Crash() { crashed_->store(true, std::memory_order_seq_cst); }
  void Restart() { crashed_->store(false, std::memory_order_seq_cst); }

 private:
  class File;
  wal::LogFileFactory* const base_;
  const std::shared_ptr<std::atomic<bool>> crashed_ =
      std::make_shared<std::atomic<bool>>(false);
};

}  // namespace strand::engine

#endif  // STRAND_ENGINE_CRASHABLE_LOG_FILES_H_
