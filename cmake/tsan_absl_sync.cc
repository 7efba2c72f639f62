// ThreadSanitizer builds only (cmake/Sanitizers: -DSTRAND_SANITIZE=thread).
//
// Debian's abseil is not compiled with TSan, so its synchronization
// primitives are invisible to it: every hand-off under an absl::Mutex, an
// absl::CondVar or an absl::Notification looked like a data race, and the
// suites needed suppressions that hid real races in the same code. The
// link wraps (-Wl,--wrap) the calls strand's objects make into abseil's
// shared library and tells TSan what each one means for happens-before:
// releasing (or waiting on) a mutex releases it, acquiring it acquires it,
// on the mutex's address as the synchronization object; a Notification is
// released by Notify and acquired by a wait that saw it. Calls abseil
// makes to itself (inside its .so) are not wrapped, which is why every
// entry point that releases and reacquires internally (Await, CondVar
// waits, ReleasableMutexLock::Release) is wrapped itself.

#include <sanitizer/tsan_interface.h>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace {

using absl::CondVar;
using absl::Condition;
using absl::Duration;
using absl::Mutex;
using absl::Notification;
using absl::Time;

void Acquire(const void* object) {
  __tsan_acquire(const_cast<void*>(object));
}
void Release(const void* object) {
  __tsan_release(const_cast<void*>(object));
}

// An absl::Notification is one Mutex followed by its atomic flag: the
// flag's address names it in every annotation (HasBeenNotified only gets
// that one).
static_assert(sizeof(Notification) <= 2 * sizeof(Mutex) + 8);
const void* FlagOf(const Notification* n) {
  return reinterpret_cast<const char*>(n) + sizeof(Mutex);
}

}  // namespace

// The real entry points (the linker's __real_ names).
#define REAL(ret, symbol, ...) extern "C" ret __real_##symbol(__VA_ARGS__)
REAL(void, _ZN4absl7debian35Mutex4LockEv, Mutex*);
REAL(void, _ZN4absl7debian35Mutex6UnlockEv, Mutex*);
REAL(bool, _ZN4absl7debian35Mutex7TryLockEv, Mutex*);
REAL(void, _ZN4absl7debian35Mutex10ReaderLockEv, Mutex*);
REAL(void, _ZN4absl7debian35Mutex12ReaderUnlockEv, Mutex*);
REAL(bool, _ZN4absl7debian35Mutex13ReaderTryLockEv, Mutex*);
REAL(void, _ZN4absl7debian35Mutex8LockWhenERKNS0_9ConditionE, Mutex*,
     const Condition&);
REAL(void, _ZN4absl7debian35Mutex14ReaderLockWhenERKNS0_9ConditionE, Mutex*,
     const Condition&);
REAL(bool, _ZN4absl7debian35Mutex19LockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE,
     Mutex*, const Condition&, Duration);
REAL(bool, _ZN4absl7debian35Mutex20LockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE,
     Mutex*, const Condition&, Time);
REAL(void, _ZN4absl7debian35Mutex5AwaitERKNS0_9ConditionE, Mutex*,
     const Condition&);
REAL(bool, _ZN4absl7debian35Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE,
     Mutex*, const Condition&, Duration);
REAL(bool, _ZN4absl7debian35Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE,
     Mutex*, const Condition&, Time);
REAL(void, _ZN4absl7debian37CondVar4WaitEPNS0_5MutexE, CondVar*, Mutex*);
REAL(bool, _ZN4absl7debian37CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE,
     CondVar*, Mutex*, Duration);
REAL(bool, _ZN4absl7debian37CondVar16WaitWithDeadlineEPNS0_5MutexENS0_4TimeE,
     CondVar*, Mutex*, Time);
REAL(void, _ZN4absl7debian319ReleasableMutexLock7ReleaseEv, Mutex**);
REAL(void, _ZN4absl7debian312Notification6NotifyEv, Notification*);
REAL(void, _ZNK4absl7debian312Notification19WaitForNotificationEv,
     const Notification*);
REAL(bool, _ZNK4absl7debian312Notification30WaitForNotificationWithTimeoutENS0_8DurationE,
     const Notification*, Duration);
REAL(bool, _ZNK4absl7debian312Notification31WaitForNotificationWithDeadlineENS0_4TimeE,
     const Notification*, Time);
REAL(bool, _ZN4absl7debian312Notification23HasBeenNotifiedInternalEPKSt6atomicIbE,
     const std::atomic<bool>*);
#undef REAL

