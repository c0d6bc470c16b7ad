/* SPDX-License-Identifier: MIT */
/*
 * elf.c — ELF64 executables (contract in include/kernel/elf.h).  Spec: System V ABI, ELF-64
 * Object File Format 1.5, and the AArch64 ELF supplement (EM_AARCH64 = 183).
 *
 * An ET_DYN file's addresses are relative: elf_check checks that its span fits in user space
 * and elf_place moves it to the base the caller chose (Linux's load bias, fs/binfmt_elf.c).
 * The program headers are read one at a time through the file's reader, never all at once,
 * so a file with many of them costs no kernel buffer.
 */
#include "kernel/elf.h"
#include "arch.h"
#include "kernel/lib.h"
#include "kernel/page.h"
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

#define PAGE_MASK ((uint64_t)PAGE_SIZE - 1)

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

/* n bytes at off of the file (the callers have checked that they are inside it). */
static int file_read(const struct elf_file *f, uint64_t off, void *buf, size_t n)
{
    if (off > f->size || n > f->size - off) {
        return -ENOEXEC;
    }
    if (f->mem) {
        memcpy(buf, (const char *)f->mem + off, n);
        return 0;
    }
    return f->read(f->ctx, off, buf, n);
}

/* Is [off, off+n) inside a file of `size` bytes (no wrap)? */
static bool in_file(uint64_t off, uint64_t n, uint64_t size)
{
    return off <= size && n <= size - off;
}

