/* SPDX-License-Identifier: MIT */
/*
 * initrd.c — lookups in the embedded cpio archive (contract in include/kernel/initrd.h).
 *
 * cpio "newc": each member is a 110-byte ASCII header ("070701" and thirteen 8-digit hex
 * fields), the NUL-terminated name, padding to 4 bytes, the data, padding to 4 bytes; the
 * member named "TRAILER!!!" ends the archive.  Every field is bounds-checked.
 */
#include "kernel/initrd.h"
#include "kernel/lib.h"
#include "uapi/zt_errno.h"

#include <stdbool.h>
#include <stdint.h>

#define HDR_LEN 110

extern const char __initrd_start[], __initrd_end[];

static bool hex_field(const char *p, uint32_t *out)
{
    uint32_t v = 0;
    for (int i = 0; i < 8; i++) {
        char c = p[i];
        unsigned d = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
                     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                     : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
                                            : 16u;
        if (d > 15) {
            return false;
        }
        v = v << 4 | d;
    }
    *out = v;
    return true;
}

static size_t align4(size_t v)
{
    return (v + 3) & ~(size_t)3;
}

struct member {
    const char *name;
    const void *data;
    size_t size;
    unsigned mode;
};

/* Parse the member at *off; advance *off.  1 = member, 0 = end of archive, <0 = error. */
static int next_member(const char *blob, size_t len, size_t *off, struct member *m)
{
    uint32_t namesize, filesize, mode;
    size_t o = *off;
    if (o + HDR_LEN > len || memcmp(blob + o, "070701", 6) != 0 ||
        !hex_field(blob + o + 14, &mode) || !hex_field(blob + o + 54, &filesize) ||
        !hex_field(blob + o + 94, &namesize)) {
        return -EINVAL;
    }
    size_t name_off = o + HDR_LEN;
    if (namesize == 0 || namesize > len - name_off || blob[name_off + namesize - 1] != 0) {
        return -EINVAL;
    }
    size_t data_off = align4(name_off + namesize);
    if (data_off > len || filesize > len - data_off) {
        return -EINVAL;
    }
    m->name = blob + name_off;
    m->data = blob + data_off;
    m->size = filesize;
    m->mode = mode;
    *off = align4(data_off + filesize);
    return strcmp(m->name, "TRAILER!!!") == 0 ? 0 : 1;
}

int cpio_find(const void *blob, size_t len, const char *path, const void **data, size_t *size)
{
    while (*path == '/') {
        path++;
    }
    size_t off = 0;
    struct member m;
    int r;
    while ((r = next_member(blob, len, &off, &m)) == 1) {
        if (strcmp(m.name, path) == 0) {
            *data = m.data;
            *size = m.size;
            return 0;
        }
    }
    return r == 0 ? -ENOENT : r;
}

int initrd_find(const char *path, const void **data, size_t *size)
{
    return cpio_find(__initrd_start, (size_t)(__initrd_end - __initrd_start), path, data, size);
}

int initrd_walk(void (*fn)(const char *name, unsigned mode, const void *data, size_t size))
{
    size_t off = 0, len = (size_t)(__initrd_end - __initrd_start);
    struct member m;
    int n = 0;
    while (next_member(__initrd_start, len, &off, &m) == 1) {
        const char *name = m.name;
        while (name[0] == '.' && name[1] == '/') {
            name += 2; /* "./bin/sh" as find(1) writes it */
        }
        if (name[0] && strcmp(name, ".") != 0) {
            fn(name, m.mode, m.data, m.size);
            n++;
        }
    }
    return n;
}

size_t initrd_bytes(void)
{
    return (size_t)(__initrd_end - __initrd_start);
}
