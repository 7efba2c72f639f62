# -DSTRAND_SANITIZE=thread: tell TSan what abseil's synchronization does
# (tsan_absl_sync.cc says why). Every target created after this links the
# wrappers (an object library: a link needs them even where only abseil's
# own shared libraries call the wrapped functions), and every link wraps
# strand's calls into abseil.
add_library(strand_tsan_absl_sync OBJECT
            ${CMAKE_CURRENT_LIST_DIR}/tsan_absl_sync.cc)
target_link_libraries(strand_tsan_absl_sync PUBLIC absl::synchronization)
set(STRAND_TSAN_WRAPPED
    _ZN4absl7debian35Mutex4LockEv
    _ZN4absl7debian35Mutex6UnlockEv
    _ZN4absl7debian35Mutex7TryLockEv
    _ZN4absl7debian35Mutex10ReaderLockEv
    _ZN4absl7debian35Mutex12ReaderUnlockEv
    _ZN4absl7debian35Mutex13ReaderTryLockEv
    _ZN4absl7debian35Mutex8LockWhenERKNS0_9ConditionE
    _ZN4absl7debian35Mutex14ReaderLockWhenERKNS0_9ConditionE
    _ZN4absl7debian35Mutex19LockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE
    _ZN4absl7debian35Mutex20LockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE
    _ZN4absl7debian35Mutex5AwaitERKNS0_9ConditionE
    _ZN4absl7debian35Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE
    _ZN4absl7debian35Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE
    _ZN4absl7debian37CondVar4WaitEPNS0_5MutexE
    _ZN4absl7debian37CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE
    _ZN4absl7debian37CondVar16WaitWithDeadlineEPNS0_5MutexENS0_4TimeE
    _ZN4absl7debian319ReleasableMutexLock7ReleaseEv
    _ZN4absl7debian312Notification6NotifyEv
    _ZNK4absl7debian312Notification19WaitForNotificationEv
    _ZNK4absl7debian312Notification30WaitForNotificationWithTimeoutENS0_8DurationE
    _ZNK4absl7debian312Notification31WaitForNotificationWithDeadlineENS0_4TimeE
    _ZN4absl7debian312Notification23HasBeenNotifiedInternalEPKSt6atomicIbE)
foreach(symbol IN LISTS STRAND_TSAN_WRAPPED)
  add_link_options("LINKER:--wrap=${symbol}")
endforeach()
link_libraries(strand_tsan_absl_sync)
