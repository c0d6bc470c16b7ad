/* SPDX-License-Identifier: MIT */
/*
 * dyntest — ordinary glibc C, built with Debian's cross compiler as a dynamically linked
 * position-independent executable (/bin/dyntest: ld-linux-aarch64.so.1 and libc.so.6 from the
 * initrd's /lib/aarch64-linux-gnu) and as a static-pie (/bin/dyntest-static-pie).  Nothing
 * here knows about zerotick.
 *
 *   dyntest ARG...      print each argument ("dyntest arg N: ARG"), check the auxiliary
 *                       vector against the program's own addresses, dlopen() libztdyn.so
 *                       (from /usr/lib/aarch64-linux-gnu, no ld.so.cache) and call it from
 *                       two threads, dlclose() it; "dyntest KIND: ok ..." and exit 0, or
 *                       "dyntest KIND: FAILED: why" and exit 1 (KIND: dynamic or static-pie)
 *   dyntest tmpexec     copy this program into /tmp and /dev/shm and run each copy (execve
 *                       from a RAM file system): "dyntest tmpexec: ok"
 *   dyntest badexec     execve each corrupt program of /bin/dynbad-* and check its errno, and
 *                       that every page comes back: "dyntest badexec: ok"
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <unistd.h>

extern char _start[];
extern const ElfW(Ehdr) __ehdr_start; /* the linker's: this program's own ELF header */

static char fail_why[256];
static const char *kind;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            snprintf(fail_why, sizeof(fail_why), __VA_ARGS__);                                     \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

/* Does this program name an interpreter (PT_INTERP)? */
static int has_interp(void)
{
    const ElfW(Phdr) *ph = (const void *)((const char *)&__ehdr_start + __ehdr_start.e_phoff);
    for (int i = 0; i < __ehdr_start.e_phnum; i++) {
        if (ph[i].p_type == PT_INTERP) {
            return 1;
        }
    }
    return 0;
}

struct found {
    unsigned long base; /* AT_BASE */
    int objects;
    int base_is_loaded; /* an object the loader lists is at AT_BASE: the loader itself */
};

static int each_object(struct dl_phdr_info *info, size_t size __attribute__((unused)), void *arg)
{
    struct found *f = arg;
    f->objects++;
    f->base_is_loaded |= f->base && info->dlpi_addr == f->base;
    return 0;
}

/* AT_PHDR, AT_PHENT, AT_PHNUM and AT_ENTRY describe this program where it runs; AT_BASE is
 * where the dynamic linker is (0 without one); AT_PAGESZ and AT_RANDOM are set; AT_EXECFN names
 * the file run (a shell passes its path, and the bare name as argv[0]). */
static int check_auxv(const char *argv0)
{
    unsigned long base = (unsigned long)&__ehdr_start;
    CHECK(getauxval(AT_PHDR) == base + __ehdr_start.e_phoff, "AT_PHDR %#lx, headers at %#lx",
          getauxval(AT_PHDR), base + (unsigned long)__ehdr_start.e_phoff);
    CHECK(getauxval(AT_PHENT) == sizeof(ElfW(Phdr)) && getauxval(AT_PHNUM) == __ehdr_start.e_phnum,
          "AT_PHENT %lu AT_PHNUM %lu", getauxval(AT_PHENT), getauxval(AT_PHNUM));
    CHECK(getauxval(AT_ENTRY) == (unsigned long)_start, "AT_ENTRY %#lx, _start at %p",
          getauxval(AT_ENTRY), (void *)_start);
    CHECK(getauxval(AT_PAGESZ) == 4096, "AT_PAGESZ %lu", getauxval(AT_PAGESZ));
    CHECK(getauxval(AT_RANDOM) != 0, "no AT_RANDOM");
    const char *fn = (const char *)getauxval(AT_EXECFN), *slash = strrchr(argv0, '/');
    const char *base0 = slash ? slash + 1 : argv0, *fn_slash = fn ? strrchr(fn, '/') : NULL;
    CHECK(fn && strcmp(fn_slash ? fn_slash + 1 : fn, base0) == 0, "AT_EXECFN '%s', argv[0] '%s'",
          fn ? fn : "", argv0); /* the file execve was given */
    struct found f = {getauxval(AT_BASE), 0, 0};
    dl_iterate_phdr(each_object, &f);
    if (has_interp()) {
        CHECK(f.base != 0 && f.base_is_loaded, "AT_BASE %#lx: no loaded object there", f.base);
    } else {
        CHECK(getauxval(AT_BASE) == 0, "AT_BASE %#lx without an interpreter", getauxval(AT_BASE));
    }
    printf("dyntest %s: loaded at %#lx, entry %#lx, interpreter at %#lx, %d objects\n", kind, base,
           getauxval(AT_ENTRY), getauxval(AT_BASE), f.objects);
    return 0;
}

struct lib {
    int (*ready)(void);
    int (*word)(int i, char *buf, size_t n, int *count);
};

static void *word_thread(void *arg)
{
    struct lib *lib = arg;
    char buf[16];
    int count = 0;
    lib->word(2, buf, sizeof(buf), &count);
    lib->word(3, buf, sizeof(buf), &count);
    return (void *)(long)(strcmp(buf, "three") == 0 ? count : -1);
}

/* dlopen a second library by name (the loader's search path), call it from two threads
 * (its thread-local counter is per thread), dlclose it. */
