/* SPDX-License-Identifier: MIT */
/*
 * sysfs.c — /sys: the CPUs as Linux's sysfs describes them (Documentation/ABI/testing/
 * sysfs-devices-system-cpu), which glibc (get_nprocs, get_nprocs_conf), libnuma and Linux's
 * isolation checks read.
 *
 *   /sys/devices/system/cpu/{possible,present,online,offline}  the sets, as cpulists
 *   /sys/devices/system/cpu/{isolated,nohz_full}   the dataplane set: what zerotick does for
 *                     these CPUs is what Linux's isolcpus= and nohz_full= ask for
 *   /sys/devices/system/cpu/kernel_max             the most CPUs the kernel supports, minus 1
 *   /sys/devices/system/cpu/cpuN/online, topology/ one directory per CPU of the machine
 *   /sys/devices/system/node/...                   one memory node, node0, holding every CPU
 *                     (cpulist and cpumap: libnuma's numa_node_of_cpu reads the map)
 *   /sys/kernel/mm/transparent_hugepage/enabled    "never": no huge pages
 *
 * The texts are read from the live sets (cpus_online, cpus_dataplane), so a run-time
 * partition change (docs/partition.md) shows at once; no lock is needed (the sets are read
 * with relaxed loads, like everything a housekeeping CPU reads about a dataplane one).
 * Built once at boot under vfs_lock (the machine's CPUs do not change).
 */
#include "kernel/cpu.h"
#include "kernel/cpumask.h"
#include "kernel/lib.h"
#include "kernel/synth.h"
#include "kernel/vfs.h"

#define DIR_MODE  (S_IFDIR | 0755)
#define FILE_MODE (S_IFREG | 0444)

enum cpu_set { SET_POSSIBLE, SET_ONLINE, SET_OFFLINE, SET_ISOLATED, SET_NOHZ_FULL };

static cpumask_t possible(void)
{
    return cpumask_first_n(ncpus);
}

static void put_list(struct sbuf *b, cpumask_t m)
{
    char text[MAX_CPUS / 2];
    cpulist_format(m, text, sizeof(text));
    sbuf_printf(b, "%s\n", cpumask_empty(m) ? "" : text); /* Linux: an empty line, not "none" */
}

static int show_set(const struct inode *ino, struct sbuf *b)
{
    cpumask_t online = cpumask_load(&cpus_online), dataplane = cpumask_load(&cpus_dataplane);
    switch ((enum cpu_set)ino->synth_a) {
    case SET_POSSIBLE:
        put_list(b, possible());
        break;
    case SET_ONLINE:
        put_list(b, online);
        break;
    case SET_OFFLINE:
        put_list(b, cpumask_andnot(possible(), online));
        break;
    case SET_ISOLATED:
        put_list(b, dataplane);
        break;
    case SET_NOHZ_FULL:
        if (cpumask_empty(dataplane)) {
            sbuf_printf(b, "(null)\n"); /* Linux's text when nohz_full= was not given */
        } else {
            put_list(b, dataplane);
        }
        break;
    }
    return 0;
}

static int show_kernel_max(const struct inode *ino, struct sbuf *b)
{
    sbuf_printf(b, "%d\n", MAX_CPUS - 1);
    return 0;
}

/* cpuN/online */
static int show_cpu_online(const struct inode *ino, struct sbuf *b)
{
    sbuf_printf(b, "%d\n", cpus[ino->synth_a].online ? 1 : 0);
    return 0;
}

/* cpuN/topology: every CPU its own core in one cluster and package (QEMU's virt describes
 * no topology in its device tree, and Linux shows this one for it). */
enum topo {
    TOPO_CORE_ID,
    TOPO_PACKAGE_ID,
    TOPO_CLUSTER_ID,
    TOPO_SELF_LIST,
    TOPO_ALL_LIST,
    TOPO_SELF_MASK,
    TOPO_ALL_MASK
};

static int show_topology(const struct inode *ino, struct sbuf *b)
{
    cpumask_t self = CPUMASK_NONE;
    cpumask_set(&self, (unsigned)ino->synth_a);
    switch ((enum topo)ino->synth_b) {
    case TOPO_CORE_ID:
        sbuf_printf(b, "%d\n", ino->synth_a);
        break;
    case TOPO_PACKAGE_ID:
    case TOPO_CLUSTER_ID:
        sbuf_printf(b, "0\n");
        break;
    case TOPO_SELF_LIST:
        put_list(b, self);
        break;
    case TOPO_ALL_LIST:
        put_list(b, possible());
        break;
    case TOPO_SELF_MASK:
    case TOPO_ALL_MASK:
        sbuf_cpumask(b, ino->synth_b == TOPO_SELF_MASK ? self : possible());
        sbuf_printf(b, "\n");
        break;
    }
    return 0;
}

