/*
 * sigsuspend-copy: a sigsuspend(2) that hands the kernel a copy of its mask, preloaded into `serve`
 * when `bench counts` runs it under valgrind (LD_PRELOAD).
 *
 * Why: a Swift program whose main is async parks its main thread in dispatch_main(), and
 * libdispatch then calls sigsuspend() with a mask in read-only memory. Valgrind's wrapper of the
 * system call (3.19 as Debian 12 ships it, and 3.24 alike) removes its own signal from that mask
 * in place, faults on the write, and gives up ("the 'impossible' happened", SIGSEGV in
 * vgPlain_sigdelset). With the mask copied to the stack first, valgrind edits the copy. The call
 * does what sigsuspend does; only the mask's address differs.
 *
 * Build: cc -O2 -shared -fPIC -o sigsuspend-copy.so sigsuspend-copy.c (bench counts does this).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

int sigsuspend(const sigset_t *mask) {
        sigset_t copy = *mask;
        return (int)syscall(SYS_rt_sigsuspend, &copy, (size_t)(_NSIG / 8));
}
