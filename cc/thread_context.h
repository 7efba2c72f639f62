#ifndef STRAND_CC_THREAD_CONTEXT_H_
#define STRAND_CC_THREAD_CONTEXT_H_

// What one thread brings to every call of a GclManager (gcl_manager.h): its
// fabric endpoint, the protocol's per-thread state, and the per-thread
// state of the layers above, which reach it through the context every call
// carries instead of through thread_local globals:
//
//   struct LeafHints { ... };               // index/'s, say
//   LeafHints& hints = ctx.Local<LeafHints>();
//
// A Local<T> is created (value-initialized) on the context's first call
// for T and destroyed with the context, so two contexts on one thread (two
// engines, a test's two nodes) never share it, and nothing of it outlives
// the context. Access costs a guarded static load and an indexed load.
//
// Threading: a context belongs to one thread at a time, and so does all of
// its state.

#include <array>
#include <cstddef>

#include "absl/base/optimization.h"
#include "rdma/fabric.h"

namespace strand::cc {

class ThreadContext {
 public:
  // Distinct Local<T> types a process may use; CHECKed.
  static constexpr size_t kMaxLocals = 8;

  ThreadContext(const ThreadContext&) = delete;
  ThreadContext& operator=(const ThreadContext&) = delete;
  virtual ~ThreadContext();

  virtual rdma::Endpoint& endpoint() = 0;

  // The context's T (default-constructible), created on first use.
  template <typename T>
  T& Local() {
    LocalState& local = locals_[SlotOf<T>()];
    if (ABSL_PREDICT_FALSE(local.state == nullptr)) {
      local.state = new T();
      local.destroy = [](void* p) { delete static_cast<T*>(p); };
    }
    return *static_cast<T*>(local.state);
  }

  // The manager that made the context (GclManager::NewThreadContext), so a
  // manager recognizes its own contexts with one comparison.
  const void* owner() const { return owner_; }

 protected:
  explicit ThreadContext(const void* owner) : owner_(owner) {}

 private:
  struct LocalState {
    void* state = nullptr;
    void (*destroy)(void*) = nullptr;
  };
  // A slot per type, numbered in the order types are first used.
  static size_t NewSlot();
  template <typename T>
  static size_t SlotOf() {
    static const size_t slot = NewSlot();
    return slot;
  }

  const void* const owner_;
  std::array<LocalState, kMaxLocals> locals_;
};

}  // namespace strand::cc

#endif  // STRAND_CC_THREAD_CONTEXT_H_