static int show_text(const struct inode *ino, struct sbuf *b)
{
    static const char *const texts[] = {"0\n", "always madvise [never]\n"};
    sbuf_printf(b, "%s", texts[ino->synth_a]);
    return 0;
}

static const struct synth_ops set_ops = {.show = show_set, .show_fresh = true};
static const struct synth_ops kernel_max_ops = {.show = show_kernel_max, .show_fresh = true};
static const struct synth_ops cpu_online_ops = {.show = show_cpu_online, .show_fresh = true};
static const struct synth_ops topology_ops = {.show = show_topology, .show_fresh = true};
static const struct synth_ops text_ops = {.show = show_text, .show_fresh = true};

static struct inode *dir_locked(struct inode *parent, const char *name)
{
    ASSERT_HELD(&vfs_lock);
    struct inode *d = parent ? vfs_child_locked(parent, name) : 0;
    return d ? d : parent ? synth_add_locked(parent, name, DIR_MODE, 0, 0, 0) : 0;
}

static void add_file_locked(struct inode *dir, const char *name, const struct synth_ops *ops, int a,
                            int b)
{
    ASSERT_HELD(&vfs_lock);
    if (dir) {
        synth_add_locked(dir, name, FILE_MODE, ops, a, b);
    }
}

static void cpu_dir_locked(struct inode *cpu_dir, unsigned c)
{
    ASSERT_HELD(&vfs_lock);
    static const struct {
        const char *name;
        enum topo what;
    } topo[] = {
        {"core_id", TOPO_CORE_ID},           {"physical_package_id", TOPO_PACKAGE_ID},
        {"cluster_id", TOPO_CLUSTER_ID},     {"thread_siblings_list", TOPO_SELF_LIST},
        {"thread_siblings", TOPO_SELF_MASK}, {"core_cpus_list", TOPO_SELF_LIST},
        {"core_cpus", TOPO_SELF_MASK},       {"core_siblings_list", TOPO_ALL_LIST},
        {"core_siblings", TOPO_ALL_MASK},    {"package_cpus_list", TOPO_ALL_LIST},
        {"package_cpus", TOPO_ALL_MASK},     {"cluster_cpus_list", TOPO_ALL_LIST},
    };
    char name[16];
    ksnprintf(name, sizeof(name), "cpu%u", c);
    struct inode *d = dir_locked(cpu_dir, name);
    add_file_locked(d, "online", &cpu_online_ops, (int)c, 0);
    struct inode *topology = dir_locked(d, "topology");
    for (size_t i = 0; i < ARRAY_SIZE(topo); i++) {
        add_file_locked(topology, topo[i].name, &topology_ops, (int)c, topo[i].what);
    }
}

void sysfs_init_locked(struct inode *root)
{
    ASSERT_HELD(&vfs_lock);
    struct inode *sys = synth_add_locked(root, "sys", DIR_MODE, 0, 0, 0);
    struct inode *system = dir_locked(dir_locked(sys, "devices"), "system");
    struct inode *cpu = dir_locked(system, "cpu");
    static const char *const sets[] = {"possible", "online", "offline", "isolated", "nohz_full"};
    static const enum cpu_set set_of[] = {SET_POSSIBLE, SET_ONLINE, SET_OFFLINE, SET_ISOLATED,
                                          SET_NOHZ_FULL};
    for (size_t i = 0; i < ARRAY_SIZE(sets); i++) {
        add_file_locked(cpu, sets[i], &set_ops, set_of[i], 0);
    }
    add_file_locked(cpu, "present", &set_ops, SET_POSSIBLE, 0);
    add_file_locked(cpu, "kernel_max", &kernel_max_ops, 0, 0);
    for (unsigned c = 0; cpu && c < ncpus; c++) {
        cpu_dir_locked(cpu, c);
    }
    struct inode *node = dir_locked(system, "node");
    add_file_locked(node, "online", &text_ops, 0, 0);
    add_file_locked(node, "possible", &text_ops, 0, 0);
    add_file_locked(node, "has_cpu", &text_ops, 0, 0);
    struct inode *node0 = dir_locked(node, "node0");
    add_file_locked(node0, "cpulist", &topology_ops, 0, TOPO_ALL_LIST);
    add_file_locked(node0, "cpumap", &topology_ops, 0, TOPO_ALL_MASK);
    struct inode *thp =
        dir_locked(dir_locked(dir_locked(sys, "kernel"), "mm"), "transparent_hugepage");
    add_file_locked(thp, "enabled", &text_ops, 1, 0);
}
