/* SPDX-License-Identifier: MIT */
/*
 * test_elf.c — host unit tests of elf_check (kernel/proc/elf.c): which executables the kernel
 * agrees to load.
 *
 * Every test builds its file from a valid minimal AArch64 ET_EXEC (built here with the
 * host's <elf.h> types: a text segment holding the headers and the code, and a data segment
 * with a bss tail) and changes one thing.  The file handed to elf_check always sits in a heap
 * block of exactly its length, so ASan reports any read past the end.  ELF-0n: the valid
 * file; ELF-1n: the header; ELF-2n: program headers and segments; ELF-3n: truncation and
 * random corruption; DYN-0n: position-independent files, their placement, PT_INTERP and
 * reading through a reader function.
 */
#include <elf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kernel/cpu.h"
#include "kernel/elf.h"
#include "kernel/sched.h"
#include "uapi/zt_errno.h"
#include "uapi/zt_syscall.h"
#include "fake.h"
#include "unit.h"

/* cmocka passes every test a state pointer; these tests need none. */
#define MAX_PH 12

#define TEXT_VADDR 0x400000ull
#define DATA_VADDR 0x410000ull
#define CODE_LEN   16
#define DATA_LEN   16
#define BSS_LEN    0x2000ull
#define DYN_BASE   0x0000005555550000ull

/* The file as the tests build it: header, program headers, code, data (in that order). */
struct image {
    Elf64_Ehdr eh;
    Elf64_Phdr ph[MAX_PH];
    unsigned nph;
    size_t len; /* file length; the layout below assumes nph program headers */
};

static size_t code_off(unsigned nph)
{
    return sizeof(Elf64_Ehdr) + nph * sizeof(Elf64_Phdr);
}

/* The valid file: two PT_LOADs. */
static struct image valid(void)
{
    struct image im;
    memset(&im, 0, sizeof(im));
    memcpy(im.eh.e_ident, ELFMAG, SELFMAG);
    im.eh.e_ident[EI_CLASS] = ELFCLASS64;
    im.eh.e_ident[EI_DATA] = ELFDATA2LSB;
    im.eh.e_ident[EI_VERSION] = EV_CURRENT;
    im.eh.e_type = ET_EXEC;
    im.eh.e_machine = EM_AARCH64;
    im.eh.e_version = EV_CURRENT;
    im.eh.e_phoff = sizeof(Elf64_Ehdr);
    im.eh.e_ehsize = sizeof(Elf64_Ehdr);
    im.eh.e_phentsize = sizeof(Elf64_Phdr);
    im.eh.e_phnum = 2;
    im.nph = 2;
    size_t code = code_off(2);
    im.eh.e_entry = TEXT_VADDR + code;
    im.ph[0] = (Elf64_Phdr){.p_type = PT_LOAD,
                            .p_flags = PF_R | PF_X,
                            .p_offset = 0,
                            .p_vaddr = TEXT_VADDR,
                            .p_paddr = TEXT_VADDR,
                            .p_filesz = code + CODE_LEN,
                            .p_memsz = code + CODE_LEN,
                            .p_align = 0x1000};
    im.ph[1] = (Elf64_Phdr){.p_type = PT_LOAD,
                            .p_flags = PF_R | PF_W,
                            .p_offset = code + CODE_LEN,
                            .p_vaddr = DATA_VADDR,
                            .p_paddr = DATA_VADDR,
                            .p_filesz = DATA_LEN,
                            .p_memsz = BSS_LEN,
                            .p_align = 0x1000};
    im.len = code + CODE_LEN + DATA_LEN;
    return im;
}

/* Lay the image out in a heap block of exactly im->len bytes (caller frees). */
static unsigned char *render(const struct image *im)
{
    size_t full = code_off(im->nph) + CODE_LEN + DATA_LEN;
    unsigned char *tmp = calloc(1, full > im->len ? full : im->len);
    assert_non_null(tmp);
    memcpy(tmp, &im->eh, sizeof(im->eh));
    memcpy(tmp + sizeof(im->eh), im->ph, im->nph * sizeof(Elf64_Phdr));
    for (size_t i = 0; i < CODE_LEN + DATA_LEN; i++) {
        tmp[code_off(im->nph) + i] = (unsigned char)(0xd5 + i); /* "code" and "data" bytes */
    }
    unsigned char *file = malloc(im->len ? im->len : 1);
    assert_non_null(file);
    memcpy(file, tmp, im->len);
    free(tmp);
    return file;
}

static int check_bytes(const unsigned char *bytes, size_t len, struct elf_image *out,
                       const char **why)
{
    unsigned char *file = malloc(len ? len : 1);
    assert_non_null(file);
    memcpy(file, bytes, len);
    *why = NULL;
    int r = elf_check(file, len, out, why);
    free(file);
    return r;
}

static int check(const struct image *im, struct elf_image *out, const char **why)
{
    unsigned char *file = render(im);
    *why = NULL;
    int r = elf_check(file, im->len, out, why);
    free(file);
    return r;
}

