#ifndef NOTIFICATION_DISPATCHER_CALLGRIND_ZERO_H
#define NOTIFICATION_DISPATCHER_CALLGRIND_ZERO_H

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define ND_HAS_CALLGRIND 1
#endif
#endif

/* Zeroes callgrind's counters when the process runs under it; does nothing otherwise. */
static inline void nd_callgrind_zero_stats(void) {
#ifdef ND_HAS_CALLGRIND
    CALLGRIND_ZERO_STATS;
#endif
}

#endif
