// The native stack of a crash, for machines without gdb: loaded into the test
// process by gpu_run.sh's sanitize-tests part, it prints each frame of a
// SIGSEGV or SIGBUS as "module +offset symbol" (the part then runs addr2line on
// matchflow's frames) and re-raises the signal.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void say(const char* text, int len) {
  if (len > 0 && write(2, text, (size_t)len) < 0) _exit(99);
}

static void on_crash(int sig, siginfo_t* info, void* context) {
  (void)context;
  void* frames[64];
  char line[768];
  const int n = backtrace(frames, 64);
  say(line, snprintf(line, sizeof line, "native stack of signal %d at %p:\n", sig, info->si_addr));
  for (int i = 0; i < n; ++i) {
    Dl_info d;
    if (dladdr(frames[i], &d) && d.dli_fname) {
      const unsigned long offset = (unsigned long)((char*)frames[i] - (char*)d.dli_fbase);
      say(line, snprintf(line, sizeof line, "  #%d %s +0x%lx %s\n", i, d.dli_fname, offset,
                         d.dli_sname ? d.dli_sname : "?"));
    } else {
      say(line, snprintf(line, sizeof line, "  #%d %p\n", i, frames[i]));
    }
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

__attribute__((constructor)) static void install(void) {
  void* warm[1];
  backtrace(warm, 1);  // loads libgcc's unwinder now, not inside the handler
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_crash;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGSEGV, &sa, NULL);
  sigaction(SIGBUS, &sa, NULL);
}
