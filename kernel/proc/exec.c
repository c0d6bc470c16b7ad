/* SPDX-License-Identifier: MIT */
/*
 * exec.c — program images and the Linux initial stack (contract in include/kernel/exec.h).
 *
 * The initial stack, from USER_STACK_TOP down (what glibc's and musl's start-up code read;
 * the layout Linux's fs/binfmt_elf.c builds):
 *
 *     8 zero bytes, the file name (AT_EXECFN), the argv strings, the envp strings,
 *     "aarch64" (AT_PLATFORM), 16 random bytes (AT_RANDOM), padding to 16 bytes,
 *     auxv pairs ending with AT_NULL, NULL, envp[], NULL, argv[], argc   <- SP (16-aligned)
 *
 * Every string is measured first (limits, -EFAULT before anything is written), then copied
 * in chunks from its source address space to the new one, and NUL-terminated at the
 * measured length whatever the source says by then (another thread may change it).
 *
 * A dynamically linked program (PT_INTERP) is loaded as Linux loads it: the program itself,
 * placed at EXEC_PIE_BASE if it is position-independent, and beside it the interpreter it
 * names (ld-linux-aarch64.so.1, musl's loader), an ET_DYN placed at the top of mmap's area;
 * the program starts at the interpreter's entry, which finds the program through AT_PHDR,
 * AT_ENTRY and AT_BASE and maps the shared libraries itself with mmap.  A static-pie (ET_DYN
 * without PT_INTERP) is placed at EXEC_PIE_BASE and relocates itself.  Programs and
 * interpreters are read from the initrd where their bytes are, or from /tmp a page at a
 * time; their pages are copies, so the file can change or go away afterwards.
 */
#include "kernel/exec.h"
#include "arch.h"
#include "kernel/cpu.h"
#include "kernel/elf.h"
#include "kernel/hklog.h"
#include "kernel/kmem.h"
#include "kernel/lib.h"
#include "kernel/page.h"
#include "kernel/random.h"
#include "kernel/stats.h"
#include "kernel/task.h"
#include "kernel/vdso.h"
#include "kernel/vfs.h"
#include "uapi/zt_errno.h"
#include "uapi/zt_syscall.h"

#define MAX_AUXV      24
#define SIGTRAMP_INSN 2
/* Where a position-independent program is placed (rounded up to its segments' alignment):
 * two thirds of the way up the 39-bit user space, as Linux's ELF_ET_DYN_BASE on arm64, far
 * from mmap's area below USER_MMAP_TOP, where the interpreter goes. */
#define EXEC_PIE_BASE 0x0000005555550000ull

char *const exec_default_env[] = {"HOME=/", "PATH=/usr/bin:/bin", "TERM=vt100", 0};

static paddr_t sigtramp_page;

void exec_init(void)
{
    /* mov x8, #139 (SYS_rt_sigreturn); svc #0 */
    static const uint32_t insn[SIGTRAMP_INSN] = {0xd2800008 | (SYS_rt_sigreturn << 5), 0xd4000001};
    sigtramp_page = page_alloc();
    if (sigtramp_page) {
        memcpy(phys_to_virt(sigtramp_page), insn, sizeof(insn));
        arch_sync_icache(phys_to_virt(sigtramp_page), sizeof(insn));
    }
}

/* The pages of every CPU's counters (read-only), the signal-return page (read, execute) and
 * the vDSO (its address in *vdso, 0 without one). */
static int map_kernel_pages(struct vm *vm, uint64_t *vdso)
{
    enum { PER_PAGE = PAGE_SIZE / ZT_COUNTERS_STRIDE };
    paddr_t pa[(MAX_CPUS + PER_PAGE - 1) / PER_PAGE];
    unsigned n = (ncpus + PER_PAGE - 1) / PER_PAGE;
    ASSERT(n && n <= sizeof(pa) / sizeof(pa[0])); /* ncpus <= MAX_CPUS */
    for (unsigned i = 0; i < n; i++) {
        pa[i] = virt_to_phys(stats_public(i * PER_PAGE));
    }
    int r = vm_map_kernel_pages(vm, ZT_COUNTERS_VA, pa, n, PROT_READ);
    if (r == 0 && sigtramp_page) {
        r = vm_map_kernel_pages(vm, ZT_SIGTRAMP_VA, &sigtramp_page, 1, PROT_READ | PROT_EXEC);
    }
    return r ? r : vdso_map(vm, vdso);
}