/* im is refused with -ENOEXEC and exactly this reason. */
static void expect_reject(const struct image *im, const char *reason)
{
    struct elf_image out;
    const char *why;
    int r = check(im, &out, &why);
    if (r != -ENOEXEC) {
        fail_msg("elf_check returned %d, want -ENOEXEC (\"%s\")", r, reason);
    }
    assert_non_null(why);
    assert_string_equal(why, reason);
}

static void expect_accept(const struct image *im, struct elf_image *out)
{
    const char *why;
    int r = check(im, out, &why);
    if (r != 0) {
        fail_msg("elf_check returned %d (\"%s\"), want 0", r, why ? why : "?");
    }
}

#define R_NOT_ELF    "not an ELF file"
#define R_NOT_64LE   "not a 64-bit little-endian ELF"
#define R_NOT_EXEC   "not an AArch64 executable"
#define R_PH_BOUNDS  "program headers out of bounds"
#define R_TOO_MANY   "too many segments"
#define R_OUTSIDE    "segment outside the file"
#define R_USER_SPACE "segment outside user space"
#define R_WX         "segment both writable and executable"
#define R_SHARE      "segments share a page"
#define R_ENTRY      "entry point not in an executable segment"
#define R_EXECSTACK  "asks for an executable stack"
#define R_TLS        "bad TLS segment"
#define R_PHDR       "PT_PHDR outside the loaded segments"
#define R_INTERP2    "two interpreters"
#define R_INTERP_OUT "interpreter path outside the file"
#define R_INTERP_LEN "interpreter path empty or too long"
#define R_INTERP_NUL "interpreter path not NUL-terminated"
#define R_PLACE      "position-independent image does not fit there"

static void expect_segment(const struct elf_segment *s, uint64_t vaddr, uint64_t memsz,
                           uint64_t offset, uint64_t filesz, unsigned prot)
{
    assert_int_equal(s->vaddr, vaddr);
    assert_int_equal(s->memsz, memsz);
    assert_int_equal(s->offset, offset);
    assert_int_equal(s->filesz, filesz);
    assert_int_equal(s->prot, prot);
}

/* ------------------------------------------------------------------ the valid file */

/* ELF-01: the valid file is accepted with its entry, both segments and the page-aligned end */
static void elf01_valid(TEST_STATE)
{
    struct image im = valid();
    struct elf_image out;
    memset(&out, 0xa5, sizeof(out));
    expect_accept(&im, &out);
    size_t code = code_off(2);
    assert_int_equal(out.entry, TEXT_VADDR + code);
    assert_int_equal(out.nseg, 2);
    expect_segment(&out.seg[0], TEXT_VADDR, code + CODE_LEN, 0, code + CODE_LEN,
                   PROT_READ | PROT_EXEC);
    expect_segment(&out.seg[1], DATA_VADDR, BSS_LEN, code + CODE_LEN, DATA_LEN,
                   PROT_READ | PROT_WRITE);
    assert_int_equal(out.end, DATA_VADDR + BSS_LEN);
}

/* ELF-02: bytes after the last segment are allowed (the file may be longer) */
static void elf02_trailing_bytes(TEST_STATE)
{
    struct image im = valid();
    struct elf_image out;
    im.len += 100;
    expect_accept(&im, &out);
    assert_int_equal(out.nseg, 2);
}

/* ELF-03: segments that are not PT_LOAD, and PT_LOADs with memsz 0, are skipped */
static void elf03_other_segments_skipped(TEST_STATE)
{
    struct image im = valid();
    struct elf_image out;
    im.ph[2] = (Elf64_Phdr){.p_type = PT_NOTE, .p_offset = 0, .p_filesz = 8};
    im.ph[3] = (Elf64_Phdr){.p_type = PT_GNU_STACK, .p_flags = PF_R | PF_W};
    im.ph[4] = (Elf64_Phdr){.p_type = PT_LOAD, .p_flags = PF_R | PF_W | PF_X, .p_vaddr = 0};
    im.eh.e_phnum = im.nph = 5;
    size_t code = code_off(5);
    im.len = code + CODE_LEN + DATA_LEN;
    im.eh.e_entry = TEXT_VADDR + code;
    im.ph[0].p_filesz = im.ph[0].p_memsz = code + CODE_LEN;
    im.ph[1].p_offset = code + CODE_LEN;
    expect_accept(&im, &out);
    assert_int_equal(out.nseg, 2);
    assert_int_equal(out.seg[1].vaddr, DATA_VADDR);
}

/* ELF-04: the end is the page-rounded end of the highest segment, whatever the order */
static void elf04_end_is_highest(TEST_STATE)
{
    struct image im = valid();
    struct elf_image out;
    Elf64_Phdr t = im.ph[0];
    im.ph[0] = im.ph[1];
    im.ph[1] = t;
    im.ph[0].p_memsz = BSS_LEN + 1; /* ends one byte into the next page */
    expect_accept(&im, &out);
    assert_int_equal(out.end, DATA_VADDR + BSS_LEN + 0x1000);
    assert_int_equal(out.seg[0].vaddr, DATA_VADDR);
    assert_int_equal(out.seg[1].vaddr, TEXT_VADDR);
}

/* ------------------------------------------------------------------ the header */

