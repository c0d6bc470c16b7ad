/* SPDX-License-Identifier: MIT */
/*
 * dt.c — read what zerotick needs from QEMU virt's device tree into struct dt_info
 * (contract in dt.h), with the generic reader kernel/lib/fdt.c.
 *
 * What it looks up, in this order (the first problem found is the one reported): /psci
 * (method hvc or smc), memory (device_type "memory", every non-empty reg entry), cpus
 * (children of /cpus with device_type "cpu"; reg[0] is the MPIDR; duplicates refused), the
 * arm,gic-v3 node (reg[0] distributor, reg[1..#redistributor-regions] redistributors), the
 * arm,pl011 UART (the one /chosen/stdout-path names, directly or through /aliases, if it is a
 * pl011; otherwise the first), the arm,armv8-timer PPIs, the optional /chosen/bootargs, the
 * optional virtio,mmio transports (sorted by address; a malformed one is skipped and
 * counted, never fatal), the optional arm,smmu-v3 (registers, the eventq and gerror SPIs by
 * interrupt-names, its phandle), the optional pci-host-ecam-generic host bridge (ECAM
 * window, bus-range, the windows of `ranges`, the INTx lines of interrupt-map, the iommu-map
 * entry that names the SMMU) and the optional /chosen linux,initrd-start/-end; a malformed
 * SMMU or bridge is left out with its problem recorded and a malformed initrd pair ignored with
 * a note, never fatal.  Nodes with a status other than "okay"/"ok" are skipped, except cpus.
 * On failure it returns -EINVAL (malformed or unsupported) or -ENOENT (something required is
 * missing), zeroes *out and writes one line for the boot console naming the problem.
 *
 * What it does not do: memory and devices are taken from the root's direct children, where
 * QEMU virt puts them, so their reg is in the root's cells; "interrupts" are read as the
 * GICv3's 3-cell <type number flags>, which find_gic() checks, without following
 * interrupt-parent.
 *
 * Pure: no globals, no allocation, no hardware, any context.  The kernel calls it once on the
 * boot CPU (smp.c); tests/unit/test_fdt.c runs it on the host over QEMU's own dumps and
 * corrupted copies of them under ASan/UBSan; tests/unit/test_pci.c reads the PCIe and SMMU
 * nodes of QEMU's iommu=smmuv3 dump.  Spec: the arm,gic-v3, arm,armv8-timer, arm,psci,
 * arm,smmu-v3 and pci-host-generic bindings (Linux Documentation/devicetree/bindings), the
 * IEEE 1275 PCI bus binding (phys.hi: space code in bits 24-25, prefetchable bit 30), the
 * generic iommu-map and interrupt-map properties (Devicetree Specification v0.4, 2.4); GIC
 * INTIDs per IHI 0069 (SPI 32+n, PPI 16+n).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/fdt.h"
#include "kernel/lib.h"
#include "dt.h"

#define GIC_IRQ_CELLS 3 /* <type number flags> */
#define GIC_SPI_BASE  32
#define GIC_SPI_COUNT 988 /* INTIDs 32..1019 */
#define GIC_PPI_BASE  16
#define GIC_PPI_COUNT 16
#define TIMER_IRQS    4

/* ------------------------------------------------------------------ GIC interrupts */

/* A GIC <type number flags> triple as an INTID: type 0 SPI (32 + n), type 1 PPI (16 + n). */
static bool gic_intid(const uint8_t *triple, bool ppi_only, uint32_t *intid)
{
    uint32_t type = fdt_be32(triple);
    uint32_t num = fdt_be32(triple + 4);

    if (type == 0 && num < GIC_SPI_COUNT && !ppi_only) {
        *intid = GIC_SPI_BASE + num;
        return true;
    }
    if (type == 1 && num < GIC_PPI_COUNT) {
        *intid = GIC_PPI_BASE + num;
        return true;
    }
    return false;
}

/* Message for interrupt i of node that is not what it should be. */
static int bad_irq(struct fdt_tree *x, uint32_t node, uint32_t i, const uint8_t *triple,
                   const char *want)
{
    fdt_msg_node(x, "/", node);
    fdt_msg_fmt(&x->m, "interrupt %d <type %d", i, fdt_be32(triple));
    fdt_msg_fmt(&x->m, " number %d> is not ", fdt_be32(triple + 4), 0);
    return fdt_bad(&x->m, want, 0, 0);
}

