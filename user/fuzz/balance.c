/* SPDX-License-Identifier: MIT */
/*
 * balance.c — what a run's memory balance is made of, printed when free pages did not come
 * back to the baseline: the kernel object allocator's classes (/proc/slabinfo: objects and
 * pages of each size), tmpfs's pages (meminfo's Shmem), the memory of the runner and of init
 * (their statm) and the names in / and /tmp that came or went.  Taken with the baseline and again
 * at the end; only what differs is printed, so a one-page difference names its kind (a slab page of
 * some size, a file's page, a page the allocator counts nowhere).  Runner only.
 */
#include "fuzz.h"

#include <stdio.h>
#include <string.h>

static char text[8192];

long fz_read_file(const char *path, char *buf, size_t size)
{
    long fd = zt_syscall4(SYS_openat, AT_FDCWD, path, 0, 0), got = 0, r;
    if (fd < 0) {
        buf[0] = 0;
        return -1;
    }
    while (got < (long)size - 1 && (r = zt_read((int)fd, buf + got, size - 1 - (size_t)got)) > 0) {
        got += r;
    }
    zt_syscall1(SYS_close, fd);
    buf[got] = 0;
    return got;
}

static long slurp(const char *path)
{
    return fz_read_file(path, text, sizeof(text));
}

static uint64_t number(const char **p)
{
    uint64_t v = 0;
    while (**p == ' ' || **p == '\t') {
        (*p)++;
    }
    while (**p >= '0' && **p <= '9') {
        v = v * 10 + (uint64_t)(*(*p)++ - '0');
    }
    return v;
}

/* slabinfo's lines: name, active objects, (objects, size, per slab, pages per slab, the
 * tunables), then after "slabdata" the slabs. */
static void take_slabs(struct fz_balance *b)
{
    b->nclasses = 0;
    if (slurp("/proc/slabinfo") < 0) {
        return;
    }
    for (const char *line = text; *line && b->nclasses < FZ_BALANCE_CLASSES;) {
        const char *end = strchr(line, '\n');
        const char *data = strstr(line, "slabdata");
        if (!end) {
            break;
        }
        if (*line != '#' && strncmp(line, "slabinfo", 8) != 0 && data && data < end) {
            size_t n = strcspn(line, " ");
            n = n < sizeof(b->names[0]) - 1 ? n : sizeof(b->names[0]) - 1;
            memcpy(b->names[b->nclasses], line, n);
            b->names[b->nclasses][n] = 0;
            const char *p = line + n;
            b->objects[b->nclasses] = number(&p);
            p = data + strlen("slabdata");
            b->slabs[b->nclasses] = number(&p);
            b->nclasses++;
        }
        line = end + 1;
    }
}

static void take_names(const char *dir, char *out, size_t size)
{
    static char buf[4096];
    size_t at = 0;
    long fd = zt_syscall4(SYS_openat, AT_FDCWD, dir, O_DIRECTORY, 0), got;
    out[0] = 0;
    if (fd < 0) {
        return;
    }
    while ((got = zt_syscall3(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
        for (long off = 0; off < got;) {
            const char *name = buf + off + 19; /* ino 8, off 8, reclen 2, type 1 */
            size_t n = strlen(name);
            if (strcmp(name, ".") && strcmp(name, "..") && at + n + 2 < size) {
                memcpy(out + at, name, n);
                at += n;
                out[at++] = '/';
                out[at] = 0;
            }
            off += *(const uint16_t *)(const void *)(buf + off + 16);
        }
    }
    zt_syscall1(SYS_close, fd);
}

/* The first two numbers of a statm file: the address space's size and its resident pages. */
static void take_statm(const char *path, uint64_t out[2])
{
    out[0] = out[1] = 0;
    if (slurp(path) > 0) {
        const char *p = text;
        out[0] = number(&p);
        out[1] = number(&p);
    }
}

void fz_balance_take(struct fz_balance *b)
{
    take_slabs(b);
    b->shmem_kb = 0;
    if (slurp("/proc/meminfo") > 0) {
        const char *p = strstr(text, "\nShmem:");
        if (p) {
            p += strlen("\nShmem:");
            b->shmem_kb = number(&p);
        }
    }
    take_statm("/proc/self/statm", b->self_pages);
    take_statm("/proc/1/statm", b->init_pages);
    take_names("/", b->root, sizeof(b->root));
    take_names("/tmp", b->tmp, sizeof(b->tmp));
}

/* Is `name` (n bytes) one of the names of `list` (each ended by '/')? */
static bool has_name(const char *list, const char *name, size_t n)
{
    for (const char *q = list; *q;) {
        const char *end = strchr(q, '/');
        if ((size_t)(end - q) == n && strncmp(q, name, n) == 0) {
            return true;
        }
        q = end + 1;
    }
    return false;
}

/* The names of `now` that `then` has not. */
static void show_new(const char *dir, const char *what, const char *then, const char *now)
{
    for (const char *p = now; *p;) {
        const char *end = strchr(p, '/');
        if (!has_name(then, p, (size_t)(end - p))) {
            printf("fuzz: balance: %s%.*s %s\n", dir, (int)(end - p), p, what);
        }
        p = end + 1;
    }
}

void fz_balance_show(const struct fz_balance *a, const struct fz_balance *b)
{
    for (int i = 0; i < a->nclasses && i < b->nclasses; i++) {
        if (a->objects[i] != b->objects[i] || a->slabs[i] != b->slabs[i]) {
            printf("fuzz: balance: %s: %llu objects in %llu pages -> %llu in %llu\n", a->names[i],
                   (unsigned long long)a->objects[i], (unsigned long long)a->slabs[i],
                   (unsigned long long)b->objects[i], (unsigned long long)b->slabs[i]);
        }
    }
    if (a->shmem_kb != b->shmem_kb) {
        printf("fuzz: balance: tmpfs pages (Shmem) %llu kB -> %llu kB\n",
               (unsigned long long)a->shmem_kb, (unsigned long long)b->shmem_kb);
    }
    const char *const who[2] = {"the runner", "init"};
    const uint64_t *const pa[2] = {a->self_pages, a->init_pages};
    const uint64_t *const pb[2] = {b->self_pages, b->init_pages};
    for (int i = 0; i < 2; i++) {
        if (pa[i][0] != pb[i][0] || pa[i][1] != pb[i][1]) {
            printf("fuzz: balance: %s's memory (statm) %llu pages, %llu resident -> %llu, %llu\n",
                   who[i], (unsigned long long)pa[i][0], (unsigned long long)pa[i][1],
                   (unsigned long long)pb[i][0], (unsigned long long)pb[i][1]);
        }
    }
    show_new("/", "made", a->root, b->root);
    show_new("/", "gone", b->root, a->root);
    show_new("/tmp/", "made", a->tmp, b->tmp);
    show_new("/tmp/", "gone", b->tmp, a->tmp);
}