/* ELF-10: a wrong magic number is not an ELF file */
static void elf10_bad_magic(TEST_STATE)
{
    for (unsigned i = 0; i < 4; i++) {
        struct image im = valid();
        im.eh.e_ident[i] ^= 0x20;
        expect_reject(&im, R_NOT_ELF);
    }
}

/* ELF-11: 32-bit and big-endian files are refused */
static void elf11_class_and_data(TEST_STATE)
{
    struct image im = valid();
    im.eh.e_ident[EI_CLASS] = ELFCLASS32;
    expect_reject(&im, R_NOT_64LE);
    im = valid();
    im.eh.e_ident[EI_CLASS] = ELFCLASSNONE;
    expect_reject(&im, R_NOT_64LE);
    im = valid();
    im.eh.e_ident[EI_DATA] = ELFDATA2MSB;
    expect_reject(&im, R_NOT_64LE);
    im = valid();
    im.eh.e_ident[EI_DATA] = ELFDATANONE;
    expect_reject(&im, R_NOT_64LE);
}

/* ELF-12: another machine, a relocatable or a core file is refused; ET_DYN is accepted */
static void elf12_machine_and_type(TEST_STATE)
{
    static const uint16_t machines[] = {EM_X86_64, EM_ARM, EM_RISCV, 0};
    static const uint16_t types[] = {ET_REL, ET_CORE, ET_NONE, ET_LOPROC};
    for (unsigned i = 0; i < 4; i++) {
        struct image im = valid();
        im.eh.e_machine = machines[i];
        expect_reject(&im, R_NOT_EXEC);
        im = valid();
        im.eh.e_type = types[i];
        expect_reject(&im, R_NOT_EXEC);
    }
    struct image im = valid();
    im.eh.e_type = ET_DYN; /* a position-independent executable: accepted (DYN-01) */
    struct elf_image out;
    expect_accept(&im, &out);
    assert_true(out.pic);
}

/* ELF-13: program headers out of bounds: past the end, overflowing, none, or the wrong size */
static void elf13_phdrs_out_of_bounds(TEST_STATE)
{
    struct image im = valid();
    im.eh.e_phoff = im.len + 1;
    expect_reject(&im, R_PH_BOUNDS);
    im = valid();
    im.eh.e_phoff = im.len - sizeof(Elf64_Phdr) + 1; /* the last one sticks out */
    im.eh.e_phnum = 1;
    expect_reject(&im, R_PH_BOUNDS);
    im = valid();
    im.eh.e_phoff = UINT64_MAX - 8; /* phoff + size would wrap */
    expect_reject(&im, R_PH_BOUNDS);
    im = valid();
    im.eh.e_phnum = 0xffff;
    expect_reject(&im, R_PH_BOUNDS);
    im = valid();
    im.eh.e_phnum = 0;
    expect_reject(&im, R_PH_BOUNDS);
    im = valid();
    im.eh.e_phentsize = sizeof(Elf64_Phdr) - 1;
    expect_reject(&im, R_PH_BOUNDS);
    im = valid();
    im.eh.e_phentsize = 0;
    expect_reject(&im, R_PH_BOUNDS);
}

/* ------------------------------------------------------------------ segments */

/* ELF-21: a segment whose bytes are not all inside the file */
static void elf21_segment_outside_file(TEST_STATE)
{
    struct image im = valid();
    im.ph[1].p_offset = im.len + 1;
    expect_reject(&im, R_OUTSIDE);
    im = valid();
    im.ph[1].p_filesz = DATA_LEN + 1; /* one byte past the end */
    expect_reject(&im, R_OUTSIDE);
    im = valid();
    im.ph[1].p_offset = UINT64_MAX - 4; /* offset + filesz wraps */
    expect_reject(&im, R_OUTSIDE);
    im = valid();
    im.ph[1].p_offset = im.len; /* empty file part at the very end is fine */
    im.ph[1].p_filesz = 0;
    struct elf_image out;
    expect_accept(&im, &out);
}

/* ELF-22: filesz larger than memsz is refused */
static void elf22_filesz_over_memsz(TEST_STATE)
{
    struct image im = valid();
    im.ph[1].p_memsz = DATA_LEN - 1;
    expect_reject(&im, R_OUTSIDE);
    im = valid();
    im.ph[1].p_memsz = DATA_LEN; /* equal is fine */
    struct elf_image out;
    expect_accept(&im, &out);
}

/* ELF-23: a segment in kernel space, past the top of user space, or wrapping */
static void elf23_kernel_space(TEST_STATE)
{
    static const uint64_t bad_vaddrs[] = {
        0xffff000000000000ull,          /* the kernel's half */
        0x0000800000000000ull,          /* far above user space */
        0x0000008000000000ull,          /* USER_VA_TOP itself */
        0x0000008000000000ull - 0x1000, /* last page, but memsz is 0x2000 */
        UINT64_MAX - 0xfff,             /* vaddr + memsz wraps */
    };
    for (unsigned i = 0; i < sizeof(bad_vaddrs) / sizeof(bad_vaddrs[0]); i++) {
        struct image im = valid();
        im.ph[1].p_vaddr = bad_vaddrs[i];
        expect_reject(&im, R_USER_SPACE);
    }
    struct image im = valid();
    im.ph[1].p_memsz = UINT64_MAX;
    expect_reject(&im, R_USER_SPACE);
    im = valid();
    im.ph[1].p_vaddr = 0x0000008000000000ull - BSS_LEN; /* ends exactly at the top: fine */
    struct elf_image out;
    expect_accept(&im, &out);
    assert_int_equal(out.end, 0x0000008000000000ull);
}