/* node's interrupts as n GIC triples (at least n of them). */
static int node_irqs(struct fdt_tree *x, uint32_t node, uint32_t n, struct fdt_prop *irqs)
{
    if (!fdt_prop_find(&x->f, node, "interrupts", irqs)) {
        fdt_msg_node(x, "/", node);
        tbuf_str(&x->m, "has no interrupts property");
        return -FDT_ENOENT;
    }
    if (irqs->len < n * GIC_IRQ_CELLS * 4) {
        return fdt_bad_node(x, "/", node,
                            "interrupts is %d bytes, need %d <type number flags> triple(s)",
                            irqs->len, n);
    }
    return 0;
}

/* ------------------------------------------------------------------ what zerotick needs */

static int find_psci(struct fdt_tree *x, struct dt_info *out)
{
    uint32_t node;
    struct fdt_prop method;

    if (!fdt_root_child(x, "psci", 4, &node)) {
        return fdt_missing(&x->m, "missing node /psci");
    }
    if (!fdt_prop_find(&x->f, node, "method", &method)) {
        return fdt_missing(&x->m, "/psci has no method property");
    }
    if (fdt_prop_is(&x->f, node, "method", "hvc")) {
        out->psci = DT_PSCI_HVC;
    } else if (fdt_prop_is(&x->f, node, "method", "smc")) {
        out->psci = DT_PSCI_SMC;
    } else {
        tbuf_str(&x->m, "device tree: /psci method \"");
        fdt_msg_text(&x->m, method.val, method.len);
        return fdt_bad(&x->m, "\" is neither hvc nor smc", 0, 0);
    }
    return 0;
}

/* Every non-empty reg entry of one memory node, up to DT_MAX_MEM in all. */
static int add_memory(struct fdt_tree *x, uint32_t node, struct dt_info *out)
{
    struct fdt_prop reg;
    struct fdt_range r;
    int err = fdt_node_reg(x, "/", node, x->root_cells, &reg);

    for (uint32_t i = 0; err == 0 && fdt_reg_entry(&reg, x->root_cells, i, &r); i++) {
        if (r.size != 0 && out->nmem < DT_MAX_MEM) {
            out->mem[out->nmem++] = r;
        }
    }
    return err;
}

static int find_memory(struct fdt_tree *x, struct dt_info *out)
{
    uint32_t it = 0;
    uint32_t node;
    bool found = false;

    for (uint32_t i = 0; fdt_root_kid(x, &it, i, &node); i++) {
        if (fdt_prop_is(&x->f, node, "device_type", "memory") && fdt_is_enabled(&x->f, node)) {
            int err = add_memory(x, node, out);

            if (err != 0) {
                return err;
            }
            found = true;
        }
    }
    if (!found) {
        return fdt_missing(&x->m, "no memory node");
    }
    if (out->nmem == 0) {
        return fdt_missing(&x->m, "memory nodes describe no memory (every reg size is 0)");
    }
    return 0;
}

/* MPIDRs seen so far, hashed into a bitmap: a duplicate is searched for only when its hash
 * bit is already set, so reading 512 cpus costs 512 steps, not 512 * 512 / 2.  The hash keeps
 * QEMU virt's MPIDRs (Aff1 << 8 | Aff0, Aff0 < 16) apart: Aff0 | Aff1 << 4. */
#define SEEN_BITS 4096
struct mpidr_seen {
    uint64_t bits[SEEN_BITS / 64];
};

static uint32_t mpidr_hash(uint64_t m)
{
    uint64_t aff0 = m & 0xff, aff1 = m >> 8 & 0xff, aff2 = m >> 16 & 0xff, aff3 = m >> 32 & 0xff;
    return (uint32_t)(((aff0 & 0xf) | aff1 << 4) ^ (aff0 >> 4 | aff2 << 4 | aff3 << 8)) % SEEN_BITS;
}

/* Has an earlier cpu (recorded or not) this MPIDR?  Marks it seen. */
static bool mpidr_repeats(const struct dt_info *out, struct mpidr_seen *seen, uint64_t m)
{
    uint32_t h = mpidr_hash(m);
    bool maybe = seen->bits[h / 64] >> (h % 64) & 1;
    seen->bits[h / 64] |= 1ull << (h % 64);
    for (uint32_t i = 0; maybe && i < out->ncpus; i++) {
        if (out->cpu_mpidr[i] == m) {
            return true;
        }
    }
    return false;
}

