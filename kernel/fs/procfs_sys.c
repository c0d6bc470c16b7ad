/* SPDX-License-Identifier: MIT */
/*
 * procfs_sys.c — the machine's files in /proc (cpuinfo, stat, meminfo, uptime, loadavg,
 * interrupts, cmdline, version, filesystems, slabinfo) and /proc/sys, in the formats of Linux
 * 6.1 (fs/proc/, arch/arm64/kernel/cpuinfo.c), and the load averages.
 *
 * Every figure comes from the kernel's own counters, read with relaxed loads from whichever
 * CPU reads the file: per-CPU times from the tick-free accounting (acct.h), interrupts and
 * context switches from each CPU's stats (cpu.h), run-queue lengths from the scheduler.  No
 * CPU is asked to fold or report anything, so reading them in a loop on housekeeping leaves a
 * dataplane CPU alone; its lines show the zeros it really has.  These texts take leaf locks
 * at most (show_fresh: written again at every read from position 0).
 *
 * The load averages are Linux's (kernel/sched/loadavg.c): every 5 s an exponentially decayed
 * average of the tasks running or waiting to run, 11-bit fixed point, computed by a delayed
 * work item on housekeeping that reads the run queues' lengths.
 */
#include "arch.h"
#include "kernel/acct.h"
#include "kernel/cpu.h"
#include "kernel/cycles.h"
#include "kernel/ipi.h"
#include "kernel/kmem.h"
#include "kernel/lib.h"
#include "kernel/page.h"
#include "kernel/pid.h"
#include "kernel/random.h"
#include "kernel/sched.h"
#include "kernel/stats.h"
#include "kernel/synth.h"
#include "kernel/task.h"
#include "kernel/vfs.h"
#include "kernel/work.h"
#include "uapi/zt_errno.h"
#include "uapi/zt_syscall.h"

#define USER_HZ 100

static uint64_t to_user_hz(uint64_t cycles)
{
    return cycles_to_ns(cycles) / (NS_PER_SEC / USER_HZ);
}

/* ---- load averages ---- */

#define FSHIFT    11
#define FIXED_1   (1ul << FSHIFT)
#define LOAD_FREQ 5                                          /* seconds between samples */
static const unsigned long load_exp[3] = {1884, 2014, 2037}; /* 1/exp(5s/1min, 5, 15) */
static unsigned long avenrun[3];
static struct work load_work;

/* Tasks running or waiting to run, on every CPU, without the sampler itself. */
static unsigned long nr_active(void)
{
    unsigned long n = 0;
    for (unsigned c = 0; c < ncpus; c++) {
        n += cpus[c].online ? sched_nr_running(c) : 0;
    }
    return n;
}

static void load_sample(struct work *w)
{
    unsigned long active = (nr_active() - 1) * FIXED_1; /* the worker running this is one */
    for (int i = 0; i < 3; i++) {
        unsigned long load = __atomic_load_n(&avenrun[i], __ATOMIC_RELAXED);
        unsigned long next = load * load_exp[i] + active * (FIXED_1 - load_exp[i]);
        next += active >= load ? FIXED_1 - 1 : 0; /* round up while rising, as Linux */
        __atomic_store_n(&avenrun[i], next / FIXED_1, __ATOMIC_RELAXED);
    }
    work_queue_delayed(&load_work, LOAD_FREQ * arch_counter_freq());
}

void procfs_start(void)
{
    work_init(&load_work, "load averages", load_sample);
    work_queue_delayed(&load_work, LOAD_FREQ * arch_counter_freq());
}

void procfs_loadavg(uint64_t out[3])
{
    for (int i = 0; i < 3; i++) {
        out[i] = (uint64_t)__atomic_load_n(&avenrun[i], __ATOMIC_RELAXED) << (16 - FSHIFT);
    }
}

