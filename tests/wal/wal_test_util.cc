#include "tests/wal/wal_test_util.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "gtest/gtest.h"

namespace strand::wal::testing {

TempDir::TempDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern =
      std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
      "/strand-wal-test-XXXXXX";
  char* made = ::mkdtemp(pattern.data());
  EXPECT_NE(made, nullptr) << "mkdtemp " << pattern;
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void WriteFile(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  EXPECT_TRUE(out.good()) << "cannot write " << path;
}

std::vector<LogRecord> ReadAll(const std::string& node_dir,
                               uint64_t database_id,
                               std::vector<std::string>* payloads,
                               LogReaderStats* stats) {
  std::vector<LogRecord> records;
  auto reader = LogReader::Open(node_dir, database_id);
  EXPECT_TRUE(reader.ok()) << reader.status();
  if (!reader.ok()) return records;
  LogRecord r;
  for (;;) {
    absl::StatusOr<bool> more = (*reader)->Next(&r);
    EXPECT_TRUE(more.ok()) << more.status();
    if (!more.ok() || !*more) break;
    if (payloads != nullptr) payloads->emplace_back(r.payload);
    r.payload = {};
    records.push_back(r);
  }
  if (stats != nullptr) *stats = (*reader)->stats();
  return records;
}

class FaultInjectingLogFileFactory::File : public LogFile {
 public:
  File(FaultInjectingLogFileFactory* factory, std::unique_ptr<LogFile> inner,
       uint64_t segment_index)
      : factory_(factory),
        inner_(std::move(inner)),
        segment_index_(segment_index) {}

  absl::Status WriteAndSync(std::span<const LogWrite> writes) override {
    bool fail = false;
    Fault fault;
    absl::Duration delay;
    bool reverse = false;
    {
      absl::MutexLock lock(&factory_->mu_);
      auto held = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(factory_->mu_) {
        for (const std::string& part : factory_->held_) {
          if (inner_->path().find(part) != std::string::npos) return true;
        }
        return false;
      };
      while (held()) {
        ++factory_->held_writes_;
        factory_->released_.Wait(&factory_->mu_);
        --factory_->held_writes_;
      }
      const int64_t call = ++factory_->calls_;
      fail = factory_->fail_from_ > 0 && call >= factory_->fail_from_;
      fault = factory_->fault_;
      delay = factory_->sync_delay_;
      reverse = factory_->reverse_writes_;
    }
    if (fail && fault == Fault::kWrite) {
      return absl::InternalError("injected write failure");
    }
    if (reverse) {
      for (size_t i = writes.size(); i-- > 0;) {
        if (absl::Status s = inner_->WriteAndSync(writes.subspan(i, 1));
            !s.ok()) {
          return s;
        }
      }
    } else if (absl::Status s = inner_->WriteAndSync(writes); !s.ok()) {
      return s;
    }
    if (fail) return absl::InternalError("injected fdatasync failure");
    absl::SleepFor(delay);
    uint64_t end = 0;
    for (const LogWrite& w : writes) end = std::max(end, w.offset + w.size);
    absl::MutexLock lock(&factory_->mu_);
    factory_->durable_ =
        std::max(factory_->durable_, LogPosition{segment_index_, end});
    return absl::OkStatus();
  }

  const std::string& path() const override { return inner_->path(); }

 private:
  FaultInjectingLogFileFactory* const factory_;
  std::unique_ptr<LogFile> inner_;
  const uint64_t segment_index_;
};

void FaultInjectingLogFileFactory::FailFromCall(int64_t call, Fault fault) {
  absl::MutexLock lock(&mu_);
  fail_from_ = call;
  fault_ = fault;
}

void FaultInjectingLogFileFactory::set_sync_delay(absl::Duration delay) {
  absl::MutexLock lock(&mu_);
  sync_delay_ = delay;
}

void FaultInjectingLogFileFactory::set_reverse_writes(bool reverse) {
  absl::MutexLock lock(&mu_);
  reverse_writes_ = reverse;
}

void FaultInjectingLogFileFactory::HoldWrites(const std::string& path_part) {
  absl::MutexLock lock(&mu_);
  held_.push_back(path_part);
}

void FaultInjectingLogFileFactory::ReleaseWrites() {
  absl::MutexLock lock(&mu_);
  held_.clear();
  released_.SignalAll();
}

int FaultInjectingLogFileFactory::held_writes() const {
  absl::MutexLock lock(&mu_);
  return held_writes_;
}

void FaultInjectingLogFileFactory::set_fail_create(bool fail) {
  absl::MutexLock lock(&mu_);
  fail_create_ = fail;
}

LogPosition FaultInjectingLogFileFactory::durable() const {
  absl::MutexLock lock(&mu_);
  return durable_;
}

int64_t FaultInjectingLogFileFactory::calls() const {
  absl::MutexLock lock(&mu_);
  return calls_;
}

absl::StatusOr<std::unique_ptr<LogFile>> FaultInjectingLogFileFactory::Create(
    const std::string& path, const LogFileOptions& options) {
  {
    absl::MutexLock lock(&mu_);
    if (fail_create_) return absl::InternalError("injected create failure");
  }
  const std::string name = std::filesystem::path(path).filename().string();
  uint64_t index = 0;
  EXPECT_TRUE(absl::SimpleAtoi(name.substr(0, 8), &index)) << path;
  auto inner = inner_->Create(path, options);
  if (!inner.ok()) return inner.status();
  return std::unique_ptr<LogFile>(
      std::make_unique<File>(this, *std::move(inner), index));
}

}  // namespace strand::wal::testing