/* One cpu node: record its MPIDR (reg[0]) unless the array is full; reject duplicates. */
static int add_cpu(struct fdt_tree *x, uint32_t node, struct fdt_cells c, struct dt_info *out,
                   struct mpidr_seen *seen)
{
    struct fdt_prop reg;
    struct fdt_range r;
    int err = fdt_node_reg(x, "/cpus/", node, c, &reg);

    if (err != 0) {
        return err;
    }
    fdt_reg_entry(&reg, c, 0, &r);
    if (mpidr_repeats(out, seen, r.base)) {
        return fdt_bad_node(x, "/cpus/", node, "reg %x repeats the MPIDR of an earlier cpu", r.base,
                            0);
    }
    if (out->ncpus < DT_MAX_CPUS) {
        out->cpu_mpidr[out->ncpus++] = r.base;
    }
    out->ncpus_total++;
    return 0;
}

static int find_cpus(struct fdt_tree *x, struct dt_info *out)
{
    uint32_t cpus, it, node;
    struct fdt_cells c;
    struct mpidr_seen seen;
    int err;

    for (uint32_t i = 0; i < SEEN_BITS / 64; i++) {
        seen.bits[i] = 0;
    }
    if (!fdt_root_child(x, "cpus", 4, &cpus)) {
        return fdt_missing(&x->m, "missing node /cpus");
    }
    err = fdt_node_cells(x, "/", cpus, &c);
    for (it = fdt_node_body(&x->f, cpus); err == 0 && fdt_child_next(&x->f, &it, &node);) {
        if (fdt_prop_is(&x->f, node, "device_type", "cpu")) {
            err = add_cpu(x, node, c, out, &seen);
        }
    }
    if (err == 0 && out->ncpus_total == 0) {
        return fdt_missing(&x->m, "no cpu nodes under /cpus");
    }
    return err;
}

/* #redistributor-regions in 1..DT_MAX_GICR, and the 3-cell interrupts node_irqs() reads. */
static int gic_props(struct fdt_tree *x, uint32_t node, uint32_t *nregions)
{
    uint32_t icells = GIC_IRQ_CELLS;
    int err = fdt_prop_u32(x, "/", node, "#redistributor-regions", 1, nregions);

    if (err == 0) {
        err = fdt_prop_u32(x, "/", node, "#interrupt-cells", GIC_IRQ_CELLS, &icells);
    }
    if (err != 0) {
        return err;
    }
    if (*nregions < 1 || *nregions > DT_MAX_GICR) {
        return fdt_bad_node(x, "/", node, "#redistributor-regions %d is outside 1..%d", *nregions,
                            DT_MAX_GICR);
    }
    if (icells != GIC_IRQ_CELLS) {
        return fdt_bad_node(x, "/", node,
                            "#interrupt-cells is %d; only 3-cell GIC interrupts are supported",
                            icells, 0);
    }
    return 0;
}

/* reg[0] distributor, reg[1..n] redistributor regions. */
static int find_gic(struct fdt_tree *x, struct dt_info *out)
{
    uint32_t node, n;
    struct fdt_prop reg;
    int err;

    if (!fdt_root_child_compatible(x, "arm,gic-v3", &node)) {
        return fdt_missing(&x->m, "no arm,gic-v3 interrupt controller");
    }
    err = gic_props(x, node, &n);
    if (err == 0) {
        err = fdt_node_reg(x, "/", node, x->root_cells, &reg);
    }
    if (err == 0 && fdt_reg_count(&reg, x->root_cells) < 1 + n) {
        return fdt_bad_node(x, "/", node,
                            "reg has too few entries for the distributor and %d redistributor "
                            "region(s)",
                            n, 0);
    }
    for (uint32_t i = 0; err == 0 && i < n; i++) {
        fdt_reg_entry(&reg, x->root_cells, i + 1, &out->gicr[i]);
    }
    if (err == 0) {
        fdt_reg_entry(&reg, x->root_cells, 0, &out->gicd);
        out->ngicr = n;
    }
    return err;
}

