// One instance of a type per process, fork() included.
#pragma once

#include <unistd.h>

#include <atomic>

namespace matchflow::detail {

/// The calling process's T, made on first use, and made afresh in a child
/// of fork(): the child's copy of its parent's may hold a lock taken by a
/// thread the child does not have.  Never destroyed (threads and arrays may
/// still use it at exit); a parent's copy is left to the child's heap.
template <class T>
T& per_process() {
  struct entry {
    pid_t pid = ::getpid();
    T value;
  };
  static std::atomic<entry*> current{nullptr};
  entry* e = current.load();
  while (e == nullptr || e->pid != ::getpid()) {
    auto* fresh = new entry;
    if (current.compare_exchange_strong(e, fresh)) return fresh->value;
    delete fresh;  // another thread installed one: use it (e was reloaded)
  }
  return e->value;
}

}  // namespace matchflow::detail
