/* SPDX-License-Identifier: MIT */
/*
 * fuzz.h — the parts of /bin/fuzz (user/fuzz.c is the runner; this directory holds a worker's
 * life): the random stream, the hostile value pools, the per-call argument shaping and the
 * sandbox rules.
 *
 * A life is one worker process making up to LIFE calls from its own seed.  Everything a life
 * does is decided by its random stream (struct fz_rng) and by what the kernel answered, so a
 * failure replays from the seed the runner printed (the results of other workers' calls can
 * still make two runs differ: they share the kernel).
 *
 * The sandbox: a call that would end the test (power-off, signals to the runner or init that
 * could kill them) is filtered or turned into a harmless target; a call that would end this
 * life (exit_group, rt_sigreturn, a thread on a garbage stack, a fatal signal to itself, an
 * unmap of its own code or stack...) is made only rarely (1 in `lethal_den` draws) and only
 * after the life has printed its report, so its counts are never lost.  The life's own state
 * (its image, stack, heap, the waker thread's stack, the scratch arena it prepares
 * arguments in) is a list of protected ranges that range operations are steered away from.
 */
#ifndef ZT_USER_FUZZ_H
#define ZT_USER_FUZZ_H

#include "prog.h"
#include "zt.h"

#include <stdbool.h>
#include <stdint.h>

#define FZ_PAGE        4096ull
#define FZ_NERR        134 /* errno values counted one by one (Linux's run to 133) */
#define FZ_DONE_STATUS 77  /* a life that made all its calls exits with this */
#define FZ_MAX_CALLS   256 /* entries of the call table */

struct fz_range {
    uint64_t lo, hi; /* [lo, hi) */
};

#define FZ_COLLIDERS    3 /* threads that run a program at once in collide mode */
#define FZ_MAX_PROT     8
#define FZ_MAX_MAPS     16
#define FZ_MAX_CHILDREN 16
#define FZ_MAX_STACKS   16
#define FZ_ALTSTACK     (16 * 1024) /* the main thread's signal stack for fuzzed sigaltstack */
#define FZ_MAX_FILES    8 /* descriptors of files the life opened, kept for mmap and reads */
#define FZ_SCRATCH      (16 * FZ_PAGE)        /* random bytes: arguments point here */
#define FZ_PLAY_BASE    0x0000004000000000ull /* MAP_FIXED playground: 1 GiB nothing else uses */
#define FZ_PLAY_SIZE    (1ull << 30)
#define FZ_ARENA_BASE   0x0000005000000000ull /* the arena: far below the mmap area */

/* Per-life counts, printed in the life's report line. */
struct fz_stats {
    uint64_t calls; /* system calls made */
    uint64_t ok;    /* results >= 0 */
    uint64_t err[FZ_NERR];
    uint64_t err_other; /* negative results that are not -1..-(FZ_NERR-1) */
    uint64_t filtered;  /* draws the sandbox did not make (power-off) */
    uint64_t kicks;     /* calls the waker interrupted (blocked > FZ_KICK_NS) */
};

/* What a life knows about the machine and about itself. */
struct fz_env {
    struct fz_rng rng;
    int worker, gen;
    uint64_t seed; /* this life's seed */
    int ncpus;
    uint64_t online, dataplane; /* CPU masks */
    uint64_t device_slots;      /* zt_devices' slots (0-63) with a device behind them */
    bool isolation;             /* -i: steer towards dataplane CPUs and task isolation */
    unsigned lethal_den;        /* a life-ending draw is made 1 time in lethal_den */
    bool log_calls;             /* -C: each call on the console before it is made, and its result */
    long made;                  /* calls made so far in this life */
    uint64_t console_fds[4];    /* descriptors (the table's 256) that are the console */
    int files[FZ_MAX_FILES];    /* descriptors openat gave that are no character device */
    int nfiles;
    int pid, runner_pid, waker_tid;
    int long_ids; /* the highest id of the runner's and the kernel's own tasks at the start */
    /* the arena (fz_arena_init): scratch RW, then a hole; a read-only page; a PROT_NONE
     * page; NUL bytes right before a hole (what console writes may read) */
    uint8_t *scratch;
    uint64_t altstack; /* FZ_ALTSTACK bytes, protected: the one valid sigaltstack (worker.c) */
    uint64_t hole, ro, none, zeros;
    struct fz_range prot[FZ_MAX_PROT];
    int nprot;
    struct fz_range maps[FZ_MAX_MAPS]; /* mappings the fuzzed calls made */
    int nmaps;
    int children[FZ_MAX_CHILDREN]; /* processes spawned by fuzzed calls */
    int nchildren;
    uint64_t brk0;                  /* the break at the start of the life: never below it */
    uint8_t *stacks[FZ_MAX_STACKS]; /* stacks for threads made by fuzzed clone calls */
    int stack_free[FZ_MAX_STACKS];  /* 1: no thread uses it (the thread sets it last) */
    /* the masks ppoll, pselect6 and rt_sigsuspend block for their duration point here, not
     * into scratch, where a later call's shaping (a collide program shapes all its calls
     * first) could write SIGALRM into one: one slot per call of a program */
    uint64_t masks[FZ_PROG_CALLS];
    unsigned nmasks;
    uint64_t acts[FZ_PROG_CALLS][4]; /* rt_sigaction's new actions, for the same reason */
    unsigned nacts;
    struct fz_stats st;
    /* programs (worker.c): -c follows coverage (the coverage kernel), -x runs 1 program in
     * collide_den by FZ_COLLIDERS threads at once (0: never) */
    bool cover;
    unsigned collide_den;
    struct fz_prog_stats {
        uint64_t progs, collided, mutated; /* programs run, run by colliders, mutated */
        uint64_t new_blocks;               /* blocks they reached first (-c) */
        uint64_t kept;                     /* programs this life added to the corpus (-c) */
    } ps;
    /* shared with the waker thread: who is in a call since when (0 between calls); [0] the
     * life's main thread, [1..] the colliders */
    struct fz_busy {
        int tid;
        uint64_t since_ns;
    } busy[1 + FZ_COLLIDERS];
    int stop;
    long kicked; /* calls the waker interrupted */
};

