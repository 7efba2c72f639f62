#include "engine/crash_point.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <string>

#include "absl/strings/numbers.h"

namespace strand::engine {
namespace {

struct Target {
  std::string name;  // empty: no crash point armed
  int64_t occurrence = 1;
};

const Target& Armed() {
  static const Target* target = [] {
    auto* t = new Target;
    const char* env = std::getenv("STRAND_CRASH_AT");
    if (env == nullptr) return t;
    std::string spec(env);
    const size_t at = spec.find('@');
    if (at != std::string::npos) {
      int64_t n = 1;
      if (absl::SimpleAtoi(spec.substr(at + 1), &n) && n > 0) {
        t->occurrence = n;
      }
      spec.resize(at);
    }
    t->name = spec;
    return t;
  }();
  return *target;
}

std::atomic<int64_t> reached{0};

}  // namespace

void CrashPoint(std::string_view name) {
  const Target& target = Armed();
  if (target.name.empty() || target.name != name) return;
  if (reached.fetch_add(1) + 1 == target.occurrence) {
    ::kill(::getpid(), SIGKILL);
    ::pause();
  }
}

}  // namespace strand::engine
