#include "cc/selcc/latch_scan.h"

#include <algorithm>
#include <vector>

#include "cc/selcc/latch_word.h"
#include "rdma/batch.h"
#include "rdma/memory_node_layout.h"

namespace strand::cc::selcc {
namespace {

bool Skipped(rdma::GlobalAddress at, absl::Span<const SkipRange> skip) {
  for (const SkipRange& r : skip) {
    if (r.start.node() == at.node() && at.offset() >= r.start.offset() &&
        at.offset() < r.start.offset() + r.bytes) {
      return true;
    }
  }
  return false;
}

// The part of `word` that is `node`'s.
uint64_t PartOf(uint64_t word, int node) {
  uint64_t part = 0;
  if (LatchWord::Holder(word) == node) part += LatchWord::Exclusive(node);
  if (LatchWord::HasReader(word, node)) part += LatchWord::Reader(node);
  return part;
}

// Takes `node`'s part out of the word at `gcl`, last seen as `word`.
absl::Status Clear(rdma::Endpoint& endpoint, rdma::GlobalAddress gcl,
                   uint64_t word, int node, LatchScanResult& result) {
  for (uint64_t part = PartOf(word, node); part != 0;
       part = PartOf(word, node)) {
    absl::StatusOr<uint64_t> old =
        endpoint.CompareAndSwap(gcl, word, word - part);
    if (!old.ok()) return old.status();
    if (*old == word) {
      if (LatchWord::Holder(word) == node) ++result.holder_fields;
      if (LatchWord::HasReader(word, node)) ++result.reader_bits;
      return absl::OkStatus();
    }
    word = *old;  // a survivor changed it (or stole the part) meanwhile
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<LatchScanResult> ClearNodeFromLatchWords(
    rdma::Endpoint& endpoint, rdma::Fabric& fabric, int node, uint32_t gcl_size,
    absl::Span<const SkipRange> skip) {
  LatchScanResult result;
  const uint64_t chunk = fabric.chunk_bytes();
  const uint64_t region = fabric.memory_node_bytes();
  std::vector<rdma::GlobalAddress> lines;
  std::vector<uint64_t> words;
  lines.reserve(kWordsPerBatch);
  words.resize(kWordsPerBatch);
  auto flush = [&]() -> absl::Status {
    if (lines.empty()) return absl::OkStatus();
    rdma::Batch batch;
    for (size_t i = 0; i < lines.size(); ++i) {
      batch.Read(lines[i], &words[i], 8);
    }
    if (absl::Status s = endpoint.Execute(batch); !s.ok()) return s;
    result.lines += lines.size();
    for (size_t i = 0; i < lines.size(); ++i) {
      if (PartOf(words[i], node) == 0) continue;
      if (absl::Status s = Clear(endpoint, lines[i], words[i], node, result);
          !s.ok()) {
        return s;
      }
    }
    lines.clear();
    return absl::OkStatus();
  };
  for (int mn = 0; mn < fabric.memory_node_count(); ++mn) {
    const auto m = static_cast<rdma::MemoryNodeId>(mn);
    absl::StatusOr<uint64_t> next = endpoint.FetchAndAdd(
        rdma::GlobalAddress(m, rdma::kNextChunkWordOffset), 0);
    if (!next.ok()) return next.status();
    const uint64_t end = std::min(*next, region);
    for (uint64_t c = rdma::kFirstChunkOffset; c + chunk <= end; c += chunk) {
      for (uint64_t at = c; at + gcl_size <= c + chunk; at += gcl_size) {
        // By line, not by chunk: a skipped range need not be whole chunks.
        if (Skipped(rdma::GlobalAddress(m, at), skip)) continue;
        lines.push_back(rdma::GlobalAddress(m, at));
        if (lines.size() == kWordsPerBatch) {
          if (absl::Status s = flush(); !s.ok()) return s;
        }
      }
    }
  }
  if (absl::Status s = flush(); !s.ok()) return s;
  return result;
}

}  // namespace strand::cc::selcc
