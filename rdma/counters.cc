#include "rdma/counters.h"

#include "absl/strings/str_format.h"

namespace strand::rdma {

FabricCounters& FabricCounters::operator+=(const FabricCounters& o) {
  round_trips += o.round_trips;
  reads += o.reads;
  writes += o.writes;
  cas += o.cas;
  faa += o.faa;
  peer_writes += o.peer_writes;
  bytes_read += o.bytes_read;
  bytes_written += o.bytes_written;
  messages_sent += o.messages_sent;
  messages_received += o.messages_received;
  return *this;
}

FabricCounters& FabricCounters::operator-=(const FabricCounters& o) {
  round_trips -= o.round_trips;
  reads -= o.reads;
  writes -= o.writes;
  cas -= o.cas;
  faa -= o.faa;
  peer_writes -= o.peer_writes;
  bytes_read -= o.bytes_read;
  bytes_written -= o.bytes_written;
  messages_sent -= o.messages_sent;
  messages_received -= o.messages_received;
  return *this;
}

std::string FabricCounters::ToString() const {
  return absl::StrFormat(
      "round_trips=%d reads=%d writes=%d cas=%d faa=%d peer_writes=%d "
      "bytes_read=%d bytes_written=%d messages_sent=%d messages_received=%d",
      round_trips, reads, writes, cas, faa, peer_writes, bytes_read,
      bytes_written, messages_sent, messages_received);
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