/* The root child /chosen/stdout-path names, directly or through /aliases, up to any ':'. */
static bool stdout_node(const struct fdt_tree *x, uint32_t *node)
{
    uint32_t chosen, aliases, n;
    struct fdt_prop path;

    if (!fdt_root_child(x, "chosen", 6, &chosen) ||
        !fdt_prop_find(&x->f, chosen, "stdout-path", &path)) {
        return false;
    }
    n = fdt_str_nlen(path.val, path.len);
    for (uint32_t i = 0; i < n; i++) {
        if (path.val[i] == ':') {
            n = i;
        }
    }
    if (n > 0 && path.val[0] != '/') {
        if (!fdt_root_child(x, "aliases", 7, &aliases) ||
            !fdt_prop_find_n(&x->f, aliases, (const char *)path.val, n, &path)) {
            return false;
        }
        n = fdt_str_nlen(path.val, path.len);
    }
    /* Only "/name": deeper nodes would need "ranges" translation. */
    for (uint32_t i = 1; i < n; i++) {
        if (path.val[i] == '/') {
            return false;
        }
    }
    return n > 1 && path.val[0] == '/' &&
           fdt_root_child(x, (const char *)path.val + 1, n - 1, node);
}

static int find_uart(struct fdt_tree *x, struct dt_info *out)
{
    uint32_t node;
    struct fdt_prop reg, irqs;
    int err;

    if (!stdout_node(x, &node) || !fdt_is_compatible(&x->f, node, "arm,pl011") ||
        !fdt_is_enabled(&x->f, node)) {
        if (!fdt_root_child_compatible(x, "arm,pl011", &node)) {
            return fdt_missing(&x->m, "no arm,pl011 UART");
        }
    }
    err = fdt_node_reg(x, "/", node, x->root_cells, &reg);
    if (err == 0) {
        err = node_irqs(x, node, 1, &irqs);
    }
    if (err == 0 && !gic_intid(irqs.val, false, &out->uart_intid)) {
        return bad_irq(x, node, 0, irqs.val, "a GIC SPI or PPI");
    }
    if (err == 0) {
        fdt_reg_entry(&reg, x->root_cells, 0, &out->uart);
    }
    return err;
}

/* Four PPIs: secure physical, non-secure physical, virtual, hypervisor (in that order). */
static int find_timer(struct fdt_tree *x, struct dt_info *out)
{
    uint32_t node;
    struct fdt_prop irqs;
    int err;

    if (!fdt_root_child_compatible(x, "arm,armv8-timer", &node)) {
        return fdt_missing(&x->m, "no arm,armv8-timer node");
    }
    err = node_irqs(x, node, TIMER_IRQS, &irqs);
    for (uint32_t i = 0; err == 0 && i < TIMER_IRQS; i++) {
        const uint8_t *triple = irqs.val + i * GIC_IRQ_CELLS * 4;

        if (!gic_intid(triple, true, &out->timer_intid[i])) {
            return bad_irq(x, node, i, triple, "a PPI");
        }
    }
    return err;
}

/* Optional; when present it must be a NUL-terminated string. */
static int find_bootargs(struct fdt_tree *x, struct dt_info *out)
{
    uint32_t chosen;
    struct fdt_prop p;

    if (!fdt_root_child(x, "chosen", 6, &chosen) || !fdt_prop_find(&x->f, chosen, "bootargs", &p)) {
        return 0;
    }
    if (fdt_str_nlen(p.val, p.len) == p.len) {
        return fdt_bad(
            &x->m,
            "device tree malformed: /chosen/bootargs is not NUL-terminated within its %d "
            "bytes",
            p.len, 0);
    }
    out->bootargs = (const char *)p.val;
    out->bootargs_len = fdt_str_nlen(p.val, p.len);
    return 0;
}

/* A /chosen linux,initrd-* value: one or two big-endian cells (Linux reads either). */
static bool initrd_cell(const struct fdt_prop *p, uint64_t *v)
{
    if (p->len == 4) {
        *v = fdt_be32(p->val);
    } else if (p->len == 8) {
        *v = (uint64_t)fdt_be32(p->val) << 32 | fdt_be32(p->val + 4);
    }
    return p->len == 4 || p->len == 8;
}

/* Optional: the archive a boot loader handed over (/chosen linux,initrd-start and -end, as
 * Linux's Documentation/devicetree/bindings/chosen.txt).  A malformed pair is not fatal: the
 * kernel boots without it and says why (initrd_note). */
static int find_initrd(struct fdt_tree *x, struct dt_info *out)
{
    uint32_t chosen;
    struct fdt_prop s, e;
    uint64_t start, end;

    if (!fdt_root_child(x, "chosen", 6, &chosen)) {
        return 0;
    }
    bool has_s = fdt_prop_find(&x->f, chosen, "linux,initrd-start", &s);
    bool has_e = fdt_prop_find(&x->f, chosen, "linux,initrd-end", &e);
    if (!has_s && !has_e) {
        return 0;
    }
    if (!has_s || !has_e) {
        out->initrd_note = "only one of linux,initrd-start and linux,initrd-end";
    } else if (!initrd_cell(&s, &start) || !initrd_cell(&e, &end)) {
        out->initrd_note = "linux,initrd-start or -end is neither 4 nor 8 bytes long";
    } else if (end <= start) {
        out->initrd_note = "linux,initrd-end is not above linux,initrd-start";
    } else {
        out->initrd_start = start;
        out->initrd_end = end;
    }
    return 0;
}