/* String i of s: its user address (*up) or kernel pointer (*kp); 0 at the end, or -EFAULT. */
static int strv_get(const struct exec_strv *s, int i, uint64_t *up, const char **kp)
{
    *up = 0;
    *kp = 0;
    if (!s->vm) {
        *kp = s->karray ? s->karray[i] : 0;
        return *kp ? 1 : 0;
    }
    if (!s->uarray) {
        return 0;
    }
    if (copy_from_user(s->vm, up, s->uarray + (uint64_t)i * 8, sizeof(*up))) {
        return -EFAULT;
    }
    return *up ? 1 : 0;
}

/* Count the strings of s and their bytes (NULs included), adding to *count and *bytes. */
static int strv_measure(const struct exec_strv *s, int *count, uint64_t *bytes)
{
    for (int i = 0;; i++) {
        uint64_t up;
        const char *kp;
        int r = strv_get(s, i, &up, &kp);
        if (r <= 0) {
            return r;
        }
        long len = kp ? (long)strlen(kp) : strnlen_user(s->vm, up, EXEC_ARG_BYTES);
        if (len < 0) {
            return len == -ENAMETOOLONG ? -E2BIG : (int)len;
        }
        *bytes += (uint64_t)len + 1;
        if (++*count > EXEC_ARG_COUNT || *bytes > EXEC_ARG_BYTES) {
            return -E2BIG;
        }
    }
}

/* Where build_stack writes: straight into vm, or, when the whole initial stack fits in
 * STACK_STAGE_BYTES (a program started with a few arguments), into a kernel buffer that is
 * written to vm in one vm_write_initial at the end (one lock and table walk per page
 * instead of one per string, pointer and NUL). */
#define STACK_STAGE_BYTES 1024
struct stack_out {
    struct vm *vm;
    uint8_t *stage; /* 0: write straight into vm */
    uint64_t base;  /* the user address of stage[0] */
    uint64_t size;  /* bytes of stage in use */
};

static int stack_write(struct stack_out *o, uint64_t at, const void *src, size_t n)
{
    if (!o->stage) {
        return vm_write_initial(o->vm, at, src, n);
    }
    ASSERT(at >= o->base && at - o->base + n <= o->size); /* build_stack's layout */
    memcpy(o->stage + (at - o->base), src, n);
    return 0;
}

static int put_word(struct stack_out *o, uint64_t at, uint64_t v)
{
    return stack_write(o, at, &v, sizeof(v));
}

/* Copy string i of s (length as measured now, at most `room` bytes with its NUL) to `dst`
 * in vm; return its size with the NUL, or -errno. */
static long copy_string(struct stack_out *o, const struct exec_strv *s, int i, uint64_t dst,
                        uint64_t room)
{
    uint64_t up;
    const char *kp;
    int r = strv_get(s, i, &up, &kp);
    if (r <= 0) {
        return r < 0 ? r : -EFAULT; /* the array shrank since it was measured */
    }
    long len = kp ? (long)strlen(kp) : strnlen_user(s->vm, up, room);
    if (len < 0 || (uint64_t)len + 1 > room) {
        return -E2BIG;
    }
    char buf[128];
    for (long done = 0; done < len;) {
        size_t chunk = MIN(sizeof(buf), (size_t)(len - done));
        if (kp) {
            memcpy(buf, kp + done, chunk);
        } else if (copy_from_user(s->vm, buf, up + (uint64_t)done, chunk)) {
            return -EFAULT;
        }
        if (stack_write(o, dst + (uint64_t)done, buf, chunk)) {
            return -EFAULT;
        }
        done += (long)chunk;
    }
    char nul = 0;
    return stack_write(o, dst + (uint64_t)len, &nul, 1) ? -EFAULT : len + 1;
}

/* Copy the n strings of s to [*str, limit), storing their addresses at ptrs[0..n) and the
 * NULL after them.  Advances *str. */
