/* SPDX-License-Identifier: MIT */
/*
 * procfs.c — the shape of /proc: the root with its fixed files and one directory per
 * process, what a process's directory holds, and its links (self, exe, cwd, root, fd/N).
 * The texts are written by procfs_pid.c (a process's files) and procfs_sys.c (the machine's);
 * the machinery is synth.c (contract and locks in include/kernel/synth.h).
 *
 * /proc/ID exists while the id is taken (pid_is_taken): a live thread, or a process not yet
 * reaped, as on Linux, where a thread's id also opens a directory that the listing does not
 * show.  Lookups under /proc/ID/task and /proc/ID/fd of another process check only that the
 * number could name something (a taken id, a descriptor number below FD_MAX): which thread
 * belongs to which process, and which descriptors are open, is known only under proc_lock,
 * which a lookup cannot take (it holds vfs_lock).  Listings, texts and readlink are exact.
 * Following a process's exe or fd/N link works for the caller's own process; for another
 * process it is -EACCES (readlink shows the target).
 *
 * The directories made for ids stay in the tree as a cache until the id is freed: pid.c
 * tells procfs_pid_freed, which marks the id and queues a work item that takes them out on
 * housekeeping (a lookup of a freed id prunes it too), so the cache holds the live ids only.
 */
#include "kernel/fd.h"
#include "kernel/lib.h"
#include "kernel/pid.h"
#include "kernel/synth.h"
#include "kernel/task.h"
#include "kernel/vfs.h"
#include "kernel/work.h"
#include "uapi/zt_errno.h"

#define DIR_MODE  (S_IFDIR | 0555)
#define LINK_MODE (S_IFLNK | 0777)

static struct inode *proc_root;
static uint64_t cached_ids[PID_MAX / 64]; /* a directory was made for the id (atomic bits) */
static uint64_t freed_ids[PID_MAX / 64];  /* ... and the id was freed since: to prune */
static struct work prune_work;

static bool test_and_clear(uint64_t *map, int id)
{
    uint64_t bit = 1ull << (id % 64);
    return __atomic_fetch_and(&map[id / 64], ~bit, __ATOMIC_ACQ_REL) & bit;
}

/* ---- links ---- */

static long copy_target(char *buf, size_t n, const char *text)
{
    size_t len = strlen(text);
    memcpy(buf, text, MIN(len, n));
    return (long)MIN(len, n);
}

static long self_readlink(const struct inode *ino, char *buf, size_t n)
{
    char text[16];
    ksnprintf(text, sizeof(text), "%d", current()->proc->pid);
    return copy_target(buf, n, text);
}

static int self_follow(const struct inode *ino, char *buf, size_t n, struct inode **direct)
{
    ksnprintf(buf, n, "%d", current()->proc->pid); /* /proc/PID, from /proc */
    return 0;
}

static long root_readlink(const struct inode *ino, char *buf, size_t n)
{
    return copy_target(buf, n, "/");
}

static int root_follow(const struct inode *ino, char *buf, size_t n, struct inode **direct)
{
    kstrlcpy(buf, "/", n);
    return 0;
}

/* Is the process the link's numbers name the caller's own?  (No lock: the caller's own
 * identity does not change under it.) */
static bool is_own(const struct inode *ino)
{
    struct task *t = current();
    return t->proc->pid == ino->synth_a || t->tid == ino->synth_a;
}

/* The path of `what` (referenced; dropped here) into buf. */
static long path_target(struct inode *what, char *buf, size_t n)
{
    char path[VFS_PATH_MAX];
    long len = what ? vfs_path_of(what, path, sizeof(path)) : -ENOENT;
    if (what) {
        inode_put(what);
    }
    return len < 0 ? len : copy_target(buf, n, path);
}

enum which_inode { WHICH_EXE, WHICH_CWD };

/* The program or working directory of the process /proc/ID names, referenced, or NULL. */
static struct inode *proc_inode(int id, enum which_inode which)
{
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    struct process *p = proc_of_id_locked(id);
    struct inode *ino = !p ? 0 : which == WHICH_EXE ? p->exe : p->cwd;
    if (ino) {
        inode_get(ino);
    }
    spin_unlock_irqrestore(&proc_lock, flags);
    return ino;
}

static long exe_readlink(const struct inode *ino, char *buf, size_t n)
{
    return path_target(proc_inode(ino->synth_a, WHICH_EXE), buf, n);
}

static long cwd_readlink(const struct inode *ino, char *buf, size_t n)
{
    return path_target(proc_inode(ino->synth_a, WHICH_CWD), buf, n);
}

/* The caller's own program: it changes only at its own execve, which ends the other threads
 * first, so no lock is needed to read it; it is in the tree while vfs_lock is held. */
