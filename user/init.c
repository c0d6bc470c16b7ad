/* SPDX-License-Identifier: MIT */
/*
 * init — the first process (pid 1).
 *
 * The kernel starts it as /bin/init with argv = [ "/bin/init", PROG, ARGS... ] taken from
 * the command line `init=/bin/PROG -- ARGS`; with no init= it gets argv = [ "/bin/init" ] and
 * runs the interactive shell.  init spawns that one program and waits for it, reaping every
 * other child on the way (the kernel reparents orphans to pid 1).  When the program ends,
 * init exits with its status as a shell reports it (the exit code, or 128 + signal); the
 * kernel then prints `init exited with status N` and powers off with N.
 */
#include "zt.h"

#include <stdio.h>
#include <string.h>

#define PATH_BYTES 128

int main(int argc, char **argv)
{
    static char *const shell_argv[] = {"/bin/sh", NULL};
    char *const *prog_argv = argc > 1 ? &argv[1] : shell_argv;
    char path[PATH_BYTES];
    int status = 0;
    long pid, r;

    /* A bare name means /bin/NAME, as the shell does it. */
    snprintf(path, sizeof(path), "%s%s", strchr(prog_argv[0], '/') ? "" : "/bin/", prog_argv[0]);
    pid = zt_spawn(path, prog_argv, 0);
    if (pid < 0) {
        fprintf(stderr, "init: cannot start %s: %s\n", path, zt_errno_name((int)-pid));
        return 127;
    }
    for (;;) {
        r = zt_wait(-1, &status);
        if (r == pid) {
            return zt_status_code(status);
        }
        if (r < 0) {
            /* Only -ECHILD is possible, and only if the kernel lost our child. */
            fprintf(stderr, "init: wait4 failed: %s\n", zt_errno_name((int)-r));
            return 127;
        }
        /* An orphan the kernel handed to us: reaped, nothing more to do. */
    }
}
