/* SPDX-License-Identifier: MIT */
/*
 * initrd.c — lookups in the embedded cpio archive (contract in include/kernel/initrd.h).
 *
 * cpio "newc": each member is a 110-byte ASCII header ("070701" and thirteen 8-digit hex
 * fields), the NUL-terminated name, padding to 4 bytes, the data, padding to 4 bytes; the
 * member named "TRAILER!!!" ends the archive.  Every field is bounds-checked.
 *
 * Two archives make the tree: the one linked into the kernel, then the one a boot loader handed
 * over (QEMU -initrd, arch_boot_info), layered over it as Linux layers an external initramfs
 * over its built-in one: its directories merge with the built-in ones and a file or link of
 * the same path replaces the built-in one.  It stays where the boot loader put it (the page
 * allocator never gets that memory) and its files are read in place.  Uncompressed only.
 */
#include "kernel/initrd.h"
#include "arch.h"
#include "kernel/lib.h"
#include "kernel/printk.h"
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

/* Call fn for every member of one archive; the number of members, or -(offset + 1) of the
 * first malformed header (the members before it were walked). */
static long walk_one(const char *blob, size_t len, bool over, initrd_fn fn)
{
    size_t off = 0, at = 0;
    struct member m;
    long n = 0;
    int r;
    for (; (r = next_member(blob, len, &off, &m)) == 1; at = off) {
        const char *name = m.name;
        while (name[0] == '.' && name[1] == '/') {
            name += 2; /* "./bin/sh" as find(1) writes it */
        }
        if (name[0] && strcmp(name, ".") != 0) {
            fn(name, m.mode, m.data, m.size, over);
            n++;
        }
    }
    return r < 0 ? -(long)at - 1 : n;
}

/* The archive the boot loader handed over (arch_boot_info), or NULL. */
static const char *loader_archive(size_t *len)
{
    const struct arch_boot_info *bi = arch_boot_info();
    *len = bi->initrd_size;
    return bi->initrd_size ? phys_to_virt(bi->initrd_pa) : 0;
}

int initrd_walk(initrd_fn fn)
{
    size_t len;
    long n = walk_one(__initrd_start, (size_t)(__initrd_end - __initrd_start), false, fn);
    const char *blob = loader_archive(&len);
    if (!blob) {
        return (int)(n < 0 ? 0 : n);
    }
    const unsigned char *u = (const unsigned char *)blob;
    if (len >= 2 && u[0] == 0x1f && u[1] == 0x8b) {
        printk("initrd: the boot loader's archive is gzip-compressed: not read (give an "
               "uncompressed cpio newc archive)\n");
        return (int)n;
    }
    long k = walk_one(blob, len, true, fn);
    if (k < 0) {
        printk("initrd: the boot loader's archive is not a cpio newc archive from byte %ld on: "
               "what comes before is used\n",
               -k - 1);
    } else {
        printk("initrd: %ld members from the boot loader's archive (%lu bytes), over the "
               "built-in one\n",
               k, (unsigned long)len);
    }
    return (int)n;
}

size_t initrd_bytes(void)
{
    size_t len;
    loader_archive(&len);
    return (size_t)(__initrd_end - __initrd_start) + len;
}