/* ELF-24: a segment in page 0 is refused; page 1 is fine */
static void elf24_page_zero(TEST_STATE)
{
    struct image im = valid();
    im.ph[1].p_vaddr = 0;
    expect_reject(&im, R_USER_SPACE);
    im = valid();
    im.ph[1].p_vaddr = 0xfff;
    expect_reject(&im, R_USER_SPACE);
    im = valid();
    im.ph[1].p_vaddr = 0x1000;
    struct elf_image out;
    expect_accept(&im, &out);
}

/* ELF-25: a writable and executable segment is refused (W^X) */
static void elf25_writable_executable(TEST_STATE)
{
    struct image im = valid();
    im.ph[0].p_flags = PF_R | PF_W | PF_X;
    expect_reject(&im, R_WX);
    im = valid();
    im.ph[1].p_flags = PF_W | PF_X;
    expect_reject(&im, R_WX);
}

/* ELF-26: segments that overlap or share a page are refused; adjacent pages are fine */
static void elf26_overlap(TEST_STATE)
{
    struct image im = valid();
    im.ph[1].p_vaddr = TEXT_VADDR; /* the same place */
    expect_reject(&im, R_SHARE);
    im = valid();
    im.ph[1].p_vaddr = TEXT_VADDR + 0x800; /* same page, no byte in common */
    expect_reject(&im, R_SHARE);
    im = valid();
    im.ph[1].p_vaddr = TEXT_VADDR - 0x1000; /* data's bss runs over the text */
    expect_reject(&im, R_SHARE);
    im = valid();
    im.ph[0].p_vaddr = DATA_VADDR + BSS_LEN - 8; /* text in data's last page */
    im.eh.e_entry = im.ph[0].p_vaddr;
    expect_reject(&im, R_SHARE);
    im = valid();
    im.ph[1].p_vaddr = TEXT_VADDR + 0x1000; /* the next page: fine */
    struct elf_image out;
    expect_accept(&im, &out);
}

/* ELF-27: the entry point must be inside an executable segment */
static void elf27_entry(TEST_STATE)
{
    struct image im = valid();
    im.eh.e_entry = DATA_VADDR; /* in the data segment */
    expect_reject(&im, R_ENTRY);
    im = valid();
    im.eh.e_entry = TEXT_VADDR + im.ph[0].p_memsz; /* one past the text */
    expect_reject(&im, R_ENTRY);
    im = valid();
    im.eh.e_entry = TEXT_VADDR - 4;
    expect_reject(&im, R_ENTRY);
    im = valid();
    im.eh.e_entry = 0;
    expect_reject(&im, R_ENTRY);
    im = valid();
    im.ph[0].p_type = PT_NULL; /* no PT_LOAD with code at all */
    expect_reject(&im, R_ENTRY);

    struct elf_image out;
    im = valid();
    im.eh.e_entry = TEXT_VADDR; /* first byte */
    expect_accept(&im, &out);
    im.eh.e_entry = TEXT_VADDR + im.ph[0].p_memsz - 1; /* last byte */
    expect_accept(&im, &out);
    assert_int_equal(out.entry, TEXT_VADDR + im.ph[0].p_memsz - 1);
}

/* im with its second program header replaced by `ph` (the data segment dropped). */
static struct image with_other(Elf64_Phdr ph)
{
    struct image im = valid();
    im.ph[1] = ph;
    return im;
}

/* ELF-29: AT_PHDR: PT_PHDR's address when it is inside a loaded segment; otherwise the
 * address of the loaded file bytes holding the headers; 0 when none holds them. */
static void elf29_phdr(TEST_STATE)
{
    struct elf_image out;
    struct image im = valid();
    expect_accept(&im, &out); /* the text segment starts at file offset 0 */
    assert_int_equal(out.phdr, TEXT_VADDR + sizeof(Elf64_Ehdr));
    assert_int_equal(out.phnum, 2);
    assert_int_equal(out.phent, sizeof(Elf64_Phdr));
    im = valid();
    im.ph[0].p_offset = sizeof(Elf64_Ehdr) + 2 * sizeof(Elf64_Phdr); /* headers not loaded */
    im.ph[0].p_filesz = im.ph[0].p_memsz = CODE_LEN;
    im.eh.e_entry = TEXT_VADDR;
    expect_accept(&im, &out);
    assert_int_equal(out.phdr, 0);
    Elf64_Phdr ph = {.p_type = PT_PHDR, .p_vaddr = TEXT_VADDR + 0x40, .p_memsz = 0x70};
    im = with_other(ph);
    expect_accept(&im, &out);
    assert_int_equal(out.phdr, TEXT_VADDR + 0x40);
    ph.p_vaddr = DATA_VADDR; /* nothing loaded there (the data segment is gone) */
    im = with_other(ph);
    expect_reject(&im, R_PHDR);
}