static int exe_follow(const struct inode *ino, char *buf, size_t n, struct inode **direct)
{
    if (!is_own(ino)) {
        return -EACCES;
    }
    struct inode *exe = current()->proc->exe;
    if (!exe || !exe->in_tree) {
        return -ENOENT;
    }
    *direct = exe;
    return 0;
}

/* The file of descriptor fd of process `id`, referenced, or NULL. */
static struct file *proc_file(int id, int fd)
{
    struct file *f = 0;
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    struct process *p = proc_of_id_locked(id);
    struct fdtable *t = p ? p->files : 0;
    if (t && fd >= 0 && fd < FD_MAX) {
        spin_lock(&t->lock);
        f = t->fd[fd];
        if (f) {
            file_get(f);
        }
        spin_unlock(&t->lock);
    }
    spin_unlock_irqrestore(&proc_lock, flags);
    return f;
}

static long fd_readlink(const struct inode *ino, char *buf, size_t n)
{
    struct file *f = proc_file(ino->synth_a, ino->synth_b);
    if (!f) {
        return -ENOENT;
    }
    char text[VFS_PATH_MAX];
    long len = -ENOENT;
    if (f->inode && f->inode->kind == INODE_PIPE) {
        len = ksnprintf(text, sizeof(text), "pipe:[%lu]", (unsigned long)f->inode->ino);
    } else if (f->inode) {
        len = vfs_path_of(f->inode, text, sizeof(text));
        if (len == -ENOENT) { /* removed while open, as Linux says it */
            char name[VFS_NAME_MAX + 1];
            kstrlcpy(name, f->inode->name, sizeof(name));
            len = ksnprintf(text, sizeof(text), "/%s (deleted)", name);
        }
    }
    file_put(f);
    return len < 0 ? len : copy_target(buf, n, text);
}

/* The caller's own descriptor: its file cannot go while the table's lock is held, and its
 * inode, if in the tree, not while vfs_lock is. */
static int fd_follow(const struct inode *ino, char *buf, size_t n, struct inode **direct)
{
    struct fdtable *t = current()->proc->files;
    int fd = ino->synth_b;
    if (!is_own(ino)) {
        return -EACCES;
    }
    unsigned long flags = spin_lock_irqsave(&t->lock);
    struct file *f = fd < FD_MAX ? t->fd[fd] : 0;
    *direct = f && f->inode && f->inode->in_tree ? f->inode : 0;
    spin_unlock_irqrestore(&t->lock, flags);
    return *direct ? 0 : -ENOENT; /* pipes and removed files are not reopened here */
}

static const struct synth_ops self_ops = {.readlink = self_readlink, .follow_locked = self_follow};
static const struct synth_ops root_link_ops = {.readlink = root_readlink,
                                               .follow_locked = root_follow};
static const struct synth_ops exe_ops = {.readlink = exe_readlink, .follow_locked = exe_follow};
static const struct synth_ops cwd_ops = {.readlink = cwd_readlink};
static const struct synth_ops fd_link_ops = {.readlink = fd_readlink, .follow_locked = fd_follow};

/* ---- /proc/ID/fd ---- */

static int fd_list(const struct inode *dir, struct sbuf *b)
{
    int r = -ESRCH;
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    struct process *p = proc_of_id_locked(dir->synth_a);
    struct fdtable *t = p ? p->files : 0;
    if (p) {
        r = 0; /* a zombie has no descriptors left */
    }
    if (t) {
        spin_lock(&t->lock);
        for (int fd = 0; fd < t->end; fd++) {
            if (t->fd[fd]) {
                char name[12];
                ksnprintf(name, sizeof(name), "%d", fd);
                synth_list_add(b, name, 0x90000000u + (unsigned)fd, S_IFLNK | 0700);
            }
        }
        spin_unlock(&t->lock);
    }
    spin_unlock_irqrestore(&proc_lock, flags);
    return r;
}

/* Is descriptor fd of the process /proc/`id` names open (proc_lock, then its table's)?  A
 * lookup makes an entry only for a descriptor that is open, so what lookups can keep in the
 * tree is bounded by the descriptors processes really have, not FD_MAX for every id. */
static bool fd_open(int id, int fd)
{
    bool open = false;
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    struct process *p = proc_of_id_locked(id);
    struct fdtable *t = p ? p->files : 0;
    if (t) {
        spin_lock(&t->lock);
        open = fd < t->end && t->fd[fd] != 0;
        spin_unlock(&t->lock);
    }
    spin_unlock_irqrestore(&proc_lock, flags);
    return open;
}

static struct inode *fd_lookup(struct inode *dir, const char *name)
{
    int fd = synth_number(name);
    struct inode *c = fd >= 0 ? vfs_child_locked(dir, name) : 0;
    bool exists = fd >= 0 && fd < FD_MAX && fd_open((int)dir->synth_a, fd);
    if (!exists) {
        if (c) {
            synth_prune_locked(c); /* a descriptor closed since */
        }
        return 0;
    }
    return c ? c : synth_add_locked(dir, name, S_IFLNK | 0700, &fd_link_ops, dir->synth_a, fd);
}