/* One virtio,mmio node: reg[0] and an SPI, or false (malformed: the caller skips it). */
static bool virtio_node(struct fdt_tree *x, uint32_t node, struct fdt_range *r, uint32_t *intid)
{
    struct fdt_cells c = x->root_cells;
    struct fdt_prop reg, irqs;

    if (!fdt_prop_find(&x->f, node, "reg", &reg) || c.addr < 1 || c.addr > 2 || c.size > 2 ||
        reg.len < 4 * (c.addr + c.size) || !fdt_reg_entry(&reg, c, 0, r) || r->size == 0) {
        return false;
    }
    return fdt_prop_find(&x->f, node, "interrupts", &irqs) && irqs.len >= GIC_IRQ_CELLS * 4 &&
           fdt_be32(irqs.val) == 0 && gic_intid(irqs.val, false, intid);
}

/* Insert transport (r, intid) into out->virtio[], kept sorted by base address. */
static void virtio_insert(struct dt_info *out, struct fdt_range r, uint32_t intid)
{
    uint32_t i = out->nvirtio++;

    for (; i > 0 && out->virtio[i - 1].base > r.base; i--) {
        out->virtio[i].base = out->virtio[i - 1].base; /* field by field: no memcpy */
        out->virtio[i].size = out->virtio[i - 1].size;
        out->virtio_intid[i] = out->virtio_intid[i - 1];
    }
    out->virtio[i].base = r.base;
    out->virtio[i].size = r.size;
    out->virtio_intid[i] = intid;
}