static int copy_strv(struct stack_out *o, const struct exec_strv *s, int n, uint64_t *str,
                     uint64_t limit, uint64_t ptrs)
{
    for (int i = 0; i < n; i++) {
        long len = copy_string(o, s, i, *str, limit - *str);
        if (len < 0) {
            return (int)len;
        }
        if (put_word(o, ptrs + (uint64_t)i * 8, *str)) {
            return -EFAULT;
        }
        *str += (uint64_t)len;
    }
    return put_word(o, ptrs + (uint64_t)n * 8, 0);
}

/* The auxiliary vector for img (and its interpreter, if any: else NULL); AT_PHDR only when
 * the headers are loaded. */
static unsigned build_auxv(uint64_t *a, const struct elf_image *img, const struct elf_image *interp,
                           uint64_t vdso, uint64_t random, uint64_t platform, uint64_t execfn)
{
    unsigned n = 0;
#define AUX(k, v) (a[n++] = (k), a[n++] = (v))
    if (vdso) {
        AUX(AT_SYSINFO_EHDR, vdso); /* the vDSO's ELF header: glibc and musl look it up */
    }
    if (img->phdr) {
        AUX(AT_PHDR, img->phdr);
    }
    AUX(AT_PHENT, img->phent);
    AUX(AT_PHNUM, img->phnum);
    AUX(AT_PAGESZ, PAGE_SIZE);
    AUX(AT_BASE, interp ? interp->lo : 0); /* where the interpreter was placed */
    AUX(AT_FLAGS, 0);
    AUX(AT_ENTRY, img->entry); /* the program's own entry, which the interpreter calls */
    AUX(AT_UID, 0);
    AUX(AT_EUID, 0);
    AUX(AT_GID, 0);
    AUX(AT_EGID, 0);
    AUX(AT_SECURE, 0);
    AUX(AT_HWCAP, arch_user_hwcap(1));
    AUX(AT_HWCAP2, arch_user_hwcap(2));
    AUX(AT_CLKTCK, 100);
    AUX(AT_PLATFORM, platform);
    AUX(AT_RANDOM, random);
    AUX(AT_EXECFN, execfn);
    AUX(AT_MINSIGSTKSZ, ARCH_SIGFRAME_BYTES);
    AUX(AT_NULL, 0);
#undef AUX
    ASSERT(n <= 2 * MAX_AUXV); /* the caller's array */
    return n;
}

/* Build the initial stack in vm (already mapped below USER_STACK_TOP); *sp gets argc's
 * address. */
static int build_stack(struct vm *vm, const struct elf_image *img, const struct elf_image *interp,
                       uint64_t vdso, const char *execfn, const struct exec_strv *argv,
                       const struct exec_strv *envp, uint64_t *sp)
{
    int argc = 0, envc = 0;
    uint64_t bytes = 0, auxv[2 * MAX_AUXV];
    int r = strv_measure(argv, &argc, &bytes);
    if (r == 0) {
        r = strv_measure(envp, &envc, &bytes);
    }
    if (r) {
        return r;
    }
    struct exec_strv fn = {0, 0, (char *const[]){(char *)execfn, 0}};
    uint64_t top = USER_STACK_TOP - 8, fn_len = strlen(execfn) + 1;
    uint64_t execfn_at = top - fn_len, strings = execfn_at - bytes;
    uint64_t platform = (strings - 8) & ~7ull, random = platform - 16;
    unsigned naux = build_auxv(auxv, img, interp, vdso, random, platform, execfn_at);
    uint64_t words = 1 + (uint64_t)argc + 1 + (uint64_t)envc + 1 + naux;
    uint64_t at = ((random & ~15ull) - words * 8) & ~15ull;
    uint64_t argv_at = at + 8, envp_at = argv_at + ((uint64_t)argc + 1) * 8;
    ASSERT(!(at & 15) && envp_at + ((uint64_t)envc + 1 + naux) * 8 <= random); /* no overlap */
    uint8_t rnd[16];
    random_bytes(rnd, sizeof(rnd));
    uint8_t stage[STACK_STAGE_BYTES];
    struct stack_out o = {vm, 0, at, top - at};
    if (o.size <= sizeof(stage)) {
        o.stage = stage;
        memset(stage, 0, o.size); /* the gaps read as the fresh stack page's zeroes */
    }
    uint64_t str = strings;
    if (copy_string(&o, &fn, 0, execfn_at, fn_len) < 0 || stack_write(&o, platform, "aarch64", 8) ||
        stack_write(&o, random, rnd, 16) || put_word(&o, at, (uint64_t)argc) ||
        stack_write(&o, envp_at + ((uint64_t)envc + 1) * 8, auxv, naux * 8)) {
        return -EFAULT;
    }
    r = copy_strv(&o, argv, argc, &str, execfn_at, argv_at);
    vm->arg_start = strings;
    vm->arg_end = str;
    if (r == 0) {
        r = copy_strv(&o, envp, envc, &str, execfn_at, envp_at);
    }
    if (r == 0 && o.stage && vm_write_initial(vm, o.base, o.stage, o.size)) {
        r = -EFAULT;
    }
    *sp = at;
    return r;
}

