/* SPDX-License-Identifier: MIT */
/*
 * memhog — run the machine out of memory, then give it all back.
 *
 *   memhog [-r ROUNDS]
 *
 * Maps 1 MiB anonymous regions (populated at once, as all memory here) until the kernel
 * says -ENOMEM, touches nothing more, unmaps everything, and repeats ROUNDS times (default
 * 1).  When the page allocator runs dry it asks every other CPU to drain its per-CPU page
 * cache: on a CPU owned by an isolated task that request is deferred instead of sent as an
 * IPI, which is what the isolation tests check.  Prints how much it got each round.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zt.h"

#define CHUNK     (1024 * 1024)
#define MAX_CHUNK 4096

static long chunks[MAX_CHUNK];

int main(int argc, char **argv)
{
    long rounds = 1;
    char *end = "";
    if (argc == 3 && !strcmp(argv[1], "-r")) {
        rounds = strtol(argv[2], &end, 10);
    } else if (argc != 1) {
        rounds = 0;
    }
    if (rounds < 1 || *end) {
        fprintf(stderr, "usage: memhog [-r ROUNDS]\n");
        return 2;
    }
    for (long r = 0; r < rounds; r++) {
        int n = 0;
        long a = 0;
        while (n < MAX_CHUNK) {
            a = zt_mmap(NULL, CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (a < 0) {
                break;
            }
            chunks[n++] = a;
        }
        printf("memhog: round %ld: %d MiB before mmap said %s\n", r + 1, n,
               a < 0 ? zt_errno_name((int)-a) : "nothing");
        while (n > 0) {
            zt_munmap((void *)chunks[--n], CHUNK);
        }
    }
    return 0;
}
