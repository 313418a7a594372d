// Where a crash happened, for machines without gdb: loaded into the test
// process by gpu_run.sh's sanitize-tests part, it prints the faulting
// instruction and every word of the stack that points into a loaded module's
// code (return addresses, and some stale ones), each as "module +offset
// symbol" (the part then runs addr2line on matchflow's), and re-raises the
// signal.  It does not unwind: libgcc's unwinder itself crashed in that
// process (the frames compute-sanitizer adds have no unwind tables).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

static void say(const char* text, int len) {
  if (len > 0 && write(2, text, (size_t)len) < 0) _exit(99);
}

/// "  #label module +offset symbol" when p is in a loaded module.
static void frame(const char* label, uintptr_t p) {
  Dl_info d;
  char line[768];
  if (!dladdr((void*)p, &d) || !d.dli_fname || !d.dli_fbase) return;
  say(line, snprintf(line, sizeof line, "  #%s %s +0x%lx %s\n", label, d.dli_fname,
                     (unsigned long)(p - (uintptr_t)d.dli_fbase), d.dli_sname ? d.dli_sname : "?"));
}

static void on_crash(int sig, siginfo_t* info, void* context) {
  const ucontext_t* uc = (const ucontext_t*)context;
  const uintptr_t ip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
  const uintptr_t* sp = (const uintptr_t*)uc->uc_mcontext.gregs[REG_RSP];
  char line[256];
  say(line, snprintf(line, sizeof line, "native stack of signal %d at %p (ip %p, sp %p):\n", sig,
                     info->si_addr, (void*)ip, (const void*)sp));
  frame("ip", ip);
  for (int i = 0; i < 2048; ++i) {  // 16 KiB of the stack
    char label[16];
    snprintf(label, sizeof label, "sp+%d", i);
    frame(label, sp[i]);
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

/// The handler's own stack: a stack overflow leaves none to run it on.
static char handler_stack[1 << 16];

__attribute__((constructor)) static void install(void) {
  stack_t alt = {.ss_sp = handler_stack, .ss_size = sizeof handler_stack, .ss_flags = 0};
  sigaltstack(&alt, NULL);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_crash;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigaction(SIGSEGV, &sa, NULL);
  sigaction(SIGBUS, &sa, NULL);
}