/* A program refused (ENOEXEC, or a missing or bad interpreter): one console line with the
 * reason, per exec, printed by housekeeping (hklog: a refusal on a dataplane CPU costs it no
 * console write).  Who asked is named when a process did (init is started by the kernel). */
static void exec_refused(const char *path, const char *why, int err)
{
    const char *name = err == -ENOENT ? "ENOENT" : err == -ELIBBAD ? "ELIBBAD" : "ENOEXEC";
    const struct task *t = current();
    if (t && t->proc) {
        hklog("exec: pid %d (%s) cannot run %s: %s (%s)", t->proc->pid, t->proc->name, path, why,
              name);
    } else {
        hklog("exec: cannot run %s: %s (%s)", path, why, name);
    }
}

/* The program file `path` names: a regular file with an x bit (-EACCES otherwise). */
static int find_program(struct inode *cwd, const char *path, struct inode **out)
{
    int r = vfs_lookup(cwd, path, true, out);
    if (r) {
        return r;
    }
    if (!S_ISREG((*out)->mode) || !((*out)->mode & 0111)) {
        inode_put(*out);
        return -EACCES; /* a directory, a device, a file without an x bit */
    }
    return 0;
}

static int read_inode(void *ino, uint64_t off, void *buf, size_t n)
{
    return vfs_read_kernel(ino, off, buf, n);
}

/* A program file opened for loading: its inode (referenced) and how elf.c reads it. */
struct exec_file {
    struct inode *ino;
    struct elf_file f;
};

/* Open the program at `path` for loading: an initrd file is read where its bytes are, a /tmp
 * file through vfs_read_kernel, a page at a time. */
static int open_program(struct inode *cwd, const char *path, struct exec_file *x)
{
    int r = find_program(cwd, path, &x->ino);
    if (r) {
        return r;
    }
    const void *data;
    uint64_t size;
    if (vfs_file_bytes(x->ino, &data, &size) == 0) {
        x->f = (struct elf_file){.size = size, .mem = data};
    } else {
        size = __atomic_load_n(&x->ino->size, __ATOMIC_RELAXED);
        x->f = (struct elf_file){.size = size, .read = read_inode, .ctx = x->ino};
    }
    return 0;
}

/* The interpreter `img` names (PT_INTERP), checked, placed at the top of the mmap area (where
 * Linux puts it too: mmap's first choice) and loaded into vm; *interp describes it.  A
 * missing interpreter is -ENOENT as on Linux; one that is not a position-independent,
 * static, well-formed AArch64 ELF is -ELIBBAD (Linux's errno for a bad interpreter). */
static int load_interp(struct vm *vm, struct inode *cwd, const struct elf_image *img,
                       struct elf_image *interp, const char **why)
{
    struct exec_file x;
    int r = open_program(cwd, img->interp, &x);
    if (r) {
        *why = r == -ENOENT ? "interpreter not found" : "interpreter cannot be run";
        return r;
    }
    r = elf_check_file(&x.f, interp, why);
    if (r == 0 && interp->interp[0]) {
        *why = "interpreter is itself dynamically linked";
        r = -ELIBBAD;
    } else if (r == 0 && !interp->pic) {
        *why = "interpreter is not position-independent";
        r = -ELIBBAD;
    }
    if (r == 0) {
        uint64_t span = interp->end - interp->lo;
        uint64_t base = span < USER_MMAP_TOP ? (USER_MMAP_TOP - span) & ~(interp->align - 1) : 0;
        r = elf_place(interp, base, why);
    }
    if (r == 0) {
        r = elf_load(vm, &x.f, interp);
    }
    inode_put(x.ino); /* its bytes are copied: the address space does not hold the file */
    return r == -ENOEXEC ? -ELIBBAD : r;
}