static int show_loadavg(const struct inode *ino, struct sbuf *b)
{
    unsigned taken;
    int last;
    pid_stats(&taken, &last);
    for (int i = 0; i < 3; i++) {
        unsigned long v = __atomic_load_n(&avenrun[i], __ATOMIC_RELAXED) + FIXED_1 / 200;
        sbuf_printf(b, "%lu.%02lu ", v >> FSHIFT, ((v & (FIXED_1 - 1)) * 100) >> FSHIFT);
    }
    sbuf_printf(b, "%lu/%u %d\n", nr_active(), taken, last);
    return 0;
}

/* ---- uptime, stat ---- */

static int show_uptime(const struct inode *ino, struct sbuf *b)
{
    uint64_t up = cycles_to_ns(arch_counter_read()) / (NS_PER_SEC / 100), idle = 0;
    for (unsigned c = 0; c < ncpus; c++) {
        struct acct_times t;
        acct_cpu_read(c, &t);
        idle += to_user_hz(t.idle_cycles);
    }
    sbuf_printf(b, "%lu.%02lu %lu.%02lu\n", (unsigned long)(up / 100), (unsigned long)(up % 100),
                (unsigned long)(idle / 100), (unsigned long)(idle % 100));
    return 0;
}

static void stat_cpu_line(struct sbuf *b, const char *name, const struct acct_times *t)
{
    sbuf_printf(b, "%s %lu 0 %lu %lu 0 0 0 0 0 0\n", name,
                (unsigned long)to_user_hz(t->user_cycles), (unsigned long)to_user_hz(t->sys_cycles),
                (unsigned long)to_user_hz(t->idle_cycles));
}

/* Interrupts of number n on every CPU. */
static uint64_t irq_total(unsigned n)
{
    uint64_t sum = 0;
    for (unsigned c = 0; c < ncpus; c++) {
        sum += STAT_READ(c, irq[n]);
    }
    return sum;
}

static int show_stat_all(const struct inode *ino, struct sbuf *b)
{
    struct acct_times all = {0}, t;
    uint64_t ctxt = 0, intr = 0;
    for (unsigned c = 0; c < ncpus; c++) {
        acct_cpu_read(c, &t);
        all.user_cycles += t.user_cycles;
        all.sys_cycles += t.sys_cycles;
        all.idle_cycles += t.idle_cycles;
        ctxt += STAT_READ(c, ctx_switches);
        intr += stats_exceptions(c, EXC_IRQ);
    }
    stat_cpu_line(b, "cpu ", &all);
    for (unsigned c = 0; c < ncpus; c++) {
        char name[12];
        ksnprintf(name, sizeof(name), "cpu%u", c);
        if (cpus[c].online) {
            acct_cpu_read(c, &t);
            stat_cpu_line(b, name, &t);
        }
    }
    sbuf_printf(b, "intr %lu", (unsigned long)intr);
    for (unsigned n = 0; n < ARCH_NR_IRQS; n++) {
        sbuf_printf(b, " %lu", (unsigned long)irq_total(n));
    }
    sbuf_printf(b, "\nctxt %lu\nbtime 0\nprocesses %lu\n", (unsigned long)ctxt,
                (unsigned long)proc_created());
    sbuf_printf(b, "procs_running %lu\nprocs_blocked 0\nsoftirq 0 0 0 0 0 0 0 0 0 0 0\n",
                nr_active());
    return 0;
}

/* ---- interrupts ---- */

/* What each IPI reason is for, in the words of Linux's arm64 list where one fits. */
static const char *const ipi_names[ARCH_NR_IPIS] = {
    [IPI_RESCHEDULE] = "Rescheduling interrupts",
    [IPI_WAKEUP] = "CPU wake-up interrupts",
    [IPI_KICK] = "Kick (isolation quiesce) interrupts",
    [IPI_CALL] = "Function call interrupts",
    [IPI_SIGNAL] = "Signal delivery interrupts",
    [IPI_PARTITION] = "Partition change interrupts",
    [IPI_STOP] = "CPU stop interrupts",
};

