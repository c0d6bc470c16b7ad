/* SPDX-License-Identifier: MIT */
/*
 * exec.h — starting a program image the way Linux does: an ELF loaded into a fresh address
 * space, and the initial stack a C library's start-up code reads (argc, argv, envp and the
 * auxiliary vector).  Used by execve, by spawn and for init.
 *
 * The argument and environment strings are copied straight from where they are (another
 * address space, or the kernel for init) to the new stack, never through a big kernel
 * buffer.  Limits: EXEC_ARG_COUNT strings and EXEC_ARG_BYTES bytes for argv and envp
 * together, -E2BIG past them.
 */
#ifndef ZT_KERNEL_EXEC_H
#define ZT_KERNEL_EXEC_H

#include <stdint.h>

#include "kernel/vm.h"

#define EXEC_ARG_COUNT 1024
#define EXEC_ARG_BYTES (32 * 1024)

/* Linux auxiliary vector keys (include/uapi/linux/auxvec.h, the arm64 additions). */
#define AT_NULL         0
#define AT_PHDR         3
#define AT_PHENT        4
#define AT_PHNUM        5
#define AT_PAGESZ       6
#define AT_BASE         7
#define AT_FLAGS        8
#define AT_ENTRY        9
#define AT_UID          11
#define AT_EUID         12
#define AT_GID          13
#define AT_EGID         14
#define AT_PLATFORM     15
#define AT_HWCAP        16
#define AT_CLKTCK       17
#define AT_SECURE       23
#define AT_RANDOM       25
#define AT_HWCAP2       26
#define AT_EXECFN       31
#define AT_SYSINFO_EHDR 33
#define AT_MINSIGSTKSZ  51

/* A NULL-terminated string array: user pointers in `vm` (uarray), or kernel pointers
 * (karray) when vm is NULL.  An absent array (uarray 0 / karray NULL) counts as empty. */
struct exec_strv {
    struct vm *vm;
    uint64_t uarray;
    char *const *karray;
};

/* Where the new image starts. */
struct exec_start {
    uint64_t pc, sp;
    uint64_t brk;    /* page-aligned end of the image: the heap starts there */
    const char *why; /* after a refusal of the file or its interpreter: the reason, or NULL */
};

/* The environment a program gets when nobody gives it one (init, spawn without envp). */
extern char *const exec_default_env[];

/* Boot: the signal-return page every process maps (see ZT_SIGTRAMP_VA). */
void exec_init(void);

/* Load the program at `path` (looked up from `cwd`) into the empty address space `vm` with
 * argv and envp, and its interpreter if it names one (PT_INTERP, looked up from `cwd` too);
 * fill *start and give the program's inode, referenced, in *exe.  0 or -errno (ENOENT, EACCES
 * for a directory or a file without an x bit, ENOEXEC with start->why, E2BIG, EFAULT, ENOMEM,
 * ENOENT for a missing interpreter, ELIBBAD for a bad one, ...); on failure `vm` may hold a
 * partial image, which the caller destroys. */
struct inode;
int exec_load(struct vm *vm, struct inode *cwd, const char *path, const struct exec_strv *argv,
              const struct exec_strv *envp, struct exec_start *start, struct inode **exe);

struct trap_frame;
/* execve(path, argv, envp): on success the caller's process runs the new image. */
long sys_execve(struct trap_frame *f);

/* Load an ELF already in kernel memory (file bytes [data, data+size)) into `vm`: the part of
 * exec_load after the file is found (unit-tested on the host). */
int exec_load_image(struct vm *vm, const void *data, uint64_t size, const char *execfn,
                    const struct exec_strv *argv, const struct exec_strv *envp,
                    struct exec_start *start);

#endif