/* ELF-2A: PT_GNU_STACK asking for an executable stack is refused (W^X); RW is fine. */
static void elf2a_gnu_stack(TEST_STATE)
{
    struct elf_image out;
    Elf64_Phdr ph = {.p_type = PT_GNU_STACK, .p_flags = PF_R | PF_W};
    struct image im = with_other(ph);
    expect_accept(&im, &out);
    ph.p_flags |= PF_X;
    im = with_other(ph);
    expect_reject(&im, R_EXECSTACK);
}

/* ELF-2B: PT_TLS must lie in the file, filesz <= memsz, alignment a power of two. */
static void elf2b_tls(TEST_STATE)
{
    struct elf_image out;
    struct image im = valid();
    Elf64_Phdr ph = {.p_type = PT_TLS, .p_offset = 0, .p_filesz = 8, .p_memsz = 64, .p_align = 16};
    im = with_other(ph);
    expect_accept(&im, &out);
    Elf64_Phdr bad[] = {ph, ph, ph, ph};
    bad[0].p_offset = im.len; /* past the end */
    bad[1].p_filesz = 128;    /* more in the file than in memory */
    bad[2].p_align = 24;      /* not a power of two */
    bad[3].p_memsz = 1ull << 40;
    for (unsigned i = 0; i < 4; i++) {
        im = with_other(bad[i]);
        expect_reject(&im, R_TLS);
    }
}

/* im with n PT_LOAD segments: the text plus n-1 one-page data segments a page apart. */
static struct image with_segments(unsigned n)
{
    struct image im = valid();
    im.eh.e_phnum = im.nph = n;
    size_t code = code_off(n);
    im.len = code + CODE_LEN + DATA_LEN;
    im.eh.e_entry = TEXT_VADDR + code;
    im.ph[0].p_filesz = im.ph[0].p_memsz = code + CODE_LEN;
    for (unsigned i = 1; i < n; i++) {
        im.ph[i] = (Elf64_Phdr){.p_type = PT_LOAD,
                                .p_flags = PF_R | PF_W,
                                .p_offset = code + CODE_LEN,
                                .p_vaddr = DATA_VADDR + 0x2000ull * i,
                                .p_filesz = DATA_LEN,
                                .p_memsz = 0x1000};
    }
    return im;
}

/* ELF-28: up to ELF_MAX_SEGMENTS loadable segments are accepted, one more is refused */
static void elf28_too_many_segments(TEST_STATE)
{
    struct elf_image out;
    struct image im = with_segments(ELF_MAX_SEGMENTS);
    expect_accept(&im, &out);
    assert_int_equal(out.nseg, ELF_MAX_SEGMENTS);
    assert_int_equal(out.end, DATA_VADDR + 0x2000ull * (ELF_MAX_SEGMENTS - 1) + 0x1000);
    im = with_segments(ELF_MAX_SEGMENTS + 1);
    expect_reject(&im, R_TOO_MANY);
}

/* ------------------------------------------------------------------ truncation, corruption */

/* ELF-30: every proper prefix of the valid file is refused, with the reason for where it ends */
static void elf30_truncation(TEST_STATE)
{
    struct image im = valid();
    unsigned char *file = render(&im);
    size_t code = code_off(2);
    for (size_t len = 0; len < im.len; len++) {
        struct elf_image out;
        const char *why;
        int r = check_bytes(file, len, &out, &why);
        const char *want = len < sizeof(Elf64_Ehdr) ? R_NOT_ELF
                           : len < code             ? R_PH_BOUNDS
                                                    : R_OUTSIDE;
        if (r != -ENOEXEC || !why || strcmp(why, want) != 0) {
            fail_msg("length %zu of %zu: got %d \"%s\", want -ENOEXEC \"%s\"", len, im.len, r,
                     why ? why : "(null)", want);
        }
    }
    struct elf_image out;
    const char *why;
    assert_int_equal(check_bytes(file, im.len, &out, &why), 0);
    free(file);
}

static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static bool known_reason(const char *why)
{
    static const char *const reasons[] = {
        R_NOT_ELF,    R_NOT_64LE, R_NOT_EXEC,   R_PH_BOUNDS,  R_TOO_MANY,  R_OUTSIDE,
        R_USER_SPACE, R_WX,       R_SHARE,      R_ENTRY,      R_EXECSTACK, R_TLS,
        R_PHDR,       R_INTERP2,  R_INTERP_OUT, R_INTERP_LEN, R_INTERP_NUL};
    for (unsigned i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++) {
        if (why && strcmp(why, reasons[i]) == 0) {
            return true;
        }
    }
    return false;
}

/* What an accepted image must satisfy, checked independently of elf.c (a
 * position-independent one once elf_place has put it at DYN_BASE). */
