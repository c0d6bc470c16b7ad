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

#define PT_LOAD    1
#define PT_INTERP  3
#define PT_DYNAMIC 2
#define ET_EXEC    2
#define EM_AARCH64 183
#define PF_X       1
#define PF_W       2
#define PF_R       4

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
        if (ph.type == PT_INTERP || ph.type == PT_DYNAMIC) {
            return reject(why, "dynamically linked");
        }
        if (ph.type == PT_LOAD && ph.memsz && (r = add_segment(&ph, len, out, why)) != 0) {
            return r;
        }
    }
    out->entry = eh->entry;
    if (!out->nseg || !entry_is_executable(out)) {
        return reject(why, "entry point not in an executable segment");
    }
    return 0;
}

int elf_load(struct vm *vm, const void *file, const struct elf_image *img)
{
    for (unsigned i = 0; i < img->nseg; i++) {
        const struct elf_segment *s = &img->seg[i];
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
