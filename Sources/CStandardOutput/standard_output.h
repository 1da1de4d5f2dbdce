#ifndef STANDARD_OUTPUT_H
#define STANDARD_OUTPUT_H

#include <stdio.h>

/// Makes standard output line-buffered, whatever it is connected to: each line reaches a pipe as
/// it is printed. Call before anything is written to it.
static inline void standard_output_line_buffered(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
}

#endif