static void check_accepted(struct elf_image *img, size_t len, unsigned iter)
{
    bool entry_ok = false;
    const char *why;
    if (img->pic && elf_place(img, DYN_BASE, &why) != 0) {
        return; /* refused where it would not fit: nothing to load */
    }
    if (img->nseg == 0 || img->nseg > ELF_MAX_SEGMENTS) {
        fail_msg("iteration %u: accepted with %u segments", iter, img->nseg);
    }
    for (unsigned i = 0; i < img->nseg; i++) {
        const struct elf_segment *s = &img->seg[i];
        uint64_t end = s->vaddr + s->memsz;
        if (s->filesz > s->memsz || s->offset > len || s->filesz > len - s->offset ||
            s->vaddr < 0x1000 || end < s->vaddr || end > 0x0000008000000000ull ||
            ((s->prot & PROT_WRITE) && (s->prot & PROT_EXEC)) || (img->end & 0xfff) ||
            img->end < end) {
            fail_msg("iteration %u: accepted a bad segment %u (vaddr %#llx memsz %#llx)", iter, i,
                     (unsigned long long)s->vaddr, (unsigned long long)s->memsz);
        }
        for (unsigned j = 0; j < i; j++) {
            const struct elf_segment *o = &img->seg[j];
            uint64_t s0 = s->vaddr & ~0xfffull, e0 = (end + 0xfff) & ~0xfffull;
            uint64_t s1 = o->vaddr & ~0xfffull, e1 = (o->vaddr + o->memsz + 0xfff) & ~0xfffull;
            if (s0 < e1 && s1 < e0) {
                fail_msg("iteration %u: accepted segments %u and %u sharing a page", iter, j, i);
            }
        }
        if ((s->prot & PROT_EXEC) && img->entry >= s->vaddr && img->entry < end) {
            entry_ok = true;
        }
    }
    if (!entry_ok) {
        fail_msg("iteration %u: accepted entry %#llx outside executable segments", iter,
                 (unsigned long long)img->entry);
    }
}

/* Corrupt `base` (len bytes, headers in its first hdr_len) `iters` times at a fixed seed:
 * elf_check never crashes or reads out of bounds, refuses with a known reason, and what it
 * accepts is a valid image.  Returns how many were accepted. */
static unsigned corruption_sweep(const unsigned char *base, size_t len0, size_t hdr_len,
                                 unsigned iters)
{
    static const unsigned char interesting[] = {0x00, 0x01, 0x02, 0x03, 0x05, 0x07,
                                                0x10, 0x40, 0x7f, 0x80, 0xff, 0xfe};
    unsigned accepted = 0;
    for (unsigned iter = 0; iter < iters; iter++) {
        size_t len = len0;
        unsigned char buf[512];
        memcpy(buf, base, len);
        unsigned flips = 1 + (unsigned)(rng() % 6);
        for (unsigned f = 0; f < flips; f++) {
            size_t pos = (size_t)(rng() % len);
            /* bias towards the headers, where the decisions are */
            if (rng() % 4 != 0) {
                pos = (size_t)(rng() % hdr_len);
            }
            buf[pos] = rng() % 2 ? (unsigned char)rng() : interesting[rng() % sizeof(interesting)];
        }
        if (rng() % 8 == 0) {
            len = (size_t)(rng() % (len + 1));
        } else if (rng() % 8 == 0) {
            len += (size_t)(rng() % 64); /* extra bytes (zeros from the buffer) */
            memset(buf + len0, 0, len - len0);
        }
        struct elf_image out;
        const char *why;
        int r = check_bytes(buf, len, &out, &why);
        if (r == 0) {
            accepted++;
            check_accepted(&out, len, iter);
            size_t n = strnlen(out.interp, sizeof(out.interp));
            if (n == sizeof(out.interp)) {
                fail_msg("iteration %u: accepted an interpreter path without a NUL", iter);
            }
        } else if (r != -ENOEXEC || !known_reason(why)) {
            fail_msg("iteration %u: elf_check returned %d (\"%s\")", iter, r, why ? why : "(null)");
        }
    }
    return accepted;
}

/* ELF-31: a fixed-seed random-corruption sweep never crashes or reads out of bounds, and
 * anything accepted is still a valid image */
static void elf31_random_corruption(TEST_STATE)
{
    struct image im = valid();
    unsigned char *base = render(&im);
    unsigned accepted = corruption_sweep(base, im.len, code_off(2), 20000);
    free(base);
    /* corruption of the code, data or padding bytes leaves a valid file: some must pass */
    assert_true(accepted > 0);
}

/* ------------------------------------------------------------------ position-independent */

/* The valid file as a position-independent executable: the same layout at relative addresses
 * (text at 0, data 64 KiB above), 64 KiB-aligned segments as Debian's toolchain links them. */
static struct image valid_pie(void)
{
    struct image im = valid();
    im.eh.e_type = ET_DYN;
    im.eh.e_entry -= TEXT_VADDR;
    im.ph[0].p_vaddr = im.ph[0].p_paddr = 0;
    im.ph[1].p_vaddr = im.ph[1].p_paddr = DATA_VADDR - TEXT_VADDR;
    im.ph[0].p_align = im.ph[1].p_align = 0x10000;
    return im;
}

/* DYN-01: an ET_DYN file is accepted at relative addresses (its text at 0), and elf_place
 * moves every address by one bias: entry, segments, program headers, end; an ET_EXEC image
 * stays where it is */