static const struct synth_ops fd_dir_ops = {.list = fd_list, .lookup_locked = fd_lookup};

/* ---- a process's directory, and a thread's under task/ ---- */

static const struct synth_ops task_dir_ops;

/* What /proc/ID holds; a thread's directory /proc/ID/task/TID holds the same but task/. */
static const struct synth_entry pid_table[] = {
    {"cmdline", S_IFREG | 0444, &procfs_cmdline_ops},
    {"comm", S_IFREG | 0444, &procfs_comm_ops},
    {"cwd", LINK_MODE, &cwd_ops},
    {"exe", LINK_MODE, &exe_ops},
    {"fd", S_IFDIR | 0500, &fd_dir_ops},
    {"maps", S_IFREG | 0444, &procfs_maps_ops},
    {"mounts", S_IFREG | 0444, &procfs_mounts_ops},
    {"root", LINK_MODE, &root_link_ops},
    {"stat", S_IFREG | 0444, &procfs_stat_ops},
    {"statm", S_IFREG | 0444, &procfs_statm_ops},
    {"status", S_IFREG | 0444, &procfs_status_ops},
    {"syscall", S_IFREG | 0400, &procfs_syscall_ops},
    {"task", DIR_MODE, &task_dir_ops},
};
#define THREAD_ENTRIES (ARRAY_SIZE(pid_table) - 1) /* all but task, the last */

static int pid_list(const struct inode *dir, struct sbuf *b)
{
    synth_table_list(b, pid_table, dir->synth_b ? THREAD_ENTRIES : ARRAY_SIZE(pid_table));
    return 0;
}

static struct inode *pid_lookup(struct inode *dir, const char *name)
{
    size_t n = dir->synth_b ? THREAD_ENTRIES : ARRAY_SIZE(pid_table);
    return synth_table_lookup_locked(dir, pid_table, n, name);
}

static const struct synth_ops pid_dir_ops = {.list = pid_list, .lookup_locked = pid_lookup};

struct list_arg {
    struct sbuf *b;
    int only; /* list this process's threads; 0: list the processes */
};

static void list_threads(struct process *p, void *arg)
{
    struct list_arg *la = arg;
    if (p->pid != la->only) {
        return;
    }
    list_for_each(pos, &p->threads) {
        char name[12];
        const struct task *t = container_of(pos, struct task, thread_link);
        ksnprintf(name, sizeof(name), "%d", t->tid);
        synth_list_add(la->b, name, 0xa0000000u + (unsigned)t->tid, DIR_MODE);
    }
}

static int task_list(const struct inode *dir, struct sbuf *b)
{
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    struct process *p = proc_of_id_locked(dir->synth_a);
    struct list_arg la = {b, p ? p->pid : 0};
    if (p) {
        proc_for_each_locked(list_threads, &la);
    }
    spin_unlock_irqrestore(&proc_lock, flags);
    return p ? 0 : -ESRCH;
}

/* Is `tid` a thread of the process /proc/`id` names (proc_lock, taken under vfs_lock)? */
static bool thread_of(int id, int tid)
{
    bool found = false;
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    struct process *p = proc_of_id_locked(id);
    if (p) {
        list_for_each(pos, &p->threads) {
            found |= container_of(pos, struct task, thread_link)->tid == tid;
        }
    }
    spin_unlock_irqrestore(&proc_lock, flags);
    return found;
}

/* /proc/ID/`name` for the taken id `name`, or /proc/`pid`/task/`name` for a thread of
 * process `pid` (dir: the parent).  Only what exists gets an entry: task/ of one process
 * does not name the threads of others (as on Linux), so lookups cannot fill the tree with
 * an entry per live id under every live id. */
static struct inode *id_lookup(struct inode *dir, const char *name, int pid)
{
    int id = synth_number(name);
    struct inode *c = vfs_child_locked(dir, name);
    if (id <= 0 || id >= PID_MAX || !pid_is_taken(id) || (pid && !thread_of(pid, id))) {
        if (c) {
            synth_prune_locked(c); /* its process was reaped, or the thread ended */
        }
        return 0;
    }
    if (!c) {
        __atomic_fetch_or(&cached_ids[id / 64], 1ull << (id % 64), __ATOMIC_RELEASE);
        c = synth_add_locked(dir, name, DIR_MODE, &pid_dir_ops, pid ? pid : id, pid ? id : 0);
    }
    return c;
}

/* Take out what was cached for the freed id (vfs_lock held): /proc/ID and every
 * /proc/PID/task/ID.  An id taken again meanwhile keeps them, cached for its new owner. */