/* The counts of interrupt n (an IPI reason when ipi) on every online CPU, "%10u " each. */
static void irq_counts(struct sbuf *b, unsigned n, bool ipi)
{
    for (unsigned c = 0; c < ncpus; c++) {
        if (cpus[c].online) {
            sbuf_printf(b, "%10lu ",
                        (unsigned long)(ipi ? STAT_READ(c, ipi_recv[n]) : STAT_READ(c, irq[n])));
        }
    }
}

/* Linux's layout (kernel/irq/proc.c, arch/arm64/kernel/smp.c): a header of online CPUs, one
 * line per interrupt with its controller, number, trigger and name, one per IPI reason, Err.
 * The first column is the interrupt's own number (Linux shows a virtual one there). */
static int show_interrupts(const struct inode *ino, struct sbuf *b)
{
    sbuf_printf(b, "%11s", "");
    for (unsigned c = 0; c < ncpus; c++) {
        if (cpus[c].online) {
            sbuf_printf(b, "CPU%-8u", c);
        }
    }
    sbuf_printf(b, "\n");
    for (unsigned n = 0; n < ARCH_NR_IRQS; n++) {
        bool timer = n == arch_timer_irq(), console = n == arch_console_irq();
        if (!timer && !console && irq_total(n) == 0) {
            continue;
        }
        sbuf_printf(b, "%3u: ", n);
        irq_counts(b, n, false);
        sbuf_printf(b, " %8s %3u %-8s  %s\n", "GICv3", n, n < 32 ? "Level" : "Edge",
                    timer     ? "arch_timer"
                    : console ? "uart-pl011"
                              : "device");
    }
    for (unsigned r = 0; r < ARCH_NR_IPIS; r++) {
        if (ipi_names[r]) {
            sbuf_printf(b, "IPI%u:", r);
            irq_counts(b, r, true);
            sbuf_printf(b, "      %s\n", ipi_names[r]);
        }
    }
    sbuf_printf(b, "Err: %10u\n", 0u);
    return 0;
}

/* ---- cpuinfo ---- */

/* Linux's names of the AT_HWCAP bits (arch/arm64/kernel/cpuinfo.c), bit 0 first. */
static const char *const hwcap_names[] = {
    "fp",      "asimd", "evtstrm", "aes",   "pmull",    "sha1",   "sha2", "crc32",
    "atomics", "fphp",  "asimdhp", "cpuid", "asimdrdm", "jscvt",  "fcma", "lrcpc",
    "dcpop",   "sha3",  "sm3",     "sm4",   "asimddp",  "sha512", "sve",  "asimdfhm",
    "dit",     "uscat", "ilrcpc",  "flagm", "ssbs",     "sb",     "paca", "pacg",
};

static int show_cpuinfo(const struct inode *ino, struct sbuf *b)
{
    uint64_t hwcap = arch_user_hwcap(1), freq = arch_counter_freq();
    unsigned long bogo = (unsigned long)(freq / 5000); /* Linux: 2 * freq / 1e6, 2 decimals */
    for (unsigned c = 0; c < ncpus; c++) {
        if (!cpus[c].online) {
            continue;
        }
        uint32_t midr = cpus[c].arch.midr;
        sbuf_printf(b, "processor\t: %u\nBogoMIPS\t: %lu.%02lu\nFeatures\t:", c, bogo / 100,
                    bogo % 100);
        for (unsigned bit = 0; bit < ARRAY_SIZE(hwcap_names); bit++) {
            if (hwcap & (1ull << bit)) {
                sbuf_printf(b, " %s", hwcap_names[bit]);
            }
        }
        sbuf_printf(b, "\nCPU implementer\t: 0x%02x\nCPU architecture: 8\n", midr >> 24);
        sbuf_printf(b, "CPU variant\t: 0x%x\nCPU part\t: 0x%03x\nCPU revision\t: %u\n\n",
                    (midr >> 20) & 0xf, (midr >> 4) & 0xfff, midr & 0xf);
    }
    return 0;
}

/* ---- meminfo ---- */

static void kb_line(struct sbuf *b, const char *key, uint64_t kb)
{
    char label[24];
    ksnprintf(label, sizeof(label), "%s:", key);
    sbuf_printf(b, "%-15s %8lu kB\n", label, (unsigned long)kb);
}

