/* SPDX-License-Identifier: MIT */
/*
 * sleep SECONDS — sleep for SECONDS (a decimal, e.g. 0.25), measured by nanosleep.  A real
 * program rather than a shell built-in, so Ctrl-C at the shell (SIGINT to the foreground
 * program) can end it.
 */
#include "zt.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    char *end;
    double seconds;

    if (argc != 2) {
        fprintf(stderr, "usage: sleep SECONDS\n");
        return 2;
    }
    seconds = strtod(argv[1], &end);
    if (end == argv[1] || *end != '\0' || seconds < 0 || seconds > 1e9) {
        fprintf(stderr, "sleep: bad number of seconds: %s\n", argv[1]);
        return 2;
    }
    zt_sleep_ns((uint64_t)(seconds * 1e9));
    return 0;
}
