/* SPDX-License-Identifier: MIT */
/*
 * elf.h — checking and loading ELF64 executables for user space.
 *
 * elf_check() is pure (unit-tested on the host): it accepts only a static AArch64 ET_EXEC
 * whose PT_LOAD segments lie inside the file and inside user space, do not overlap, are
 * not writable and executable at once, and whose entry point is inside an executable
 * segment; no PT_INTERP/PT_DYNAMIC, no executable PT_GNU_STACK, a PT_TLS inside the file,
 * a PT_PHDR inside a loaded segment.  Position-independent executables (static-pie) are
 * refused with a reason that says how to relink.  elf_load() maps a checked image into an
 * address space.
 */
#ifndef ZT_KERNEL_ELF_H
#define ZT_KERNEL_ELF_H

#include <stddef.h>
#include <stdint.h>

#define ELF_MAX_SEGMENTS 8
#define ELF_MAX_TLS      (1u << 20) /* bytes of thread-local storage per thread */

struct elf_segment {
    uint64_t vaddr, memsz;   /* where and how big in memory */
    uint64_t offset, filesz; /* what to copy from the file */
    unsigned prot;           /* PROT_* */
};

struct elf_image {
    uint64_t entry;
    uint64_t end;  /* page-aligned end of the highest segment (where brk starts) */
    uint64_t phdr; /* address of the program headers in memory (AT_PHDR), 0 if not loaded */
    unsigned phent, phnum;
    unsigned nseg;
    struct elf_segment seg[ELF_MAX_SEGMENTS];
};

/* 0, or -ENOEXEC with a short reason in *why (static string). */
int elf_check(const void *file, size_t len, struct elf_image *out, const char **why);

struct vm;
/* Map and fill every segment.  0 or -ENOMEM. */
int elf_load(struct vm *vm, const void *file, const struct elf_image *img);

#endif
