/* SPDX-License-Identifier: MIT */
/*
 * elf.c — ELF64 executables (contract in include/kernel/elf.h).  Spec: System V ABI, ELF-64
 * Object File Format 1.5, and the AArch64 ELF supplement (EM_AARCH64 = 183).
 */
#include "kernel/elf.h"
#include "arch.h"
#include "kernel/lib.h"
#include "kernel/vm.h"
#include "uapi/zt_errno.h"
#include "uapi/zt_syscall.h"

#include <stdbool.h>

#define PT_LOAD      1
#define PT_DYNAMIC   2
#define PT_INTERP    3
#define PT_PHDR      6
#define PT_TLS       7
#define PT_GNU_STACK 0x6474e551
#define ET_EXEC      2
#define ET_DYN       3
#define EM_AARCH64   183
#define PF_X         1
#define PF_W         2
#define PF_R         4

struct elf64_ehdr {
    unsigned char ident[16];
    uint16_t type, machine;
    uint32_t version;
    uint64_t entry, phoff, shoff;
    uint32_t flags;
    uint16_t ehsize, phentsize, phnum, shentsize, shnum, shstrndx;
};

struct elf64_phdr {
    uint32_t type, flags;
    uint64_t offset, vaddr, paddr, filesz, memsz, align;
};

static int reject(const char **why, const char *reason)
{
    *why = reason;
    return -ENOEXEC;
}

static int check_header(const struct elf64_ehdr *eh, size_t len, const char **why)
{
    if (len < sizeof(*eh) || memcmp(eh->ident, "\177ELF", 4) != 0) {
        return reject(why, "not an ELF file");
    }
    if (eh->ident[4] != 2 || eh->ident[5] != 1) {
        return reject(why, "not a 64-bit little-endian ELF");
    }
    if (eh->type == ET_DYN && eh->machine == EM_AARCH64) {
        return reject(why, "position-independent (static-pie or shared); link with -no-pie");
    }
    if (eh->type != ET_EXEC || eh->machine != EM_AARCH64) {
        return reject(why, "not an AArch64 static executable");
    }
    if (eh->phentsize != sizeof(struct elf64_phdr) || eh->phnum == 0 || eh->phoff > len ||
        eh->phnum > (len - eh->phoff) / sizeof(struct elf64_phdr)) {
        return reject(why, "program headers out of bounds");
    }
    return 0;
}

static unsigned prot_of(uint32_t flags)
{
    return (flags & PF_R ? PROT_READ : 0) | (flags & PF_W ? PROT_WRITE : 0) |
           (flags & PF_X ? PROT_EXEC : 0);
}

static int add_segment(const struct elf64_phdr *ph, size_t len, struct elf_image *out,
                       const char **why)
{
    if (out->nseg == ELF_MAX_SEGMENTS) {
        return reject(why, "too many segments");
    }
    if (ph->filesz > ph->memsz || ph->offset > len || ph->filesz > len - ph->offset) {
        return reject(why, "segment outside the file");
    }
    uint64_t start = ph->vaddr & ~(uint64_t)(PAGE_SIZE - 1);
    if (ph->vaddr < PAGE_SIZE || ph->memsz > USER_VA_TOP || ph->vaddr > USER_VA_TOP - ph->memsz) {
        return reject(why, "segment outside user space");
    }
    if ((ph->flags & PF_W) && (ph->flags & PF_X)) {
        return reject(why, "segment both writable and executable");
    }
    uint64_t end = (ph->vaddr + ph->memsz + PAGE_SIZE - 1) & ~(uint64_t)(PAGE_SIZE - 1);
    for (unsigned i = 0; i < out->nseg; i++) {
        uint64_t s = out->seg[i].vaddr & ~(uint64_t)(PAGE_SIZE - 1);
        uint64_t e =
            (out->seg[i].vaddr + out->seg[i].memsz + PAGE_SIZE - 1) & ~(uint64_t)(PAGE_SIZE - 1);
        if (start < e && s < end) {
            return reject(why, "segments share a page");
        }
    }
    struct elf_segment *sg = &out->seg[out->nseg++];
    sg->vaddr = ph->vaddr;
    sg->memsz = ph->memsz;
    sg->offset = ph->offset;
    sg->filesz = ph->filesz;
    sg->prot = prot_of(ph->flags);
    out->end = end > out->end ? end : out->end;
    return 0;
}