/* The outcome of shaping one draw. */
enum fz_plan {
    FZ_PLAN_CALL,       /* make the call as shaped */
    FZ_PLAN_FILTER,     /* do not make it (it would end the test) */
    FZ_PLAN_LETHAL,     /* make it after reporting: it ends this life */
    FZ_PLAN_CLONE,      /* clone through fz_clone (a stack the child can run on) */
    FZ_PLAN_EXIT_THR,   /* exit() in a thread of its own, so the life goes on */
    FZ_PLAN_EXEC_CHILD, /* execve made by a fork of the life (with a second thread half of
                           the time), which becomes the program; the life goes on */
};

struct fz_args {
    long nr;
    uint64_t a[6];
};

struct fz_call;
typedef enum fz_plan (*fz_shape_fn)(struct fz_env *e, struct fz_args *c);

struct fz_call {
    long nr;
    const char *name;
    fz_shape_fn shape; /* NULL: six arguments from the mixed pool */
};

/* ---- pools.c: hostile values ---- */
enum fz_dir {
    FZ_IN,  /* the kernel reads there */
    FZ_OUT, /* the kernel writes there */
};
uint64_t fz_ptr(struct fz_env *e, enum fz_dir dir);
uint64_t fz_len(struct fz_env *e);
uint64_t fz_int(struct fz_env *e);
uint64_t fz_flags(struct fz_env *e, uint64_t valid);
uint64_t fz_cpumask(struct fz_env *e);
int fz_cpu(struct fz_env *e);
int64_t fz_pid(struct fz_env *e);
int fz_sig(struct fz_env *e);
uint64_t fz_any(struct fz_env *e);
/* A valid-looking pointer into scratch with room for `bytes` (8-byte aligned), or, one
 * time in `hostile_den`, a hostile one (0: never). */
uint64_t fz_buf(struct fz_env *e, uint64_t bytes, unsigned hostile_den);
bool fz_in_scratch(const struct fz_env *e, uint64_t p, uint64_t bytes);
/* Does [lo, lo+len) touch a protected range (wrapping ranges do)? */
bool fz_hits_protected(const struct fz_env *e, uint64_t lo, uint64_t len);
void fz_arena_init(struct fz_env *e);
void fz_scratch_refill(struct fz_env *e);
/* A mask argument for ppoll, pselect6 or rt_sigsuspend: in one of the life's mask slots, never
 * with SIGALRM (the waker's) blocked, or, one time in `hostile_den`, a hostile pointer. */
uint64_t fz_temp_mask(struct fz_env *e, unsigned hostile_den);
/* Linux's openat constants (aarch64), for the fuzzer's own file work. */
#define AT_FDCWD    (-100)
#define O_DIRECTORY 040000

/* ---- balance.c: what the memory balance is made of (runner) ---- */
/* The first size - 1 bytes of the file at `path` into buf, NUL-terminated: its length, or -1
 * (the runner's reads of /proc; stuck.c's too). */
long fz_read_file(const char *path, char *buf, size_t size);
#define FZ_BALANCE_CLASSES 16
struct fz_balance {
    int nclasses;
    char names[FZ_BALANCE_CLASSES][24]; /* /proc/slabinfo's classes */
    uint64_t objects[FZ_BALANCE_CLASSES], slabs[FZ_BALANCE_CLASSES];
    uint64_t shmem_kb;          /* meminfo's Shmem: tmpfs pages */
    uint64_t self_pages[2];     /* the runner's /proc/self/statm: size and resident pages */
    uint64_t init_pages[2];     /* init's (pid 1) */
    char root[1024], tmp[1024]; /* the names in / and /tmp, each ended by '/' */
};
void fz_balance_take(struct fz_balance *b);
/* Print what differs between a (the baseline) and b. */
void fz_balance_show(const struct fz_balance *a, const struct fz_balance *b);

/* The signal mask a shaped ppoll, pselect6 or rt_sigsuspend would block for its duration, if
 * it lies in memory the fuzzer wrote (scratch, or the life's own mask slots); 0 otherwise. */