static void dyn01_pie_placed(TEST_STATE)
{
    struct image im = valid_pie();
    struct elf_image out;
    const char *why;
    expect_accept(&im, &out);
    assert_true(out.pic);
    assert_int_equal(out.lo, 0);
    assert_int_equal(out.align, 0x10000);
    assert_int_equal(out.end, 0x10000 + BSS_LEN);
    assert_int_equal(out.phdr, sizeof(Elf64_Ehdr));
    assert_string_equal(out.interp, "");
    assert_int_equal(elf_place(&out, DYN_BASE, &why), 0);
    assert_false(out.pic);
    assert_int_equal(out.bias, DYN_BASE);
    assert_int_equal(out.entry, DYN_BASE + code_off(2));
    assert_int_equal(out.phdr, DYN_BASE + sizeof(Elf64_Ehdr));
    assert_int_equal(out.seg[0].vaddr, DYN_BASE);
    assert_int_equal(out.seg[1].vaddr, DYN_BASE + 0x10000);
    assert_int_equal(out.lo, DYN_BASE);
    assert_int_equal(out.end, DYN_BASE + 0x10000 + BSS_LEN);
    im = valid();
    expect_accept(&im, &out);
    assert_int_equal(elf_place(&out, DYN_BASE, &why), 0);
    assert_int_equal(out.entry, TEXT_VADDR + code_off(2));
    assert_int_equal(out.bias, 0);
    assert_int_equal(out.seg[0].vaddr, TEXT_VADDR);
}

/* DYN-02: elf_place refuses a base that is not page-aligned, page 0, or one where the image
 * would pass the top of user space, and leaves the image as it was; ending exactly at the top
 * is fine */
static void dyn02_place_refused(TEST_STATE)
{
    static const uint64_t bad[] = {DYN_BASE + 8, 0, 0x0000008000000000ull - 0x1000,
                                   0x0000008000000000ull, UINT64_MAX & ~0xfffull};
    struct image im = valid_pie();
    struct elf_image out;
    const char *why;
    for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        why = NULL;
        expect_accept(&im, &out);
        assert_int_equal(elf_place(&out, bad[i], &why), -ENOEXEC);
        assert_non_null(why);
        assert_string_equal(why, R_PLACE);
        assert_true(out.pic);
        assert_int_equal(out.entry, code_off(2));
    }
    expect_accept(&im, &out);
    assert_int_equal(elf_place(&out, 0x0000008000000000ull - (0x10000 + BSS_LEN), &why), 0);
    assert_int_equal(out.end, 0x0000008000000000ull);
}

/* The PIE with a third program header, PT_INTERP at the end of the file: `n` bytes of `path`
 * appended, filesz as given, the offset moved by `offset_delta` (a value past 64 KiB is the
 * offset itself).  *len gets the file's length (caller frees). */
static unsigned char *pie_with_interp(const void *path, size_t n, uint64_t offset_delta,
                                      uint64_t filesz, size_t *len)
{
    struct image im = valid_pie();
    im.eh.e_phnum = im.nph = 3;
    size_t code = code_off(3);
    im.len = code + CODE_LEN + DATA_LEN;
    im.eh.e_entry = code;
    im.ph[0].p_filesz = im.ph[0].p_memsz = code + CODE_LEN;
    im.ph[1].p_offset = code + CODE_LEN;
    im.ph[2] =
        (Elf64_Phdr){.p_type = PT_INTERP,
                     .p_flags = PF_R,
                     .p_offset = offset_delta > 0xffff ? offset_delta : im.len + offset_delta,
                     .p_filesz = filesz,
                     .p_align = 1};
    unsigned char *head = render(&im);
    unsigned char *file = malloc(im.len + n);
    assert_non_null(file);
    memcpy(file, head, im.len);
    memcpy(file + im.len, path, n);
    free(head);
    *len = im.len + n;
    return file;
}

static void expect_interp(const void *path, size_t n, uint64_t offset_delta, uint64_t filesz,
                          const char *reason)
{
    size_t len;
    unsigned char *file = pie_with_interp(path, n, offset_delta, filesz, &len);
    struct elf_image out;
    const char *why = NULL;
    int r = check_bytes(file, len, &out, &why);
    free(file);
    if (reason) {
        if (r != -ENOEXEC || !why || strcmp(why, reason) != 0) {
            fail_msg("got %d \"%s\", want -ENOEXEC \"%s\"", r, why ? why : "(null)", reason);
        }
        assert_string_equal(out.interp, "");
    } else {
        assert_int_equal(r, 0);
        assert_string_equal(out.interp, (const char *)path);
    }
}

/* DYN-03: PT_INTERP: a NUL-terminated path inside the file is kept; one without its NUL,
 * empty, longer than ELF_INTERP_MAX, outside the file, or a second PT_INTERP is refused,
 * each with its reason */