static int check_dlopen(void)
{
    void *h = dlopen("libztdyn.so", RTLD_NOW);
    CHECK(h != NULL, "dlopen: %s", dlerror());
    struct lib lib = {(int (*)(void))dlsym(h, "ztdyn_ready"),
                      (int (*)(int, char *, size_t, int *))dlsym(h, "ztdyn_word")};
    CHECK(lib.ready && lib.word, "dlsym: %s", dlerror());
    CHECK(lib.ready() == 42, "the library's constructor did not run: %d", lib.ready());
    char buf[16];
    int count = 0;
    CHECK(lib.word(1, buf, sizeof(buf), &count) == 3 && strcmp(buf, "one") == 0 && count == 1,
          "word 1: '%s' count %d", buf, count);
    pthread_t t;
    void *res;
    CHECK(pthread_create(&t, NULL, word_thread, &lib) == 0, "pthread_create");
    CHECK(pthread_join(t, &res) == 0 && (long)res == 2, "thread: %ld", (long)res);
    CHECK(lib.word(0, buf, sizeof(buf), &count) == 4 && count == 2, "count %d after the thread",
          count); /* the thread's two calls were its own */
    Dl_info info;
    CHECK(dladdr((void *)lib.word, &info) && strstr(info.dli_fname, "libztdyn.so"), "dladdr");
    printf("dyntest %s: dlopen %s: ok\n", kind, info.dli_fname);
    CHECK(dlclose(h) == 0, "dlclose: %s", dlerror());
    return 0;
}

static unsigned long free_pages(void)
{
    struct sysinfo si;
    return sysinfo(&si) == 0 ? si.freeram : 0;
}

/* Run path with argv, return its exit status (or -errno of execve in the child, as 100+). */
static int run(const char *path, char *const argv[])
{
    pid_t pid = fork();
    if (pid == 0) {
        execv(path, argv);
        _exit(100 + errno);
    }
    int status;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) {
        return -1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 200 + WTERMSIG(status);
}

/* Copy file `from` to `to` (mode 0755). */
static int copy_file(const char *from, const char *to)
{
    static char buf[65536];
    int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
    ssize_t n = 0;
    while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0) {
        if (write(out, buf, (size_t)n) != n) {
            n = -1;
            break;
        }
    }
    int ok = in >= 0 && out >= 0 && n == 0;
    close(in);
    close(out);
    return ok ? 0 : -1;
}

/* A program copied into /tmp and /dev/shm runs from there (and its copy goes away). */
static int check_tmpexec(void)
{
    static const char *const dirs[] = {"/tmp/dyntest-copy", "/dev/shm/dyntest-copy"};
    for (int i = 0; i < 2; i++) {
        CHECK(copy_file("/proc/self/exe", dirs[i]) == 0, "copy to %s: %s", dirs[i],
              strerror(errno));
        char *argv[] = {(char *)dirs[i], "from", "ram", NULL};
        int st = run(dirs[i], argv);
        CHECK(st == 0, "%s exited with %d", dirs[i], st);
        CHECK(unlink(dirs[i]) == 0, "unlink %s", dirs[i]);
    }
    return 0;
}

/* Each corrupt program is refused by execve with its errno, and nothing is kept. */
static int check_badexec(void)
{
    static const struct {
        const char *path;
        int err;
    } bad[] = {
        {"/bin/dynbad-nointerp", ENOENT},      /* PT_INTERP names a file that does not exist */
        {"/bin/dynbad-unterminated", ENOEXEC}, /* PT_INTERP's path has no NUL */
        {"/bin/dynbad-interpdyn", ELIBBAD},    /* the interpreter is itself dynamic */
        {"/bin/dynbad-interpnotelf", ELIBBAD}, /* the interpreter is not an ELF file */
        {"/bin/dynbad-overlap", ENOEXEC},      /* two PT_LOADs share pages */
        {"/bin/dynbad-pastend", ENOEXEC},      /* a PT_LOAD's bytes lie past the end of the file */
    };
    char *argv[] = {"x", NULL};
    for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) { /* kernel objects made once */
        CHECK(run(bad[i].path, argv) == 100 + bad[i].err, "warm-up: %s", bad[i].path);
    }
    printf("dyntest badexec: %u corrupt programs\n", (unsigned)(sizeof(bad) / sizeof(bad[0])));
    unsigned long before = free_pages(); /* stdio's buffer exists now: nothing printed below */
    for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int st = run(bad[i].path, argv);
        CHECK(st == 100 + bad[i].err, "%s: exit %d, want errno %d (%s)", bad[i].path, st,
              bad[i].err, strerror(bad[i].err));
    }
    unsigned long after = free_pages();
    CHECK(before == after, "free pages %lu before, %lu after", before, after);
    for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        printf("dyntest badexec: %s refused: %s\n", bad[i].path, strerror(bad[i].err));
    }
    return 0;
}

int main(int argc, char **argv)
{
    kind = has_interp() ? "dynamic" : "static-pie";
    int r;
    if (argc == 2 && strcmp(argv[1], "tmpexec") == 0) {
        kind = "tmpexec";
        r = check_tmpexec();
    } else if (argc == 2 && strcmp(argv[1], "badexec") == 0) {
        kind = "badexec";
        r = check_badexec();
    } else {
        for (int i = 0; i < argc; i++) {
            printf("dyntest arg %d: %s\n", i, argv[i]);
        }
        r = check_auxv(argv[0]) || check_dlopen();
    }
    if (r) {
        printf("dyntest %s: FAILED: %s\n", kind, fail_why);
    } else {
        printf("dyntest %s: ok\n", kind);
    }
    return r;
}