/* Optional: every enabled virtio,mmio root child; bad ones are counted, never fatal. */
static int find_virtio(struct fdt_tree *x, struct dt_info *out)
{
    uint32_t it = 0, node, intid;
    struct fdt_range r;

    for (uint32_t i = 0; fdt_root_kid(x, &it, i, &node); i++) {
        if (!fdt_is_compatible(&x->f, node, "virtio,mmio") || !fdt_is_enabled(&x->f, node)) {
            continue;
        }
        if (out->nvirtio < DT_MAX_VIRTIO && virtio_node(x, node, &r, &intid)) {
            virtio_insert(out, r, intid);
        } else {
            out->virtio_skipped++;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ PCIe and the SMMU
 * Both optional and read silently: a node that is not as expected is left out with its
 * problem recorded (the boot log names it), and nothing here writes the error line. */

#define PCI_ADDR_CELLS 3 /* phys.hi, phys.mid, phys.lo (IEEE 1275 PCI binding) */
#define PCI_SPACE(hi)  (((hi) >> 24) & 3)
#define PCI_PREFETCH   (1u << 30)
#define MIB            (1ull << 20)

/* node's property `name` as n 32-bit cells; false if absent or not whole cells. */
static bool prop_cells(const struct fdt *f, uint32_t node, const char *name, struct fdt_prop *p,
                       uint32_t *n)
{
    if (!fdt_prop_find(f, node, name, p) || p->len % 4 != 0) {
        return false;
    }
    *n = p->len / 4;
    return true;
}

/* A single-cell property, or def when absent or not one cell. */
static uint32_t prop_u32_or(const struct fdt *f, uint32_t node, const char *name, uint32_t def)
{
    struct fdt_prop p;
    uint32_t n;
    return prop_cells(f, node, name, &p, &n) && n == 1 ? fdt_be32(p.val) : def;
}

/* n (1 or 2) big-endian cells at p as one number. */
static uint64_t be_cells(const uint8_t *p, uint32_t n)
{
    return n == 2 ? (uint64_t)fdt_be32(p) << 32 | fdt_be32(p + 4) : fdt_be32(p);
}

/* reg[0] of a root child in the root's cells: present, non-empty, 1-2 address cells. */
static bool first_reg(struct fdt_tree *x, uint32_t node, struct fdt_range *r)
{
    struct fdt_cells c = x->root_cells;
    struct fdt_prop reg;
    uint32_t n;
    if (!prop_cells(&x->f, node, "reg", &reg, &n) || c.addr < 1 || c.addr > 2 || c.size < 1 ||
        c.size > 2 || n < c.addr + c.size) {
        return false;
    }
    r->base = be_cells(reg.val, c.addr);
    r->size = be_cells(reg.val + 4 * c.addr, c.size);
    return r->size != 0 && r->base + r->size > r->base;
}

/* The index of `want` in a string-list property, or -1. */
static int string_index(const struct fdt_prop *p, const char *want)
{
    uint32_t off = 0, wlen = fdt_str_nlen((const uint8_t *)want, 64);
    for (int i = 0; off < p->len; i++) {
        uint32_t len = fdt_str_nlen(p->val + off, p->len - off);
        if (len == wlen && memcmp(p->val + off, want, len) == 0) {
            return i;
        }
        off += len + 1;
    }
    return -1;
}

/* The SPI named `name` by interrupt-names, as an INTID; 0 if absent or not an SPI. */
static uint32_t named_spi(const struct fdt *f, uint32_t node, const char *name)
{
    struct fdt_prop names, irqs;
    uint32_t n, intid;
    int i = fdt_prop_find(f, node, "interrupt-names", &names) ? string_index(&names, name) : -1;
    if (i < 0 || !prop_cells(f, node, "interrupts", &irqs, &n) ||
        (uint32_t)(i + 1) * GIC_IRQ_CELLS > n) {
        return 0;
    }
    const uint8_t *t = irqs.val + (uint32_t)i * GIC_IRQ_CELLS * 4;
    return fdt_be32(t) == 0 && gic_intid(t, false, &intid) ? intid : 0;
}

/* Optional: the SMMUv3 (the arm,smmu-v3 binding: reg, interrupts with interrupt-names). */
static void find_smmu(struct fdt_tree *x, struct dt_info *out)
{
    uint32_t node;
    if (!fdt_root_child_compatible(x, "arm,smmu-v3", &node)) {
        return;
    }
    if (!first_reg(x, node, &out->smmu_regs)) {
        out->smmu_problem = DT_BAD_REG;
        return;
    }
    out->smmu_eventq_intid = named_spi(&x->f, node, "eventq");
    out->smmu_gerror_intid = named_spi(&x->f, node, "gerror");
    if (!out->smmu_eventq_intid || !out->smmu_gerror_intid) {
        out->smmu_problem = DT_BAD_INTERRUPTS;
        out->smmu_regs.base = out->smmu_regs.size = 0;
        out->smmu_eventq_intid = out->smmu_gerror_intid = 0;
        return;
    }
    out->smmu_phandle = prop_u32_or(&x->f, node, "phandle", 0);
    out->smmu = 1;
}

/* ranges: <phys.hi phys.mid phys.lo  cpu-address (root cells)  size (the node's cells)>. */
static int pci_ranges(struct fdt_tree *x, uint32_t node, uint32_t size_cells, struct dt_info *out)
{
    struct fdt_prop p;
    uint32_t n, stride = PCI_ADDR_CELLS + x->root_cells.addr + size_cells;
    if (!prop_cells(&x->f, node, "ranges", &p, &n) || n == 0 || n % stride != 0 ||
        x->root_cells.addr < 1 || x->root_cells.addr > 2) {
        return DT_BAD_RANGES;
    }
    for (uint32_t i = 0; i < n / stride && out->npci_windows < DT_MAX_PCI_WINDOWS; i++) {
        const uint8_t *e = p.val + i * stride * 4;
        uint32_t hi = fdt_be32(e);
        struct dt_pci_window *w = &out->pci_window[out->npci_windows];
        w->space = PCI_SPACE(hi);
        w->prefetch = (hi & PCI_PREFETCH) != 0;
        w->pci = be_cells(e + 4, 2);
        w->cpu = be_cells(e + 12, x->root_cells.addr);
        w->size = be_cells(e + 12 + 4 * x->root_cells.addr, size_cells);
        if (w->space != DT_PCI_CONFIG && w->size != 0 && w->cpu + w->size > w->cpu &&
            w->pci + w->size > w->pci) {
            out->npci_windows++;
        }
    }
    return out->npci_windows ? DT_OK : DT_BAD_RANGES;
}

/* The root child with this phandle, if it is the GICv3 (interrupt-map's parent). */
static bool phandle_is_gic(struct fdt_tree *x, uint32_t phandle, uint32_t *addr_cells)
{
    uint32_t gic;
    if (!fdt_root_child_compatible(x, "arm,gic-v3", &gic) ||
        prop_u32_or(&x->f, gic, "phandle", 0) != phandle || phandle == 0) {
        return false;
    }
    *addr_cells = prop_u32_or(&x->f, gic, "#address-cells", 0);
    return prop_u32_or(&x->f, gic, "#interrupt-cells", 0) == GIC_IRQ_CELLS;
}

/* interrupt-map entries <child unit address (3) child pin (1) parent (1) parent unit address
 * (the GIC's #address-cells) GIC interrupt (3)> that raise a GIC SPI.  Anything else (a
 * parent that is not the GIC, a malformed entry) ends the list: INTx numbers are only shown
 * (lsdev), never needed, since PCI functions are polled. */
static void pci_intx(struct fdt_tree *x, uint32_t node, struct dt_info *out)
{
    struct fdt_prop map, mask;
    uint32_t n, nm, pac = 0;
    if (prop_u32_or(&x->f, node, "#interrupt-cells", 0) != 1 ||
        !prop_cells(&x->f, node, "interrupt-map-mask", &mask, &nm) || nm != 4 ||
        !prop_cells(&x->f, node, "interrupt-map", &map, &n)) {
        return;
    }
    out->intx_mask_dev = fdt_be32(mask.val);
    out->intx_mask_pin = fdt_be32(mask.val + 12);
    for (uint32_t off = 0; off + 5 <= n && out->nintx < DT_MAX_PCI_INTX;) {
        const uint8_t *e = map.val + off * 4;
        uint32_t intid;
        if (!phandle_is_gic(x, fdt_be32(e + 16), &pac) || pac > 4 ||
            off + 5 + pac + GIC_IRQ_CELLS > n) {
            break;
        }
        const uint8_t *irq = e + (5 + pac) * 4;
        if (fdt_be32(irq) != 0 || !gic_intid(irq, false, &intid)) {
            break;
        }
        out->intx[out->nintx++] = (struct dt_pci_intx){
            .dev = fdt_be32(e) & out->intx_mask_dev,
            .pin = fdt_be32(e + 12) & out->intx_mask_pin,
            .intid = intid,
        };
        off += 5 + pac + GIC_IRQ_CELLS;
    }
}

/* iommu-map <rid-base iommu iommu-base length> (#iommu-cells 1): the first entry naming the
 * SMMU found above. */
static void pci_iommu_map(struct fdt_tree *x, uint32_t node, struct dt_info *out)
{
    struct fdt_prop p;
    uint32_t n;
    if (!out->smmu || out->smmu_phandle == 0 || !prop_cells(&x->f, node, "iommu-map", &p, &n)) {
        return;
    }
    for (uint32_t i = 0; i + 4 <= n; i += 4) {
        const uint8_t *e = p.val + i * 4;
        if (fdt_be32(e + 4) == out->smmu_phandle && fdt_be32(e + 12) != 0) {
            out->rid_base = fdt_be32(e);
            out->sid_base = fdt_be32(e + 8);
            out->sid_count = fdt_be32(e + 12);
            out->iommu_map = 1;
            return;
        }
    }
}

/* The host bridge's window, bus range and ranges; DT_OK or the problem. */
static int pcie_node(struct fdt_tree *x, uint32_t node, struct dt_info *out)
{
    struct fdt_prop p;
    uint32_t n, size_cells = prop_u32_or(&x->f, node, "#size-cells", 0);
    if (prop_u32_or(&x->f, node, "#address-cells", 0) != PCI_ADDR_CELLS || size_cells < 1 ||
        size_cells > 2) {
        return DT_BAD_CELLS;
    }
    if (!first_reg(x, node, &out->ecam)) {
        return DT_BAD_REG;
    }
    out->bus_start = 0;
    out->bus_end = out->ecam.size / MIB > 256 ? 255 : (uint32_t)(out->ecam.size / MIB) - 1;
    if (out->ecam.size < MIB) {
        return DT_BAD_ECAM_SIZE;
    }
    if (fdt_prop_find(&x->f, node, "bus-range", &p)) {
        if (!prop_cells(&x->f, node, "bus-range", &p, &n) || n != 2 || fdt_be32(p.val + 4) > 255 ||
            fdt_be32(p.val) > fdt_be32(p.val + 4)) {
            return DT_BAD_BUS_RANGE;
        }
        out->bus_start = fdt_be32(p.val);
        out->bus_end = fdt_be32(p.val + 4);
    }
    if (out->ecam.size < (uint64_t)(out->bus_end - out->bus_start + 1) * MIB) {
        return DT_BAD_ECAM_SIZE;
    }
    return pci_ranges(x, node, size_cells, out);
}

static void pcie_clear(struct dt_info *out)
{
    out->ecam.base = out->ecam.size = 0;
    out->bus_start = out->bus_end = out->npci_windows = 0;
    for (uint32_t i = 0; i < DT_MAX_PCI_WINDOWS; i++) {
        out->pci_window[i] = (struct dt_pci_window){0, 0, 0, 0, 0};
    }
    out->intx_mask_dev = out->intx_mask_pin = out->nintx = 0;
    for (uint32_t i = 0; i < DT_MAX_PCI_INTX; i++) {
        out->intx[i] = (struct dt_pci_intx){0, 0, 0};
    }
    out->iommu_map = out->rid_base = out->sid_base = out->sid_count = 0;
}

/* Optional: the ECAM host bridge (Linux's pci-host-generic binding). */
static void find_pcie(struct fdt_tree *x, struct dt_info *out)
{
    uint32_t node;
    if (!fdt_root_child_compatible(x, "pci-host-ecam-generic", &node)) {
        return;
    }
    int problem = pcie_node(x, node, out);
    if (problem != DT_OK) {
        pcie_clear(out);
        out->pcie_problem = (uint32_t)problem;
        return;
    }
    pci_intx(x, node, out);
    pci_iommu_map(x, node, out);
    out->pcie = 1;
}

/* ------------------------------------------------------------------ entry point */

/* The lookups, in the order their absence is reported. */
static int find_all(struct fdt_tree *x, struct dt_info *out)
{
    int err = find_psci(x, out);

    err = err != 0 ? err : find_memory(x, out);
    err = err != 0 ? err : find_cpus(x, out);
    err = err != 0 ? err : find_gic(x, out);
    err = err != 0 ? err : find_uart(x, out);
    err = err != 0 ? err : find_timer(x, out);
    err = err != 0 ? err : find_bootargs(x, out);
    err = err != 0 ? err : find_virtio(x, out);
    if (err == 0) {
        find_smmu(x, out); /* before the bridge: its iommu-map names the SMMU by phandle */
        find_pcie(x, out);
    }
    err = err != 0 ? err : find_initrd(x, out);
    return err;
}

/* Field by field: a struct assignment could become a call to memset, which the kernel may lack. */
static void info_clear(struct dt_info *out)
{
    for (uint32_t i = 0; i < DT_MAX_MEM; i++) {
        out->mem[i].base = 0;
        out->mem[i].size = 0;
    }
    for (uint32_t i = 0; i < DT_MAX_CPUS; i++) {
        out->cpu_mpidr[i] = 0;
    }
    for (uint32_t i = 0; i < DT_MAX_GICR; i++) {
        out->gicr[i].base = 0;
        out->gicr[i].size = 0;
    }
    for (uint32_t i = 0; i < TIMER_IRQS; i++) {
        out->timer_intid[i] = 0;
    }
    for (uint32_t i = 0; i < DT_MAX_VIRTIO; i++) {
        out->virtio[i].base = out->virtio[i].size = 0;
        out->virtio_intid[i] = 0;
    }
    out->nvirtio = out->virtio_skipped = 0;
    pcie_clear(out);
    out->pcie = out->pcie_problem = 0;
    out->smmu = out->smmu_problem = out->smmu_phandle = 0;
    out->smmu_regs.base = out->smmu_regs.size = 0;
    out->smmu_eventq_intid = out->smmu_gerror_intid = 0;
    out->totalsize = out->nmem = out->ncpus = out->ncpus_total = out->ngicr = 0;
    out->gicd.base = out->gicd.size = out->uart.base = out->uart.size = 0;
    out->uart_intid = out->bootargs_len = 0;
    out->psci = DT_PSCI_NONE;
    out->bootargs = NULL;
    out->initrd_start = out->initrd_end = 0;
    out->initrd_note = NULL;
}

int dt_parse(const void *blob, size_t max_len, struct dt_info *out, char *err, size_t errlen)
{
    struct fdt_tree x;
    int rc;

    info_clear(out);
    rc = fdt_open(&x, blob, max_len, err, errlen);
    if (rc == 0) {
        rc = find_all(&x, out);
    }
    if (rc != 0) {
        info_clear(out);
        return rc;
    }
    out->totalsize = x.f.totalsize;
    return 0;
}
