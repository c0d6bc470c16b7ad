/* SPDX-License-Identifier: MIT */
/*
 * start.c — what runs between crt0's _start and main(): decode the initial stack, give the
 * main thread its TLS, run constructors, arrange for exit() to flush stdio, call main.
 *
 * Nothing here may touch a thread-local variable (errno included) before tls_setup_main().
 */
#include "tls.h"
#include "zt.h"

#include <stdlib.h>
#include <unistd.h>

extern int main(int argc, char **argv, char **envp);
extern char **environ;

typedef void (*ctor_fn)(void);
extern ctor_fn __zt_init_array_start[], __zt_init_array_end[];

uint64_t zt_start_counter;

__attribute__((noreturn)) void __zt_start(uint64_t *sp, uint64_t counter)
{
    int argc = (int)sp[0];
    char **argv = (char **)&sp[1];
    char **envp = argv + argc + 1;

    zt_start_counter = counter; /* not thread-local: may be stored before the TLS exists */
    tls_setup_main();
    environ = envp;
    for (ctor_fn *f = __zt_init_array_start; f < __zt_init_array_end; f++) {
        (*f)();
    }
    atexit(zt_stdio_flush);
    exit(main(argc, argv, envp));
}
