/* SPDX-License-Identifier: MIT */
/*
 * synth.h — synthetic files: the read-only trees /proc and /sys, whose files are text the
 * kernel writes when they are opened (kernel/fs/synth.c, procfs*.c, sysfs.c).
 *
 * A synthetic inode (INODE_SYNTH) is a file, a directory or a symbolic link whose behaviour
 * comes from its struct synth_ops and two numbers (synth_a, synth_b: a pid and a tid, a pid
 * and a descriptor, a CPU).  The tree keeps them like any other inode; a directory whose
 * entries come and go (/proc, /proc/PID/fd, ...) makes a child inode when a lookup names
 * it and keeps it in the tree as a cache, checked again at every lookup and pruned once the
 * thing it names is gone.
 *
 * Contents are snapshots: opening a file writes its whole text into a buffer of pages (struct
 * sbuf), and reads copy from it, so a reader sees one consistent text however it reads; a
 * file whose text needs no process lock (show_fresh) is written again when a read starts at
 * position 0, as procps's lseek(0) and read expect.  Opening a directory lists it the same way.
 *
 * Locks, and why the operations are split as they are: a lookup runs under vfs_lock, which
 * ranks above proc_lock (lockrank.h), so lookup_locked and follow_locked may take only leaf
 * locks (pid_lock, a descriptor table's lock): a process's id being taken is what makes
 * /proc/PID exist.  show, list and readlink run with no lock held and take proc_lock to read
 * a process.  Reads run under the open file's lock: only show_fresh files are written there,
 * and those take leaf locks only.  Reading never asks another CPU for anything: counters and
 * run queues are read with relaxed loads, so a dataplane CPU is not disturbed.
 */
#ifndef ZT_KERNEL_SYNTH_H
#define ZT_KERNEL_SYNTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/cpumask.h"

struct inode;
struct file;

/* Text of any length up to SBUF_MAX_PAGES pages, a page at a time. */
#define SBUF_MAX_PAGES 64
struct sbuf {
    char *page[SBUF_MAX_PAGES]; /* kernel addresses of zeroed pages, as many as needed */
    size_t len;
    int err; /* -ENOMEM or -EFBIG once something did not fit; the text stops there */
};

void sbuf_init(struct sbuf *b);
void sbuf_put(struct sbuf *b, const char *s, size_t n);
void sbuf_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A set of CPUs as Linux's %*pb: hex digits for the machine's CPUs, a comma every 32. */
void sbuf_cpumask(struct sbuf *b, cpumask_t m);
/* Copy up to n bytes from offset off into dst; returns how many. */
size_t sbuf_read(const struct sbuf *b, size_t off, char *dst, size_t n);
void sbuf_free(struct sbuf *b);

/* What a synthetic inode does; unused members are NULL. */
struct synth_ops {
    /* Files: write the text (no lock held).  0, or -errno (-ESRCH: the process is gone). */
    int (*show)(const struct inode *ino, struct sbuf *b);
    bool show_fresh; /* show takes leaf locks only: written again by a read at position 0 */
    /* Directories: every entry but "." and "..", each with synth_list_add (no lock held).
     * NULL: the directory's children in the tree are its entries. */
    int (*list)(const struct inode *dir, struct sbuf *b);
    /* Directories: the child `name`, found among the cached children or made and linked
     * (vfs_lock held; leaf locks only), or NULL if there is none.  NULL: the children in the
     * tree are all there is. */
    struct inode *(*lookup_locked)(struct inode *dir, const char *name);
    /* Links: the target's text into buf (not NUL-terminated; no lock held): its length or
     * -errno. */
    long (*readlink)(const struct inode *ino, char *buf, size_t n);
    /* Links: what following finds (vfs_lock held, leaf locks only): 0 with a NUL-terminated
     * path to walk from the link's directory in buf, or 0 with an inode of the tree in
     * *direct; or -errno. */
    int (*follow_locked)(const struct inode *ino, char *buf, size_t n, struct inode **direct);
};

/* One name of a directory whose entries are fixed (a process's directory). */
struct synth_entry {
    const char *name;
    unsigned mode; /* S_IF* | permission bits */
    const struct synth_ops *ops;
};

/* An entry of a directory listing (list): its name, inode number and mode. */
void synth_list_add(struct sbuf *b, const char *name, uint64_t ino, unsigned mode);

/* A synthetic inode named `name` in dir, linked into the tree (vfs_lock held); NULL when out of
 * memory.  The tree holds its reference. */
struct inode *synth_add_locked(struct inode *dir, const char *name, unsigned mode,
                               const struct synth_ops *ops, int a, int b);
/* The entry of `table` (n entries) called `name` in dir: the cached child or a new one with
 * dir's numbers (vfs_lock held); NULL if the table has no such name. */
struct inode *synth_table_lookup_locked(struct inode *dir, const struct synth_entry *table,
                                        size_t n, const char *name);
/* List every entry of `table` (for a list operation). */
void synth_table_list(struct sbuf *b, const struct synth_entry *table, size_t n);
/* Take `ino` and everything below it out of the tree (vfs_lock held); each is freed when its
 * last reference goes. */
void synth_prune_locked(struct inode *ino);
/* A decimal name ("123", no sign, no leading zero) as a number, or -1. */
int synth_number(const char *name);

/* ---- the hooks kernel/fs/vfs.c, dir.c and fs_sys.c call for INODE_SYNTH ---- */

/* The child `name` of the synthetic directory dir, or NULL (vfs_lock held). */
struct inode *synth_child_locked(struct inode *dir, const char *name);
/* Follow the synthetic link `link` (vfs_lock held): as synth_ops.follow_locked. */
int synth_follow_locked(const struct inode *link, char *buf, size_t n, struct inode **direct);
/* readlink of a synthetic link. */
long synth_readlink(const struct inode *ino, char *buf, size_t n);
/* Open a synthetic inode: its text or listing taken now.  Read-only: a write mode is -EACCES
 * (-EISDIR for a directory). */
int synth_open(struct inode *ino, unsigned flags, struct file **out);

/* Boot: /proc and /sys under the root (kernel/fs/procfs.c, sysfs.c), vfs_lock held. */
void procfs_init_locked(struct inode *root);
void sysfs_init_locked(struct inode *root);
/* Boot, once the worker runs: the load averages' sampler (/proc/loadavg, sysinfo). */
void procfs_start(void);
/* The 1, 5 and 15 minute load averages, fixed point with 16 fraction bits (sysinfo's). */
void procfs_loadavg(uint64_t out[3]);

/* ---- between procfs.c, procfs_pid.c and procfs_sys.c only ---- */

/* A process's files (procfs_pid.c): synth_a names the process (an id /proc shows), synth_b
 * the thread (0: the process as a whole). */
extern const struct synth_ops procfs_cmdline_ops, procfs_comm_ops, procfs_maps_ops, procfs_stat_ops,
    procfs_statm_ops, procfs_status_ops, procfs_syscall_ops;
/* The machine's files (procfs_sys.c; mounts: kernel/fs/mounts.c). */
extern const struct synth_ops procfs_kcmdline_ops, procfs_cpuinfo_ops, procfs_filesystems_ops,
    procfs_interrupts_ops, procfs_loadavg_ops, procfs_meminfo_ops, procfs_mounts_ops,
    procfs_slabinfo_ops, procfs_stat_all_ops, procfs_uptime_ops, procfs_version_ops;
/* /proc/sys and what is under it (procfs_sys.c). */
void procfs_sys_init_locked(struct inode *sys);

#endif
