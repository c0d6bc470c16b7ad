/* SPDX-License-Identifier: MIT */
/*
 * labcheck.h — what /bin/labcheck (user/labcheck.c, the grader's checks of the labs in labs/)
 * shares with the tests students write for it (the files of user/labcheck/).
 *
 * A student's test gets the call under test as a function pointer and records each check
 * with LAB_CHECK, which counts it and prints the ones that fail.  labcheck runs the test
 * against the real call (it must pass, with checks made) and against deliberately broken
 * versions of it, the mutants (it must fail each): a test that cannot tell a broken call
 * from a working one tests nothing.
 */
#ifndef ZT_USER_LABCHECK_H
#define ZT_USER_LABCHECK_H

#include <stdio.h>

#include "zt.h"

/* What one run of a student's test found. */
struct lab_run {
    int checks;   /* LAB_CHECKs made */
    int failures; /* of which failed */
};

#define LAB_CHECK(run, cond, ...)                                                                  \
    do {                                                                                           \
        (run)->checks++;                                                                           \
        if (!(cond)) {                                                                             \
            (run)->failures++;                                                                     \
            printf("labcheck:   check failed (line %d): ", __LINE__);                              \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
        }                                                                                          \
    } while (0)

/* Lab syscall: a call with zt_isolstat's contract (user/lib/zt.h). */
typedef long (*isolstat_fn)(unsigned cpu, struct zt_isol_audit *out);

/* Lab syscall, the student's test (user/labcheck/isolstat_test.c): check that `call` behaves
 * as zt_isolstat must, recording every check in *run.  The machine has dataplane CPUs. */
void isolstat_test(isolstat_fn call, struct lab_run *run);

#endif
