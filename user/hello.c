/* SPDX-License-Identifier: MIT */
/*
 * hello — prints its arguments, one per line, and exits with argv[1] as its status when
 * that is a number (so tests can check that statuses travel back: `hello 3` exits with 3).
 */
#include "zt.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    char *end;
    long status = 0;

    printf("hello from pid %ld:", zt_getpid());
    for (int i = 0; i < argc; i++) {
        printf(" argv[%d]=%s", i, argv[i]);
    }
    printf("\n");
    if (argc > 1) {
        status = strtol(argv[1], &end, 10);
        if (*argv[1] == '\0' || *end != '\0') {
            status = 0;
        }
    }
    return (int)status;
}