static int check_header(const struct elf64_ehdr *eh, uint64_t len, const char **why)
{
    if (memcmp(eh->ident, "\177ELF", 4) != 0) {
        return reject(why, "not an ELF file");
    }
    if (eh->ident[4] != 2 || eh->ident[5] != 1) {
        return reject(why, "not a 64-bit little-endian ELF");
    }
    if ((eh->type != ET_EXEC && eh->type != ET_DYN) || eh->machine != EM_AARCH64) {
        return reject(why, "not an AArch64 executable");
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

static uint64_t page_down(uint64_t v)
{
    return v & ~PAGE_MASK;
}

static uint64_t page_up(uint64_t v)
{
    return (v + PAGE_MASK) & ~PAGE_MASK;
}

static int add_segment(const struct elf64_phdr *ph, uint64_t len, struct elf_image *out,
                       const char **why)
{
    if (out->nseg == ELF_MAX_SEGMENTS) {
        return reject(why, "too many segments");
    }
    if (ph->filesz > ph->memsz || !in_file(ph->offset, ph->filesz, len)) {
        return reject(why, "segment outside the file");
    }
    /* ET_EXEC: absolute addresses above page 0; ET_DYN: relative, the span must fit. */
    uint64_t lowest = out->pic ? 0 : PAGE_SIZE;
    if (ph->vaddr < lowest || ph->memsz > USER_VA_TOP || ph->vaddr > USER_VA_TOP - ph->memsz) {
        return reject(why, "segment outside user space");
    }
    if ((ph->flags & PF_W) && (ph->flags & PF_X)) {
        return reject(why, "segment both writable and executable");
    }
    uint64_t start = page_down(ph->vaddr), end = page_up(ph->vaddr + ph->memsz);
    for (unsigned i = 0; i < out->nseg; i++) {
        uint64_t s = page_down(out->seg[i].vaddr);
        uint64_t e = page_up(out->seg[i].vaddr + out->seg[i].memsz);
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
    out->lo = out->nseg == 1 || start < out->lo ? start : out->lo;
    if (ph->align > out->align && !(ph->align & (ph->align - 1)) && ph->align <= (1u << 30)) {
        out->align = ph->align; /* a base aligned so keeps the segments' alignment */
    }
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
static int check_tls(const struct elf64_phdr *ph, uint64_t len, const char **why)
{
    if (ph->filesz > ph->memsz || !in_file(ph->offset, ph->filesz, len) ||
        ph->memsz > ELF_MAX_TLS || (ph->align & (ph->align - 1))) {
        return reject(why, "bad TLS segment");
    }
    return 0;
}

/* PT_INTERP: the path of the program that loads this one (the dynamic linker), which the
 * kernel loads beside it.  One only, inside the file, NUL-terminated (Linux's test too). */
static int check_interp(const struct elf_file *f, const struct elf64_phdr *ph,
                        struct elf_image *out, const char **why)
{
    if (out->interp[0]) {
        return reject(why, "two interpreters");
    }
    if (!in_file(ph->offset, ph->filesz, f->size)) {
        return reject(why, "interpreter path outside the file");
    }
    if (ph->filesz < 2 || ph->filesz > ELF_INTERP_MAX) {
        return reject(why, "interpreter path empty or too long");
    }
    int r = file_read(f, ph->offset, out->interp, (size_t)ph->filesz);
    if (r) {
        out->interp[0] = 0;
        return r == -ENOEXEC ? reject(why, "file changed while being read") : r;
    }
    if (out->interp[ph->filesz - 1] != 0) {
        out->interp[0] = 0;
        return reject(why, "interpreter path not NUL-terminated");
    }
    return out->interp[0] ? 0 : reject(why, "interpreter path empty or too long");
}

/* One program header that is not PT_LOAD: refuse what cannot run, remember PT_PHDR and
 * PT_INTERP. */
static int check_other(const struct elf_file *f, const struct elf64_phdr *ph, struct elf_image *out,
                       const char **why)
{
    switch (ph->type) {
    case PT_INTERP:
        return check_interp(f, ph, out, why);
    case PT_GNU_STACK:
        return (ph->flags & PF_X) ? reject(why, "asks for an executable stack") : 0;
    case PT_TLS:
        return check_tls(ph, f->size, why);
    case PT_PHDR:
        out->phdr = ph->vaddr;
        return 0;
    default:
        return 0; /* PT_DYNAMIC (the dynamic linker's), PT_NOTE, PT_GNU_RELRO (mprotected by
                     the C library), ... */
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

int elf_check_file(const struct elf_file *f, struct elf_image *out, const char **why)
{
    struct elf64_ehdr eh;
    memset(out, 0, sizeof(*out));
    out->align = PAGE_SIZE;
    if (f->size < sizeof(eh)) {
        return reject(why, "not an ELF file");
    }
    int r = file_read(f, 0, &eh, sizeof(eh));
    if (r == 0) {
        r = check_header(&eh, f->size, why);
    }
    if (r) {
        return r;
    }
    out->pic = eh.type == ET_DYN;
    for (unsigned i = 0; i < eh.phnum; i++) {
        struct elf64_phdr ph;
        r = file_read(f, eh.phoff + i * sizeof(ph), &ph, sizeof(ph));
        if (r == 0 && ph.type == PT_LOAD) {
            r = ph.memsz ? add_segment(&ph, f->size, out, why) : 0;
        } else if (r == 0) {
            r = check_other(f, &ph, out, why);
        }
        if (r) {
            return r;
        }
    }
    out->entry = eh.entry;
    if (!out->nseg || !entry_is_executable(out)) {
        return reject(why, "entry point not in an executable segment");
    }
    out->phent = eh.phentsize;
    out->phnum = eh.phnum;
    return locate_phdrs(&eh, out, &out->phdr, why);
}

int elf_check(const void *file, size_t len, struct elf_image *out, const char **why)
{
    struct elf_file f = {.size = len, .mem = file};
    return elf_check_file(&f, out, why);
}

int elf_place(struct elf_image *img, uint64_t base, const char **why)
{
    if (!img->pic) {
        return 0;
    }
    uint64_t span = img->end - img->lo;
    if ((base & PAGE_MASK) || base < PAGE_SIZE || base > USER_VA_TOP || span > USER_VA_TOP - base) {
        return reject(why, "position-independent image does not fit there");
    }
    uint64_t bias = base - img->lo;
    for (unsigned i = 0; i < img->nseg; i++) {
        img->seg[i].vaddr += bias;
    }
    img->entry += bias;
    img->phdr += img->phdr ? bias : 0;
    img->lo = base;
    img->end = base + span;
    img->bias = bias;
    img->pic = false; /* placed */
    return 0;
}

/* Copy the file bytes of segment s to its place in vm: straight from memory, or through
 * `bounce` (a page) a page at a time. */
static int fill_segment(struct vm *vm, const struct elf_file *f, const struct elf_segment *s,
                        void *bounce)
{
    if (f->mem) {
        return vm_write_initial(vm, s->vaddr, (const char *)f->mem + s->offset, s->filesz);
    }
    for (uint64_t done = 0; done < s->filesz;) {
        size_t chunk = (size_t)MIN((uint64_t)PAGE_SIZE, s->filesz - done);
        int r = file_read(f, s->offset + done, bounce, chunk);
        if (r == 0) {
            r = vm_write_initial(vm, s->vaddr + done, bounce, chunk);
        }
        if (r) {
            return r;
        }
        done += chunk;
    }
    return 0;
}

int elf_load(struct vm *vm, const struct elf_file *file, const struct elf_image *img)
{
    if (img->pic) {
        return -EINVAL; /* not placed */
    }
    paddr_t bounce = file->mem ? 0 : page_alloc();
    if (!file->mem && !bounce) {
        return -ENOMEM;
    }
    int r = 0;
    for (unsigned i = 0; r == 0 && i < img->nseg; i++) {
        const struct elf_segment *s = &img->seg[i];
        ASSERT(s->filesz <= s->memsz && s->vaddr >= PAGE_SIZE); /* elf_check's image */
        uint64_t start = page_down(s->vaddr);
        r = vm_map_region(vm, start, s->vaddr + s->memsz - start, s->prot, VMA_IMAGE);
        if (r == 0 && s->filesz) {
            r = fill_segment(vm, file, s, bounce ? phys_to_virt(bounce) : 0);
        }
        if (r == 0 && (s->prot & PROT_EXEC)) {
            vm_sync_icache(vm, start, s->vaddr + s->memsz - start); /* written as data */
        }
    }
    if (bounce) {
        page_free(bounce);
    }
    return r;
}