extern "C" {

void __wrap__ZN4absl7debian35Mutex4LockEv(Mutex* mu) {
  __real__ZN4absl7debian35Mutex4LockEv(mu);
  Acquire(mu);
}
void __wrap__ZN4absl7debian35Mutex6UnlockEv(Mutex* mu) {
  Release(mu);
  __real__ZN4absl7debian35Mutex6UnlockEv(mu);
}
bool __wrap__ZN4absl7debian35Mutex7TryLockEv(Mutex* mu) {
  const bool locked = __real__ZN4absl7debian35Mutex7TryLockEv(mu);
  if (locked) Acquire(mu);
  return locked;
}
void __wrap__ZN4absl7debian35Mutex10ReaderLockEv(Mutex* mu) {
  __real__ZN4absl7debian35Mutex10ReaderLockEv(mu);
  Acquire(mu);
}
void __wrap__ZN4absl7debian35Mutex12ReaderUnlockEv(Mutex* mu) {
  Release(mu);
  __real__ZN4absl7debian35Mutex12ReaderUnlockEv(mu);
}
bool __wrap__ZN4absl7debian35Mutex13ReaderTryLockEv(Mutex* mu) {
  const bool locked = __real__ZN4absl7debian35Mutex13ReaderTryLockEv(mu);
  if (locked) Acquire(mu);
  return locked;
}
void __wrap__ZN4absl7debian35Mutex8LockWhenERKNS0_9ConditionE(
    Mutex* mu, const Condition& c) {
  __real__ZN4absl7debian35Mutex8LockWhenERKNS0_9ConditionE(mu, c);
  Acquire(mu);
}
void __wrap__ZN4absl7debian35Mutex14ReaderLockWhenERKNS0_9ConditionE(
    Mutex* mu, const Condition& c) {
  __real__ZN4absl7debian35Mutex14ReaderLockWhenERKNS0_9ConditionE(mu, c);
  Acquire(mu);
}
bool __wrap__ZN4absl7debian35Mutex19LockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE(
    Mutex* mu, const Condition& c, Duration d) {
  const bool met =
      __real__ZN4absl7debian35Mutex19LockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE(
          mu, c, d);
  Acquire(mu);
  return met;
}
bool __wrap__ZN4absl7debian35Mutex20LockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE(
    Mutex* mu, const Condition& c, Time t) {
  const bool met =
      __real__ZN4absl7debian35Mutex20LockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE(
          mu, c, t);
  Acquire(mu);
  return met;
}
void __wrap__ZN4absl7debian35Mutex5AwaitERKNS0_9ConditionE(
    Mutex* mu, const Condition& c) {
  Release(mu);
  __real__ZN4absl7debian35Mutex5AwaitERKNS0_9ConditionE(mu, c);
  Acquire(mu);
}
bool __wrap__ZN4absl7debian35Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE(
    Mutex* mu, const Condition& c, Duration d) {
  Release(mu);
  const bool met =
      __real__ZN4absl7debian35Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE(
          mu, c, d);
  Acquire(mu);
  return met;
}
bool __wrap__ZN4absl7debian35Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE(
    Mutex* mu, const Condition& c, Time t) {
  Release(mu);
  const bool met =
      __real__ZN4absl7debian35Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE(
          mu, c, t);
  Acquire(mu);
  return met;
}
void __wrap__ZN4absl7debian37CondVar4WaitEPNS0_5MutexE(CondVar* cv,
                                                        Mutex* mu) {
  Release(mu);
  __real__ZN4absl7debian37CondVar4WaitEPNS0_5MutexE(cv, mu);
  Acquire(mu);
}
bool __wrap__ZN4absl7debian37CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE(
    CondVar* cv, Mutex* mu, Duration d) {
  Release(mu);
  const bool timed_out =
      __real__ZN4absl7debian37CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE(
          cv, mu, d);
  Acquire(mu);
  return timed_out;
}
bool __wrap__ZN4absl7debian37CondVar16WaitWithDeadlineEPNS0_5MutexENS0_4TimeE(
    CondVar* cv, Mutex* mu, Time t) {
  Release(mu);
  const bool timed_out =
      __real__ZN4absl7debian37CondVar16WaitWithDeadlineEPNS0_5MutexENS0_4TimeE(
          cv, mu, t);
  Acquire(mu);
  return timed_out;
}
// ReleasableMutexLock holds just its Mutex*.
void __wrap__ZN4absl7debian319ReleasableMutexLock7ReleaseEv(Mutex** lock) {
  Release(*lock);
  __real__ZN4absl7debian319ReleasableMutexLock7ReleaseEv(lock);
}
void __wrap__ZN4absl7debian312Notification6NotifyEv(Notification* n) {
  Release(FlagOf(n));
  __real__ZN4absl7debian312Notification6NotifyEv(n);
}
void __wrap__ZNK4absl7debian312Notification19WaitForNotificationEv(
    const Notification* n) {
  __real__ZNK4absl7debian312Notification19WaitForNotificationEv(n);
  Acquire(FlagOf(n));
}
bool __wrap__ZNK4absl7debian312Notification30WaitForNotificationWithTimeoutENS0_8DurationE(
    const Notification* n, Duration d) {
  const bool notified =
      __real__ZNK4absl7debian312Notification30WaitForNotificationWithTimeoutENS0_8DurationE(
          n, d);
  if (notified) Acquire(FlagOf(n));
  return notified;
}
bool __wrap__ZNK4absl7debian312Notification31WaitForNotificationWithDeadlineENS0_4TimeE(
    const Notification* n, Time t) {
  const bool notified =
      __real__ZNK4absl7debian312Notification31WaitForNotificationWithDeadlineENS0_4TimeE(
          n, t);
  if (notified) Acquire(FlagOf(n));
  return notified;
}
bool __wrap__ZN4absl7debian312Notification23HasBeenNotifiedInternalEPKSt6atomicIbE(
    const std::atomic<bool>* flag) {
  const bool notified =
      __real__ZN4absl7debian312Notification23HasBeenNotifiedInternalEPKSt6atomicIbE(
          flag);
  if (notified) Acquire(flag);
  return notified;
}

}  // extern "C"
