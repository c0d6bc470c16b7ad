/* SPDX-License-Identifier: MIT */
/*
 * ztdyn.c — libztdyn.so, the shared library dyntest loads with dlopen(): ordinary
 * position-independent C built with Debian's cross compiler (-shared -fPIC).  It gives the
 * loader something to do: a constructor, a table of pointers (relative relocations), a call
 * into libc through the PLT, and a thread-local variable (dynamic TLS).
 */
#include <stdio.h>
#include <string.h>

static int ready;
static __thread int calls;

static const char *const words[] = {"zero", "one", "two", "three"};

__attribute__((constructor)) static void ztdyn_init(void)
{
    ready = 42;
}

/* 42 once the constructor ran. */
int ztdyn_ready(void)
{
    return ready;
}

/* The length of word i (0..3) written into buf, through libc; this thread's call count in
 * *count. */
int ztdyn_word(int i, char *buf, size_t n, int *count)
{
    *count = ++calls;
    return snprintf(buf, n, "%s", words[i & 3]);
}