static void prune_id_locked(int id)
{
    ASSERT_HELD(&vfs_lock);
    char name[12];
    if (pid_is_taken(id)) {
        __atomic_fetch_or(&cached_ids[id / 64], 1ull << (id % 64), __ATOMIC_RELEASE);
        return;
    }
    ksnprintf(name, sizeof(name), "%d", id);
    struct inode *c = vfs_child_locked(proc_root, name);
    if (c) {
        synth_prune_locked(c);
    }
    list_for_each(p, &proc_root->children) {
        struct inode *piddir = container_of(p, struct inode, sibling);
        struct inode *task = piddir->synth == &pid_dir_ops ? vfs_child_locked(piddir, "task") : 0;
        struct inode *t = task ? vfs_child_locked(task, name) : 0;
        if (t) {
            synth_prune_locked(t);
        }
    }
}

/* Housekeeping: the freed ids' directories out of the tree, one id per lock hold. */
static void prune_freed(struct work *w)
{
    for (int word = 0; word < PID_MAX / 64; word++) {
        uint64_t bits;
        while ((bits = __atomic_load_n(&freed_ids[word], __ATOMIC_ACQUIRE)) != 0) {
            int id = word * 64 + __builtin_ctzll(bits);
            test_and_clear(freed_ids, id);
            unsigned long flags = spin_lock_irqsave(&vfs_lock);
            prune_id_locked(id);
            spin_unlock_irqrestore(&vfs_lock, flags);
        }
    }
}

/* pid.c's observer: an id was freed (any CPU, any context; no lock held). */
static void procfs_pid_freed(int id)
{
    if (id > 0 && id < PID_MAX && test_and_clear(cached_ids, id)) {
        __atomic_fetch_or(&freed_ids[id / 64], 1ull << (id % 64), __ATOMIC_RELEASE);
        work_queue(&prune_work);
    }
}

static struct inode *task_lookup(struct inode *dir, const char *name)
{
    return id_lookup(dir, name, dir->synth_a);
}

static const struct synth_ops task_dir_ops = {.list = task_list, .lookup_locked = task_lookup};

/* ---- /proc itself ---- */

/* The fixed names of /proc (their inodes are made at boot; procfs_sys.c writes the texts). */
static const struct synth_entry root_table[] = {
    {"cmdline", S_IFREG | 0444, &procfs_kcmdline_ops},
    {"cpuinfo", S_IFREG | 0444, &procfs_cpuinfo_ops},
    {"filesystems", S_IFREG | 0444, &procfs_filesystems_ops},
    {"interrupts", S_IFREG | 0444, &procfs_interrupts_ops},
    {"loadavg", S_IFREG | 0444, &procfs_loadavg_ops},
    {"meminfo", S_IFREG | 0444, &procfs_meminfo_ops},
    {"mounts", S_IFREG | 0444, &procfs_mounts_ops},
    {"self", LINK_MODE, &self_ops},
    {"slabinfo", S_IFREG | 0400, &procfs_slabinfo_ops},
    {"stat", S_IFREG | 0444, &procfs_stat_all_ops},
    {"sys", DIR_MODE, 0},
    {"uptime", S_IFREG | 0444, &procfs_uptime_ops},
    {"version", S_IFREG | 0444, &procfs_version_ops},
};

static void list_process(struct process *p, void *arg)
{
    char name[12];
    ksnprintf(name, sizeof(name), "%d", p->pid);
    synth_list_add(arg, name, 0xb0000000u + (unsigned)p->pid, DIR_MODE);
}

static int root_list(const struct inode *dir, struct sbuf *b)
{
    synth_table_list(b, root_table, ARRAY_SIZE(root_table));
    unsigned long flags = spin_lock_irqsave(&proc_lock);
    proc_for_each_locked(list_process, b);
    spin_unlock_irqrestore(&proc_lock, flags);
    return 0;
}

static struct inode *root_lookup(struct inode *dir, const char *name)
{
    return synth_number(name) < 0 ? vfs_child_locked(dir, name) : id_lookup(dir, name, 0);
}

static const struct synth_ops root_ops = {.list = root_list, .lookup_locked = root_lookup};

void procfs_init_locked(struct inode *root)
{
    ASSERT_HELD(&vfs_lock);
    struct inode *proc = synth_add_locked(root, "proc", DIR_MODE, &root_ops, 0, 0);
    proc_root = proc;
    work_init(&prune_work, "procfs prune", prune_freed);
    pid_set_free_observer(procfs_pid_freed);
    for (size_t i = 0; proc && i < ARRAY_SIZE(root_table); i++) {
        const struct synth_entry *e = &root_table[i];
        struct inode *c = synth_add_locked(proc, e->name, e->mode, e->ops, 0, 0);
        if (c && S_ISDIR(e->mode)) {
            procfs_sys_init_locked(c); /* /proc/sys */
        }
    }
}