uint64_t fz_temp_mask_of(const struct fz_env *e, const struct fz_args *c);

/* ---- shapes.c: the shaper of a call the fuzzer knows by name (its own, files.c's or
 * procs.c's), or NULL; the helpers the other shapers share ---- */
fz_shape_fn fz_shaper(const char *name);
/* [*addr, +len) would be honoured over the life's own memory: moved to the playground, or
 * a lethal draw. */
enum fz_plan fz_steer_range(struct fz_env *e, uint64_t *addr, uint64_t len);
/* A program's path in scratch (`which` says which of the pool's: 0-2 are real programs). */
uint64_t fz_program_path(struct fz_env *e, int *which);
/* An argument vector for program `which` (valid, or one the kernel must refuse). */
uint64_t fz_argv(struct fz_env *e, int which);

/* ---- files.c: descriptors, paths, the file tree, polling ---- */
#define FZ_TMP "/tmp/fz" /* the only place lives create things: the runner empties it */
fz_shape_fn fz_file_shaper(const char *name);
uint64_t fz_fd(struct fz_env *e);
uint64_t fz_path(struct fz_env *e);
/* Is descriptor fd the console (0-2, or a dup or open of it)? */
bool fz_is_console(const struct fz_env *e, uint64_t fd);
/* A descriptor the life opened on a file (no character device), or -1 if it has none. */
int64_t fz_file_fd(struct fz_env *e);
/* After a call returned r: keep the set of console descriptors, and of file descriptors, up to
 * date. */
void fz_file_after(struct fz_env *e, const char *name, const struct fz_args *c, long r);

/* ---- procs.c: execve, memory protection, signal waits, identity, limits, times ---- */
fz_shape_fn fz_proc_shaper(const char *name);

/* ---- abi.c: statfs, chown, timers, scheduling policy, memory locking, membarrier ---- */
fz_shape_fn fz_abi_shaper(const char *name);

/* ---- the runner's helpers: stuck.c (a stuck life's report), machine.c ---- */
void fz_stuck_report(long pid);
struct fz_machine {
    int ncpus;
    uint64_t online, dataplane; /* CPU masks */
};
void fz_machine_save(struct fz_machine *m);
/* Put every CPU back as m says; how many could not be. */
int fz_machine_restore(const struct fz_machine *m);
void fz_tmp_make(void);
/* The runner's stack grows on demand (16 KiB of it populated at exec): a deeper call after
 * the baseline, such as removing a tree lives nested deep in FZ_TMP, took pages the balance
 * then missed (the dataplane long runs' "one page short": FZ-10).  The runner touches this
 * much of it first, more than its deepest path (MAX_DEPTH levels of removal) needs. */
#define FZ_RUNNER_STACK (192 * 1024)
__attribute__((noinline)) void fz_stack_prefault(void);
/* Remove FZ_TMP and everything lives created in it; false if something stayed. */
bool fz_tmp_remove(void);
/* -D: a life that removes FZ_TMP and makes it again (machine.c): FZ_DONE_STATUS if both did. */
int fz_replant_life(void);

/* ---- calls.c: the call table and the shaping of each call ---- */
int fz_calls_init(struct fz_call *table, int max);
const struct fz_call *fz_pick(struct fz_env *e, const struct fz_call *table, int n,
                              struct fz_args *c);
enum fz_plan fz_shape(struct fz_env *e, const struct fz_call *call, struct fz_args *c);
/* Does the call return twice (fork, vfork, clone3)?  Then fz_forkish makes it. */
bool fz_is_forkish(const char *name);

/* ---- worker.c: one life ---- */
int fz_life(struct fz_env *e, long calls);

/* ---- cover.c: coverage (the coverage kernel's zt_kcov) and the corpus files ---- */
#define FZ_CORPUS_DIR "/tmp/fzc" /* one file per worker; the runner makes and removes it */
#define FZ_CORPUS_CAP 2048       /* programs a life keeps in memory */
struct fz_corpus;
/* An empty corpus of FZ_CORPUS_CAP programs in a mapping of its own (only -c pays for it);
 * false if there is no memory.  fz_corpus_free gives it back. */
bool fz_corpus_alloc(struct fz_corpus *c);
void fz_corpus_free(struct fz_corpus *c);
/* Read what is new in every worker's corpus file since the last call (offsets kept here)
 * into c; how many programs were added. */
int fz_corpus_load(struct fz_corpus *c);
/* Append p (it reached `gain` new blocks) to worker w's file. */
void fz_corpus_save(int w, const struct fz_prog *p, uint32_t gain);
/* The runner: make the directory (after the memory baseline), remove it (before the balance). */
void fz_corpus_dir_make(void);
bool fz_corpus_dir_remove(void);
/* Programs in the corpus files (the runner's summary). */
long fz_corpus_files_count(void);
/* The runner's summary and the bitmaps tools/covreport reads (-c, at the end). */
void fz_cover_dump(void);
/* fuzz -k: one getpid recorded, its blocks printed (COV-01); the exit status. */
int fz_cover_probe(void);
/* victim mode (`fuzz -v`): a process that sits in system calls for a while, then exits */
int fz_victim(uint64_t seed);

#endif
