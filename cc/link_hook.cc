#include "cc/link_hook.h"

#include <atomic>

namespace strand::cc {
namespace {

std::atomic<LinkHook> link_hook{nullptr};

}  // namespace

void SetLinkHookForTesting(LinkHook hook) {
  link_hook.store(hook, std::memory_order_release);
}

void BeforeLink(const GclManager& manager, LinkStep step) {
  const LinkHook hook = link_hook.load(std::memory_order_acquire);
  if (hook != nullptr) hook(manager.node_id(), step);
}

}  // namespace strand::cc
