#include "rdma/counters.h"

#include "absl/strings/str_format.h"

namespace strand::rdma {

#define STRAND_ONE(f) +1
static_assert(sizeof(FabricCounters) ==
                  (0 STRAND_FABRIC_COUNTERS_FIELDS(STRAND_ONE)) *
                      sizeof(uint64_t),
              "a FabricCounters counter is missing from "
              "STRAND_FABRIC_COUNTERS_FIELDS");
#undef STRAND_ONE

FabricCounters& FabricCounters::operator+=(const FabricCounters& o) {
#define STRAND_ADD(f) f += o.f;
  STRAND_FABRIC_COUNTERS_FIELDS(STRAND_ADD)
#undef STRAND_ADD
  return *this;
}

FabricCounters& FabricCounters::operator-=(const FabricCounters& o) {
#define STRAND_SUB(f) f -= o.f;
  STRAND_FABRIC_COUNTERS_FIELDS(STRAND_SUB)
#undef STRAND_SUB
  return *this;
}

std::string FabricCounters::ToString() const {
  std::string out;
#define STRAND_PRINT(f) \
  absl::StrAppendFormat(&out, "%s%s=%d", out.empty() ? "" : " ", #f, f);
  STRAND_FABRIC_COUNTERS_FIELDS(STRAND_PRINT)
#undef STRAND_PRINT
  return out;
}

FabricCounters EndpointCounters::Snapshot() const {
  auto get = [](const std::atomic<uint64_t>& c) {
    return c.load(std::memory_order_relaxed);
  };
  FabricCounters c;
  c.round_trips = get(round_trips_);
  c.reads = get(reads_);
  c.writes = get(writes_);
  c.cas = get(cas_);
  c.faa = get(faa_);
  c.peer_writes = get(peer_writes_);
  c.bytes_read = get(bytes_read_);
  c.bytes_written = get(bytes_written_);
  c.messages_sent = get(messages_sent_);
  c.messages_received = get(messages_received_);
  return c;
}

std::shared_ptr<EndpointCounters> CounterRegistry::NewEndpointCounters() {
  auto counters = std::make_shared<EndpointCounters>();
  absl::MutexLock lock(&mu_);
  all_.push_back(counters);
  return counters;
}

FabricCounters CounterRegistry::Sum() const {
  FabricCounters sum;
  absl::MutexLock lock(&mu_);
  for (const auto& c : all_) sum += c->Snapshot();
  return sum;
}

}  // namespace strand::rdma