/* Pages the kernel's object allocator holds (slabs and whole-page objects). */
static uint64_t slab_pages(void)
{
    struct kmem_class_info k[KMEM_CLASSES];
    kmem_info(k);
    uint64_t n = 0;
    for (unsigned c = 0; c < KMEM_CLASSES; c++) {
        n += k[c].slabs;
    }
    return n;
}

static int show_meminfo(const struct inode *ino, struct sbuf *b)
{
    uint64_t total = page_total_count() * 4, free = page_free_count() * 4;
    uint64_t shmem = tmpfs_pages_used() * 4, slab = slab_pages() * 4;
    /* Linux 6.1's keys in its order; what zerotick has not (swap, page cache of block files,
     * huge pages, ...) is 0. */
    static const char *const zero_keys[] = {
        "SwapCached",   "Active",         "Inactive",    "Active(anon)", "Inactive(anon)",
        "Active(file)", "Inactive(file)", "Unevictable", "Mlocked",      "SwapTotal",
        "SwapFree",     "Zswap",          "Zswapped",    "Dirty",        "Writeback"};
    kb_line(b, "MemTotal", total);
    kb_line(b, "MemFree", free);
    kb_line(b, "MemAvailable", free);
    kb_line(b, "Buffers", 0);
    kb_line(b, "Cached", shmem);
    for (size_t i = 0; i < ARRAY_SIZE(zero_keys); i++) {
        kb_line(b, zero_keys[i], 0);
    }
    static const char *const tail_keys[] = {
        "AnonPages",     "Mapped",         "Shmem",          "KReclaimable",  "Slab",
        "SReclaimable",  "SUnreclaim",     "KernelStack",    "PageTables",    "SecPageTables",
        "NFS_Unstable",  "Bounce",         "WritebackTmp",   "CommitLimit",   "Committed_AS",
        "VmallocTotal",  "VmallocUsed",    "VmallocChunk",   "Percpu",        "HardwareCorrupted",
        "AnonHugePages", "ShmemHugePages", "ShmemPmdMapped", "FileHugePages", "FilePmdMapped",
        "CmaTotal",      "CmaFree"};
    for (size_t i = 0; i < ARRAY_SIZE(tail_keys); i++) {
        bool is_shmem = strcmp(tail_keys[i], "Shmem") == 0;
        bool is_commit = strcmp(tail_keys[i], "CommitLimit") == 0;
        bool is_anon = strcmp(tail_keys[i], "AnonPages") == 0;
        bool is_slab = !strcmp(tail_keys[i], "Slab") || !strcmp(tail_keys[i], "SUnreclaim");
        kb_line(b, tail_keys[i],
                is_slab     ? slab
                : is_shmem  ? shmem
                : is_commit ? total
                : is_anon   ? total - free - shmem - slab
                            : 0);
    }
    sbuf_printf(b, "HugePages_Total:       0\nHugePages_Free:        0\n"
                   "HugePages_Rsvd:        0\nHugePages_Surp:        0\n");
    kb_line(b, "Hugepagesize", 2048);
    kb_line(b, "Hugetlb", 0);
    return 0;
}

/* slabinfo: the object allocator's classes in Linux's version 2.1 layout (slabtop reads it);
 * zerotick's classes are the power-of-two kmalloc sizes, one page a slab, no tunables. */
