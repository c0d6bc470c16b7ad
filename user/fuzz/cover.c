/* SPDX-License-Identifier: MIT */
/*
 * cover.c — /bin/fuzz's side of coverage: the corpus files every worker's lives share, the
 * runner's report of what the run reached, and `fuzz -k`, one recorded call.
 *
 * The corpus files: FZ_CORPUS_DIR/W holds the programs worker W's lives kept, one record
 * each (prog.h), appended with one write (a reader sees whole records, or the start of the
 * last one, which it reads again next time).  A life reads every file from where it last
 * stopped (fz_corpus_load), at its start and every 32 programs.  The runner makes the
 * directory after the memory baseline and removes it before the balance, as it does FZ_TMP.
 * No path a fuzzed call can draw names it (files.c's pool is under FZ_TMP and the read-only
 * tree).
 *
 * The report (the runner, -c, at the end; tools/covreport reads it with the kernel's ELF):
 *   fuzz: coverage N blocks reached by recorded calls, M in any context, P programs in the corpus
 *   kcov: text 0xSTART-0xEND bitmap BYTES
 *   kcov: machine WORD HEX HEX ...     (8 words a line from WORD; lines of zeros left out)
 *   kcov: everywhere WORD HEX ...
 * Bit b of word w is the block whose call to __sanitizer_cov_trace_pc returns to
 * START + 4 * (64 * w + b) (include/uapi/zt_debug.h).
 */
#include "fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define O_RDONLY     0
#define O_WRONLY     1
#define O_CREAT      0100
#define O_APPEND     02000
#define AT_REMOVEDIR 0x200
#define MAX_FILES    16 /* the runner's workers, at most */

static long offsets[MAX_FILES];

static void file_of(int w, char *path, size_t len)
{
    snprintf(path, len, "%s/%d", FZ_CORPUS_DIR, w);
}

#define CORPUS_BYTES                                                                               \
    (FZ_CORPUS_CAP * (sizeof(struct fz_prog) + sizeof(uint32_t) + sizeof(uint64_t)))

bool fz_corpus_alloc(struct fz_corpus *c)
{
    long m =
        zt_mmap(NULL, CORPUS_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m < 0) {
        return false;
    }
    struct fz_prog *progs = (struct fz_prog *)m;
    uint64_t *hash = (uint64_t *)(progs + FZ_CORPUS_CAP);
    uint32_t *gain = (uint32_t *)(hash + FZ_CORPUS_CAP);
    fz_corpus_init(c, progs, gain, hash, FZ_CORPUS_CAP);
    return true;
}

void fz_corpus_free(struct fz_corpus *c)
{
    zt_munmap(c->progs, CORPUS_BYTES);
}

void fz_corpus_save(int w, const struct fz_prog *p, uint32_t gain)
{
    static uint8_t rec[FZ_REC_MAX];
    char path[32];
    file_of(w, path, sizeof(path));
    size_t len = fz_prog_encode(p, gain, rec);
    long fd = zt_syscall4(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
        zt_syscall3(SYS_write, fd, rec, len);
        zt_syscall1(SYS_close, fd);
    }
}

/* Records of one file from its offset on, into c; programs added. */
static int load_file(struct fz_corpus *c, int w)
{
    static uint8_t buf[16 * FZ_REC_MAX];
    char path[32];
    int added = 0;
    file_of(w, path, sizeof(path));
    long fd = zt_syscall4(SYS_openat, AT_FDCWD, path, O_RDONLY, 0);
    if (fd < 0) {
        return 0;
    }
    for (;;) {
        long got = zt_syscall4(SYS_pread64, fd, buf, sizeof(buf), offsets[w]);
        if (got <= 0) {
            break;
        }
        size_t at = 0;
        for (;;) {
            struct fz_prog p;
            uint32_t gain;
            long d = fz_prog_decode(buf + at, (size_t)got - at, &p, &gain);
            if (d < 0) {
                offsets[w] = -1; /* not a corpus file any more: left alone */
                zt_syscall1(SYS_close, fd);
                return added;
            }
            if (d == 0) {
                break;
            }
            added += fz_corpus_add(c, &p, gain);
            at += (size_t)d;
        }
        offsets[w] += (long)at;
        if (at == 0) {
            break; /* only the start of a record: the rest comes later */
        }
    }
    zt_syscall1(SYS_close, fd);
    return added;
}

int fz_corpus_load(struct fz_corpus *c)
{
    int added = 0;
    for (int w = 0; w < MAX_FILES; w++) {
        if (offsets[w] >= 0) {
            added += load_file(c, w);
        }
    }
    return added;
}

void fz_corpus_dir_make(void)
{
    zt_syscall3(SYS_mkdirat, AT_FDCWD, FZ_CORPUS_DIR, 0700);
}