static bool entry_is_executable(const struct elf_image *img)
{
    for (unsigned i = 0; i < img->nseg; i++) {
        const struct elf_segment *s = &img->seg[i];
        if ((s->prot & PROT_EXEC) && img->entry >= s->vaddr && img->entry - s->vaddr < s->memsz) {
            return true;
        }
    }
    return false;
}

/* The thread-local storage template: inside the file, no bigger in the file than in
 * memory, alignment a power of two.  The C library builds its TLS from it (through AT_PHDR). */
static int check_tls(const struct elf64_phdr *ph, size_t len, const char **why)
{
    if (ph->filesz > ph->memsz || ph->offset > len || ph->filesz > len - ph->offset ||
        ph->memsz > ELF_MAX_TLS || (ph->align & (ph->align - 1))) {
        return reject(why, "bad TLS segment");
    }
    return 0;
}

/* One program header that is not PT_LOAD: refuse what cannot run, remember PT_PHDR. */
static int check_other(const struct elf64_phdr *ph, size_t len, struct elf_image *out,
                       const char **why)
{
    switch (ph->type) {
    case PT_INTERP:
    case PT_DYNAMIC:
        return reject(why, "dynamically linked");
    case PT_GNU_STACK:
        return (ph->flags & PF_X) ? reject(why, "asks for an executable stack") : 0;
    case PT_TLS:
        return check_tls(ph, len, why);
    case PT_PHDR:
        out->phdr = ph->vaddr;
        return 0;
    default:
        return 0; /* PT_NOTE, PT_GNU_RELRO (the C library mprotects it), ... */
    }
}

/* Where the program headers are in memory (AT_PHDR): PT_PHDR's address, else the loaded
 * segment whose file bytes hold them; 0 when no segment does (the auxv then omits it). */
static int locate_phdrs(const struct elf64_ehdr *eh, const struct elf_image *img, uint64_t *phdr,
                        const char **why)
{
    uint64_t size = (uint64_t)eh->phnum * sizeof(struct elf64_phdr);
    for (unsigned i = 0; i < img->nseg; i++) {
        const struct elf_segment *s = &img->seg[i];
        if (*phdr && *phdr >= s->vaddr && *phdr - s->vaddr <= s->memsz &&
            size <= s->memsz - (*phdr - s->vaddr)) {
            return 0; /* PT_PHDR inside a loaded segment */
        }
        if (!*phdr && eh->phoff >= s->offset && eh->phoff - s->offset <= s->filesz &&
            size <= s->filesz - (eh->phoff - s->offset)) {
            *phdr = s->vaddr + (eh->phoff - s->offset);
            return 0;
        }
    }
    return *phdr ? reject(why, "PT_PHDR outside the loaded segments") : 0;
}

int elf_check(const void *file, size_t len, struct elf_image *out, const char **why)
{
    const struct elf64_ehdr *eh = file;
    memset(out, 0, sizeof(*out));
    int r = check_header(eh, len, why);
    if (r) {
        return r;
    }
    for (unsigned i = 0; i < eh->phnum; i++) {
        struct elf64_phdr ph;
        memcpy(&ph, (const char *)file + eh->phoff + i * sizeof(ph), sizeof(ph));
        if (ph.type == PT_LOAD) {
            r = ph.memsz ? add_segment(&ph, len, out, why) : 0;
        } else {
            r = check_other(&ph, len, out, why);
        }
        if (r) {
            return r;
        }
    }
    out->entry = eh->entry;
    if (!out->nseg || !entry_is_executable(out)) {
        return reject(why, "entry point not in an executable segment");
    }
    out->phent = eh->phentsize;
    out->phnum = eh->phnum;
    return locate_phdrs(eh, out, &out->phdr, why);
}

int elf_load(struct vm *vm, const void *file, const struct elf_image *img)
{
    for (unsigned i = 0; i < img->nseg; i++) {
        const struct elf_segment *s = &img->seg[i];
        ASSERT(s->filesz <= s->memsz && s->vaddr >= PAGE_SIZE); /* elf_check's image */
        uint64_t start = s->vaddr & ~(uint64_t)(PAGE_SIZE - 1);
        int r = vm_map_region(vm, start, s->vaddr + s->memsz - start, s->prot, VMA_IMAGE);
        if (r == 0 && s->filesz) {
            r = vm_write_initial(vm, s->vaddr, (const char *)file + s->offset, s->filesz);
        }
        if (r) {
            return r;
        }
    }
    return 0;
}