static int show_slabinfo(const struct inode *ino, struct sbuf *b)
{
    struct kmem_class_info k[KMEM_CLASSES];
    kmem_info(k);
    sbuf_printf(b, "slabinfo - version: 2.1\n# name            <active_objs> <num_objs> "
                   "<objsize> <objperslab> <pagesperslab> : tunables <limit> <batchcount> "
                   "<sharedfactor> : slabdata <active_slabs> <num_slabs> <sharedavail>\n");
    for (unsigned c = KMEM_CLASSES; c-- > 0;) {
        char name[24];
        if (k[c].size >= 1024) {
            ksnprintf(name, sizeof(name), "kmalloc-%luk", (unsigned long)(k[c].size >> 10));
        } else {
            ksnprintf(name, sizeof(name), "kmalloc-%lu", (unsigned long)k[c].size);
        }
        sbuf_printf(
            b, "%-17s %6lu %6lu %6lu %4u %4d : tunables %4d %4d %4d : slabdata %6lu %6lu %6d\n",
            name, (unsigned long)k[c].objects, (unsigned long)(k[c].slabs * k[c].per_slab),
            (unsigned long)k[c].size, k[c].per_slab, 1, 0, 0, 0, (unsigned long)k[c].slabs,
            (unsigned long)k[c].slabs, 0);
    }
    return 0;
}

/* ---- filesystems, cmdline, version ---- */

static int show_filesystems(const struct inode *ino, struct sbuf *b)
{
    sbuf_printf(b, "nodev\tsysfs\nnodev\ttmpfs\nnodev\tproc\nnodev\tdevtmpfs\nnodev\trootfs\n");
    return 0;
}

static int show_kcmdline(const struct inode *ino, struct sbuf *b)
{
    sbuf_printf(b, "%s\n", arch_boot_info()->cmdline);
    return 0;
}

static int show_version(const struct inode *ino, struct sbuf *b)
{
    sbuf_printf(b, "%s version %s (zerotick) (gcc %s) #1 SMP\n", ZT_SYSNAME, ZT_RELEASE,
                __VERSION__);
    return 0;
}

const struct synth_ops procfs_loadavg_ops = {.show = show_loadavg, .show_fresh = true};
const struct synth_ops procfs_uptime_ops = {.show = show_uptime, .show_fresh = true};
const struct synth_ops procfs_stat_all_ops = {.show = show_stat_all, .show_fresh = true};
const struct synth_ops procfs_interrupts_ops = {.show = show_interrupts, .show_fresh = true};
const struct synth_ops procfs_cpuinfo_ops = {.show = show_cpuinfo, .show_fresh = true};
const struct synth_ops procfs_meminfo_ops = {.show = show_meminfo, .show_fresh = true};
const struct synth_ops procfs_slabinfo_ops = {.show = show_slabinfo, .show_fresh = true};
const struct synth_ops procfs_filesystems_ops = {.show = show_filesystems, .show_fresh = true};
const struct synth_ops procfs_kcmdline_ops = {.show = show_kcmdline, .show_fresh = true};
const struct synth_ops procfs_version_ops = {.show = show_version, .show_fresh = true};

/* ---- /proc/sys ---- */

/* One file of /proc/sys: its path below /proc/sys and its text (or a function's). */
struct sysctl {
    const char *path;
    const char *text;
    void (*show)(struct sbuf *b);
};

static void show_random_uuid(struct sbuf *b)
{
    uint8_t u[16];
    random_bytes(u, sizeof(u));
    u[6] = (uint8_t)((u[6] & 0x0f) | 0x40); /* version 4 */
    u[8] = (uint8_t)((u[8] & 0x3f) | 0x80); /* variant 1 */
    for (int i = 0; i < 16; i++) {
        sbuf_printf(b, "%02x%s", u[i], i == 3 || i == 5 || i == 7 || i == 9 ? "-" : "");
    }
    sbuf_printf(b, "\n");
}

static char boot_id[40];

static void show_boot_id(struct sbuf *b)
{
    sbuf_printf(b, "%s", boot_id);
}

static void show_pid_max(struct sbuf *b)
{
    sbuf_printf(b, "%d\n", PID_MAX);
}

/* What tools read (ps, top, free, glibc, libcap, stress-ng, rt-tests): one root user, no
 * real-time throttling (sched_rt_runtime_us -1: a real-time task is never stopped to let
 * others run; zerotick keeps no such budget), no address-space randomisation. */