bool fz_corpus_dir_remove(void)
{
    char path[32];
    for (int w = 0; w < MAX_FILES; w++) {
        file_of(w, path, sizeof(path));
        zt_syscall3(SYS_unlinkat, AT_FDCWD, path, 0);
    }
    long r = zt_syscall3(SYS_unlinkat, AT_FDCWD, FZ_CORPUS_DIR, AT_REMOVEDIR);
    return r == 0 || r == -ENOENT;
}

long fz_corpus_files_count(void)
{
    struct fz_corpus c;
    long n = 0;
    if (!fz_corpus_alloc(&c)) {
        return -1;
    }
    memset(offsets, 0, sizeof(offsets));
    for (int w = 0; w < MAX_FILES; w++) { /* counted, not kept: a full corpus takes more */
        n += load_file(&c, w);
    }
    fz_corpus_free(&c);
    return n;
}

/* ---------------------------------------------------------------- the report */

static void dump(const char *name, const uint64_t *map, uint64_t words)
{
    for (uint64_t w = 0; w < words; w += 8) {
        uint64_t any = 0;
        for (uint64_t i = w; i < w + 8 && i < words; i++) {
            any |= map[i];
        }
        if (!any) {
            continue;
        }
        printf("kcov: %s %llu", name, (unsigned long long)w);
        for (uint64_t i = w; i < w + 8 && i < words; i++) {
            printf(" %llx", (unsigned long long)map[i]);
        }
        printf("\n");
    }
    fflush(stdout);
}

void fz_cover_dump(void)
{
    struct zt_kcov_info info;
    if (zt_kcov(ZT_KCOV_INFO, &info, sizeof(info)) < 0) {
        return;
    }
    /* a mapping, not the heap: the runner's heap would not shrink back for the memory
     * balance that follows; two bitmaps, so the counts printed are the dumps' own (code
     * that runs between two looks, this program's own printing included, reaches blocks) */
    long m = zt_mmap(NULL, 2 * info.bitmap_bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m < 0) {
        return;
    }
    uint64_t *map = (uint64_t *)m, *any = map + info.bitmap_bytes / 8;
    long machine = zt_kcov(ZT_KCOV_MACHINE, map, info.bitmap_bytes);
    long everywhere = zt_kcov(ZT_KCOV_EVERYWHERE, any, info.bitmap_bytes);
    printf("fuzz: coverage %ld blocks reached by recorded calls, %ld in any context, %ld "
           "programs in the corpus\n",
           machine, everywhere, fz_corpus_files_count());
    printf("kcov: text 0x%llx-0x%llx bitmap %llu\n", (unsigned long long)info.text_start,
           (unsigned long long)info.text_end, (unsigned long long)info.bitmap_bytes);
    if (machine > 0) {
        dump("machine", map, info.bitmap_bytes / 8);
    }
    if (everywhere > 0) {
        dump("everywhere", any, info.bitmap_bytes / 8);
    }
    zt_munmap(map, 2 * info.bitmap_bytes);
}

/* ---------------------------------------------------------------- fuzz -k */

int fz_cover_probe(void)
{
    struct zt_kcov_info info;
    long r = zt_kcov(ZT_KCOV_INFO, &info, sizeof(info));
    if (r == -ENODEV) {
        printf("kcov: this kernel records no coverage (make cover builds the one that does)\n");
        return 1;
    }
    uint64_t *map = malloc(info.bitmap_bytes);
    if (r < 0 || !map || zt_kcov(ZT_KCOV_ENABLE, NULL, 0) < 0) {
        printf("kcov: cannot record: %s\n", zt_errno_name(r < 0 ? (int)-r : ENOMEM));
        return 1;
    }
    zt_kcov(ZT_KCOV_COLLECT, NULL, 0); /* nothing of the calls before */
    zt_syscall0(SYS_getpid);
    long fresh = zt_kcov(ZT_KCOV_COLLECT, map, info.bitmap_bytes);
    long blocks = 0;
    for (uint64_t w = 0; w < info.bitmap_bytes / 8; w++) {
        for (uint64_t x = map[w]; x; x &= x - 1) {
            blocks++;
        }
    }
    printf("kcov: getpid reached %ld blocks, %ld of them new to the machine\n", blocks, fresh);
    for (uint64_t w = 0; w < info.bitmap_bytes / 8; w++) {
        for (int b = 0; b < 64; b++) {
            if (map[w] >> b & 1) {
                printf("kcov: block 0x%llx\n",
                       (unsigned long long)(info.text_start + 4 * (64 * w + (uint64_t)b)));
            }
        }
    }
    zt_kcov(ZT_KCOV_DISABLE, NULL, 0);
    free(map);
    return 0;
}