/* Load the program `file` (and its interpreter, looked up from cwd) into the empty vm. */
static int load_elf(struct vm *vm, struct inode *cwd, const struct elf_file *file,
                    const char *execfn, const struct exec_strv *argv, const struct exec_strv *envp,
                    struct exec_start *start)
{
    struct elf_image img, interp;
    const char *why = 0;
    int r = elf_check_file(file, &img, &why);
    if (r == 0) {
        uint64_t a = img.align;
        r = elf_place(&img, (EXEC_PIE_BASE + a - 1) & ~(a - 1), &why);
    }
    if (r == 0) {
        r = elf_load(vm, file, &img);
    }
    bool dynamic = r == 0 && img.interp[0];
    if (dynamic) {
        r = load_interp(vm, cwd, &img, &interp, &why);
    }
    if (r == 0) {
        r = vm_map_stack(vm, USER_STACK_TOP, USER_STACK_SIZE, USER_STACK_POPULATED);
    }
    uint64_t vdso = 0;
    if (r == 0) {
        r = map_kernel_pages(vm, &vdso);
    }
    if (r == 0) {
        r = build_stack(vm, &img, dynamic ? &interp : 0, vdso, execfn, argv, envp, &start->sp);
    }
    if (r == 0) {
        start->pc = dynamic ? interp.entry : img.entry;
        start->brk = img.end;
        vm->brk_start = vm->brk = img.end;
    }
    start->why = r ? why : 0;
    if (why && (r == -ENOEXEC || r == -ENOENT || r == -ELIBBAD)) {
        exec_refused(execfn, why, r); /* a refusal with its reason (ENOENT: the interpreter) */
    }
    return r;
}

int exec_load_image(struct vm *vm, const void *data, uint64_t size, const char *execfn,
                    const struct exec_strv *argv, const struct exec_strv *envp,
                    struct exec_start *start)
{
    struct elf_file f = {.size = size, .mem = data};
    return load_elf(vm, 0, &f, execfn, argv, envp, start);
}

int exec_load(struct vm *vm, struct inode *cwd, const char *path, const struct exec_strv *argv,
              const struct exec_strv *envp, struct exec_start *start, struct inode **exe)
{
    struct exec_file x;
    start->why = 0;
    int r = open_program(cwd, path, &x);
    if (r) {
        return r;
    }
    r = load_elf(vm, cwd, &x.f, path, argv, envp, start);
    if (r) {
        inode_put(x.ino);
        return r;
    }
    *exe = x.ino;
    return 0;
}

long sys_execve(struct trap_frame *f)
{
    struct process *p = current()->proc;
    char path[VFS_PATH_MAX];
    long r = strncpy_from_user(p->vm, path, arch_frame_arg(f, 0), sizeof(path));
    if (r < 0) {
        return r;
    }
    struct vm *vm = vm_create();
    if (!vm) {
        return -ENOMEM;
    }
    struct exec_strv argv = {p->vm, arch_frame_arg(f, 1), 0};
    struct exec_strv envp = {p->vm, arch_frame_arg(f, 2), 0};
    struct exec_start start;
    struct inode *exe;
    struct inode *cwd = proc_cwd_get(p);
    r = exec_load(vm, cwd, path, &argv, &envp, &start, &exe);
    inode_put(cwd);
    if (r == 0 && __atomic_load_n(&p->unfreed_tasks, __ATOMIC_ACQUIRE) > 1) {
        r = proc_end_other_threads(); /* the point of no return for the other threads */
        if (r) {
            inode_put(exe);
        }
    }
    if (r) {
        vm_put(vm);
        return r;
    }
    proc_exec_commit(vm, &start, exe, path_basename(path));
    return 0;
}
