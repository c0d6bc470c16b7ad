/* SPDX-License-Identifier: MIT */
/*
 * elf.h — checking and loading ELF64 executables for user space.
 *
 * elf_check() is pure (unit-tested on the host): it accepts an AArch64 ET_EXEC (addresses
 * absolute) or ET_DYN (a position-independent executable, a static-pie, or an interpreter
 * such as ld-linux-aarch64.so.1: addresses relative to wherever the kernel places it) whose
 * PT_LOAD segments lie inside the file and inside user space, do not share a page, are not
 * writable and executable at once, and whose entry point is inside an executable segment;
 * at most one PT_INTERP, inside the file, a NUL-terminated path of at most ELF_INTERP_MAX
 * bytes; no executable PT_GNU_STACK, a PT_TLS inside the file, a PT_PHDR inside a loaded
 * segment.  Every refusal is -ENOEXEC with its own reason (a static string in *why).
 * elf_place() moves a checked ET_DYN image to the address the kernel chose; elf_load() maps a
 * placed image into an address space.
 *
 * The file is read through struct elf_file: straight from memory when its bytes are there
 * (an initrd file, a unit test's buffer), else through its read function (a /tmp file, read
 * a page at a time under the file system's lock).
 */
#ifndef ZT_KERNEL_ELF_H
#define ZT_KERNEL_ELF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ELF_MAX_SEGMENTS 8
#define ELF_MAX_TLS      (1u << 20) /* bytes of thread-local storage per thread */
#define ELF_INTERP_MAX   256        /* bytes of PT_INTERP's path, its NUL included */

/* The bytes of a file: mem[0..size) if mem is set, else read(ctx, off, buf, n), which copies
 * n bytes at off (inside the file: the caller checks) and returns 0 or -errno. */
struct elf_file {
    uint64_t size;
    const void *mem;
    int (*read)(void *ctx, uint64_t off, void *buf, size_t n);
    void *ctx;
};

struct elf_segment {
    uint64_t vaddr, memsz;   /* where and how big in memory */
    uint64_t offset, filesz; /* what to copy from the file */
    unsigned prot;           /* PROT_* */
};

struct elf_image {
    uint64_t entry;
    uint64_t lo;    /* page-aligned start of the lowest segment */
    uint64_t end;   /* page-aligned end of the highest segment (where brk starts) */
    uint64_t phdr;  /* address of the program headers in memory (AT_PHDR), 0 if not loaded */
    uint64_t align; /* the largest PT_LOAD alignment, a power of two >= the page size */
    uint64_t bias;  /* what elf_place added to every address (0 for ET_EXEC) */
    bool pic;       /* ET_DYN: elf_place must move it before elf_load */
    unsigned phent, phnum;
    unsigned nseg;
    struct elf_segment seg[ELF_MAX_SEGMENTS];
    char interp[ELF_INTERP_MAX]; /* PT_INTERP's path, "" without one */
};

/* 0, or -ENOEXEC with a short reason in *why (static string).  file->size bytes. */
int elf_check_file(const struct elf_file *file, struct elf_image *out, const char **why);
/* The same for a file entirely in memory (len bytes at file). */
int elf_check(const void *file, size_t len, struct elf_image *out, const char **why);

/* Move a position-independent image so that its lowest page starts at `base` (page-aligned):
 * every address gains base - lo.  0, or -ENOEXEC with a reason if it does not fit in user
 * space there.  Nothing to do for ET_EXEC (base ignored). */
int elf_place(struct elf_image *img, uint64_t base, const char **why);

struct vm;
/* Map and fill every segment of a checked, placed image.  0 or -ENOMEM/-errno of a read. */
int elf_load(struct vm *vm, const struct elf_file *file, const struct elf_image *img);

#endif
