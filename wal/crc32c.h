#ifndef STRAND_WAL_CRC32C_H_
#define STRAND_WAL_CRC32C_H_

// CRC32C (Castagnoli, polynomial 0x1EDC6F41, reflected), the checksum of
// every log record and segment header. abseil 20220623 has no absl/crc, so
// strand carries its own.
//
// Two implementations give identical results:
//   - SSE4.2 `crc32` instruction, 8 bytes per instruction (~10+ GB/s), used
//     when the CPU reports SSE4.2 at run time (checked once);
//   - table-driven slicing-by-8 (~1-2 GB/s), everywhere else.
// Nothing is compiled with -march: the SSE4.2 code sits in a function with
// __attribute__((target("sse4.2"))) and runs only after the CPUID check, so
// the binary also runs on CPUs (or QEMU TCG) without it.
//
//   uint32_t c = Crc32c("123456789");          // 0xE3069283
//   c = Crc32cExtend(Crc32c(a), b);             // == Crc32c(a + b)

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace strand::wal {

// CRC32C of `data` continuing from the CRC `crc` of the bytes before it.
uint32_t Crc32cExtend(uint32_t crc, const void* data, size_t size);

inline uint32_t Crc32cExtend(uint32_t crc, std::string_view data) {
  return Crc32cExtend(crc, data.data(), data.size());
}
inline uint32_t Crc32c(std::string_view data) { return Crc32cExtend(0, data); }

namespace crc32c_internal {
// The two implementations, exposed so tests can compare them.
uint32_t ExtendPortable(uint32_t crc, const void* data, size_t size);
// Requires HardwareAvailable().
uint32_t ExtendHardware(uint32_t crc, const void* data, size_t size);
bool HardwareAvailable();
}  // namespace crc32c_internal

}  // namespace strand::wal

#endif  // STRAND_WAL_CRC32C_H_