static const struct sysctl sysctls[] = {
    {"kernel/ostype", ZT_SYSNAME "\n", 0},
    {"kernel/osrelease", ZT_RELEASE "\n", 0},
    {"kernel/version", "#1 SMP\n", 0},
    {"kernel/hostname", "zerotick\n", 0},
    {"kernel/domainname", "(none)\n", 0},
    {"kernel/pid_max", 0, show_pid_max},
    {"kernel/threads-max", 0, show_pid_max},
    {"kernel/ngroups_max", "65536\n", 0},
    {"kernel/cap_last_cap", "40\n", 0},
    {"kernel/overflowuid", "65534\n", 0},
    {"kernel/overflowgid", "65534\n", 0},
    {"kernel/tainted", "0\n", 0},
    {"kernel/printk", "4\t4\t1\t7\n", 0},
    {"kernel/randomize_va_space", "0\n", 0},
    {"kernel/sched_rt_runtime_us", "-1\n", 0},
    {"kernel/sched_rt_period_us", "1000000\n", 0},
    {"kernel/sched_child_runs_first", "0\n", 0},
    {"kernel/perf_event_paranoid", "2\n", 0},
    {"kernel/kptr_restrict", "0\n", 0},
    {"kernel/dmesg_restrict", "0\n", 0},
    {"kernel/core_pattern", "core\n", 0},
    {"kernel/random/boot_id", 0, show_boot_id},
    {"kernel/random/uuid", 0, show_random_uuid},
    {"kernel/random/entropy_avail", "256\n", 0},
    {"kernel/random/poolsize", "256\n", 0},
    {"vm/overcommit_memory", "0\n", 0},
    {"vm/overcommit_ratio", "50\n", 0},
    {"vm/max_map_count", "65530\n", 0},
    {"vm/swappiness", "0\n", 0},
    {"vm/stat_interval", "1\n", 0},
    {"fs/file-max", "9223372036854775807\n", 0},
    {"fs/nr_open", "256\n", 0},
    {"fs/pipe-max-size", "4096\n", 0},
};

static int show_sysctl(const struct inode *ino, struct sbuf *b)
{
    const struct sysctl *s = &sysctls[ino->synth_a];
    if (s->show) {
        s->show(b);
    } else {
        sbuf_printf(b, "%s", s->text);
    }
    return 0;
}

static const struct synth_ops sysctl_ops = {.show = show_sysctl, .show_fresh = true};

/* The directory `path` (relative, no trailing slash) under dir, made if missing. */
static struct inode *sysctl_dir_locked(struct inode *dir, const char *path, size_t len)
{
    ASSERT_HELD(&vfs_lock);
    char name[VFS_NAME_MAX + 1];
    while (len) {
        size_t n = 0;
        while (n < len && path[n] != '/') {
            n++;
        }
        memcpy(name, path, MIN(n, VFS_NAME_MAX));
        name[MIN(n, VFS_NAME_MAX)] = 0;
        struct inode *next = vfs_child_locked(dir, name);
        dir = next ? next : synth_add_locked(dir, name, S_IFDIR | 0555, 0, 0, 0);
        if (!dir) {
            return 0;
        }
        path += n + (n < len);
        len -= n + (n < len);
    }
    return dir;
}

void procfs_sys_init_locked(struct inode *sys)
{
    ASSERT_HELD(&vfs_lock);
    uint8_t id[16];
    random_bytes(id, sizeof(id));
    struct tbuf t;
    tbuf_init(&t, boot_id, sizeof(boot_id));
    for (int i = 0; i < 16; i++) {
        tbuf_hex(&t, id[i], 2);
        tbuf_str(&t, i == 3 || i == 5 || i == 7 || i == 9 ? "-" : "");
    }
    tbuf_char(&t, '\n');
    for (size_t i = 0; i < ARRAY_SIZE(sysctls); i++) {
        const char *path = sysctls[i].path, *slash = path;
        for (const char *p = path; *p; p++) {
            slash = *p == '/' ? p : slash;
        }
        struct inode *dir = sysctl_dir_locked(sys, path, (size_t)(slash - path));
        if (dir) {
            synth_add_locked(dir, slash + 1, S_IFREG | 0444, &sysctl_ops, (int)i, 0);
        }
    }
}