static void dyn03_interp(TEST_STATE)
{
    static const char ld[] = "/lib/ld-linux-aarch64.so.1";
    expect_interp(ld, sizeof(ld), 0, sizeof(ld), NULL);
    expect_interp(ld, sizeof(ld) - 1, 0, sizeof(ld) - 1, R_INTERP_NUL); /* no NUL */
    expect_interp(ld, sizeof(ld), 0, sizeof(ld) - 1, R_INTERP_NUL);     /* NUL left out */
    expect_interp("\0abc", 5, 0, 5, R_INTERP_LEN);                      /* starts with NUL */
    expect_interp("", 1, 0, 1, R_INTERP_LEN);
    char long_path[ELF_INTERP_MAX + 1];
    memset(long_path, 'a', sizeof(long_path));
    long_path[ELF_INTERP_MAX] = 0;
    expect_interp(long_path, sizeof(long_path), 0, sizeof(long_path), R_INTERP_LEN);
    long_path[ELF_INTERP_MAX - 1] = 0; /* the longest: 255 bytes and the NUL */
    expect_interp(long_path, ELF_INTERP_MAX, 0, ELF_INTERP_MAX, NULL);
    expect_interp(ld, sizeof(ld), 1, sizeof(ld), R_INTERP_OUT);              /* one past the end */
    expect_interp(ld, sizeof(ld), UINT64_MAX - 8, sizeof(ld), R_INTERP_OUT); /* wraps */
    size_t len;
    unsigned char *file = pie_with_interp(ld, sizeof(ld), 0, sizeof(ld), &len);
    Elf64_Ehdr *eh = (Elf64_Ehdr *)file;
    Elf64_Phdr *ph = (Elf64_Phdr *)(file + eh->e_phoff);
    ph[1] = ph[2]; /* the data segment becomes a second PT_INTERP */
    struct elf_image out;
    const char *why = NULL;
    assert_int_equal(check_bytes(file, len, &out, &why), -ENOEXEC);
    assert_string_equal(why, R_INTERP2);
    free(file);
}

struct reader_ctx {
    const unsigned char *bytes;
    size_t fail_at; /* a read reaching this offset fails with -EIO */
    unsigned reads;
};

static int test_read(void *ctx, uint64_t off, void *buf, size_t n)
{
    struct reader_ctx *c = ctx;
    c->reads++;
    if (off + n > c->fail_at) {
        return -EIO;
    }
    memcpy(buf, c->bytes + off, n);
    return 0;
}

/* DYN-04: a file read through a reader function (a /tmp file) gives the same image as from
 * memory, a page-sized read at most at a time; a failing read is returned as it is */
static void dyn04_reader(TEST_STATE)
{
    static const char ld[] = "/lib/ld-linux-aarch64.so.1";
    size_t len;
    unsigned char *file = pie_with_interp(ld, sizeof(ld), 0, sizeof(ld), &len);
    struct elf_image a, b;
    const char *why;
    assert_int_equal(check_bytes(file, len, &a, &why), 0);
    struct reader_ctx c = {file, len, 0};
    struct elf_file f = {.size = len, .read = test_read, .ctx = &c};
    assert_int_equal(elf_check_file(&f, &b, &why), 0);
    assert_memory_equal(&a, &b, sizeof(a));
    assert_int_equal(c.reads, 1 + 3 + 1);    /* the header, 3 program headers, the path */
    for (size_t cut = 0; cut < len; cut++) { /* every read that reaches the cut fails */
        c = (struct reader_ctx){file, cut, 0};
        int r = elf_check_file(&f, &b, &why);
        if (r != -EIO) {
            fail_msg("reads failing from byte %zu: elf_check_file returned %d", cut, r);
        }
    }
    free(file);
}

/* DYN-05: the random-corruption sweep of ELF-31 on a position-independent file with
 * PT_INTERP: no crash, no read out of bounds, known reasons, accepted images valid once placed
 * and their interpreter path NUL-terminated */
static void dyn05_random_corruption(TEST_STATE)
{
    static const char ld[] = "/lib/ld-linux-aarch64.so.1";
    size_t len;
    unsigned char *file = pie_with_interp(ld, sizeof(ld), 0, sizeof(ld), &len);
    assert_true(len <= 512);
    unsigned accepted = corruption_sweep(file, len, code_off(3), 20000);
    free(file);
    assert_true(accepted > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(elf01_valid),
        cmocka_unit_test(elf02_trailing_bytes),
        cmocka_unit_test(elf03_other_segments_skipped),
        cmocka_unit_test(elf04_end_is_highest),
        cmocka_unit_test(elf10_bad_magic),
        cmocka_unit_test(elf11_class_and_data),
        cmocka_unit_test(elf12_machine_and_type),
        cmocka_unit_test(elf13_phdrs_out_of_bounds),
        cmocka_unit_test(elf21_segment_outside_file),
        cmocka_unit_test(elf22_filesz_over_memsz),
        cmocka_unit_test(elf23_kernel_space),
        cmocka_unit_test(elf24_page_zero),
        cmocka_unit_test(elf25_writable_executable),
        cmocka_unit_test(elf26_overlap),
        cmocka_unit_test(elf27_entry),
        cmocka_unit_test(elf28_too_many_segments),
        cmocka_unit_test(elf29_phdr),
        cmocka_unit_test(elf2a_gnu_stack),
        cmocka_unit_test(elf2b_tls),
        cmocka_unit_test(elf30_truncation),
        cmocka_unit_test(elf31_random_corruption),
        cmocka_unit_test(dyn01_pie_placed),
        cmocka_unit_test(dyn02_place_refused),
        cmocka_unit_test(dyn03_interp),
        cmocka_unit_test(dyn04_reader),
        cmocka_unit_test(dyn05_random_corruption),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
