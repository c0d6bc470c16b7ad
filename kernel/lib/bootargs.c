/* SPDX-License-Identifier: MIT */
/*
 * bootargs.c — the kernel command line.
 *
 * What it does: bootargs_parse() reads `key=value` parameters (see bootargs.h for the list)
 * and the init arguments after a lone "--" (partition.c then fits the requested dataplane
 * set to the machine).  What it does not do: print anything, touch hardware, or reject a
 * command line: every problem becomes one warning line naming what was wrong and what is used
 * instead, and parsing goes on.  Nothing a user types can crash or hang the boot.
 *
 * Invariants: only the `len` bytes given are read (an embedded NUL ends the line early);
 * every write is bounded (warn[], init_path, argbuf, init_argv); every warning is
 * NUL-terminated; a later parameter overrides an earlier one, and a bad one leaves the value
 * then in effect (which the warning names).
 *
 * Pure code, no locks, no globals: callable from any context, before the console or the MMU
 * is up (kernel_main is meant to call both once, on the boot CPU).  Tokenising follows Linux's
 * next_arg() (a value may be double-quoted; quotes keep blanks inside one parameter); the init
 * arguments are split like a POSIX shell splits words (no expansions).
 */
#include "kernel/bootargs.h"
#include "kernel/lib.h"
#include "kernel/panic.h"
#include "uapi/zt_errno.h"

#include <stddef.h>

#define DEFAULT_HZ        100
#define MAX_HZ            1000
#define DEFAULT_MAX_PROCS 4096
#define MIN_MAX_PROCS     16
#define MAX_MAX_PROCS     32767
#define DEFAULT_INIT      "/bin/sh"
#define CLIP_LEN          32 /* user text quoted in a warning is cut to this many characters */

/* A slice of the command line: not NUL-terminated. */
struct text {
    const char *s;
    size_t len;
};

/* ------------------------------------------------------------------ small text helpers */

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static bool text_is(struct text t, const char *word)
{
    size_t i = 0;

    while (i < t.len && word[i] != '\0' && t.s[i] == word[i]) {
        i++;
    }
    return i == t.len && word[i] == '\0';
}

/* True if t starts with prefix; then t is advanced past it. */
static bool text_skip_prefix(struct text *t, const char *prefix)
{
    size_t i = 0;

    while (prefix[i] != '\0') {
        if (i >= t->len || t->s[i] != prefix[i]) {
            return false;
        }
        i++;
    }
    t->s += i;
    t->len -= i;
    return true;
}

/* Decimal, no sign.  0, -EINVAL (not a number), or -ERANGE (does not fit an unsigned). */
static int text_to_uint(struct text t, unsigned *out)
{
    unsigned v = 0;

    if (t.len == 0) {
        return -EINVAL;
    }
    for (size_t i = 0; i < t.len; i++) {
        if (t.s[i] < '0' || t.s[i] > '9') {
            return -EINVAL;
        }
    }
    for (size_t i = 0; i < t.len; i++) {
        unsigned d = (unsigned)(t.s[i] - '0');
        if (v > (~0u - d) / 10) {
            return -ERANGE;
        }
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

/*
 * Text builder for one message line: appends what fits, silently drops the rest, and keeps
 * the line NUL-terminated at every step (size is always > 0 here).
 */
/* User text: cut to CLIP_LEN with "...", control characters shown as '?'. */
static void tb_user(struct tbuf *tb, struct text t)
{
    size_t n = t.len > CLIP_LEN ? CLIP_LEN - 3 : t.len;

    for (size_t i = 0; i < n; i++) {
        char c = t.s[i];
        tbuf_char(tb, (c < ' ' || c > '~') ? '?' : c);
    }
    if (n < t.len) {
        tbuf_str(tb, "...");
    }
}

static void tb_cpulist(struct tbuf *tb, cpumask_t m)
{
    char list[BOOTARGS_WARN_LEN];

    cpulist_format(m, list, sizeof(list));
    tbuf_str(tb, list);
}

/* ------------------------------------------------------------------ warnings */

struct parser {
    struct bootargs *ba;
    int nproblems;                    /* all problems seen, even those without a slot */
    char overflow[BOOTARGS_WARN_LEN]; /* where the text of slot-less problems goes */
};

/* Start the next warning line, "bootargs: " already in it. */
static void warn_begin(struct parser *p, struct tbuf *tb)
{
    char *line = p->nproblems < BOOTARGS_MAX_WARN ? p->ba->warn[p->nproblems] : p->overflow;

    p->nproblems++;
    tbuf_init(tb, line, BOOTARGS_WARN_LEN);
    tbuf_str(tb, "bootargs: ");
}

/* Settle nwarn; when some problems had no slot, the last slot counts them instead. */
static void warn_finish(struct parser *p)
{
    struct tbuf tb;

    if (p->nproblems <= BOOTARGS_MAX_WARN) {
        p->ba->nwarn = p->nproblems;
        return;
    }
    tbuf_init(&tb, p->ba->warn[BOOTARGS_MAX_WARN - 1], BOOTARGS_WARN_LEN);
    tbuf_str(&tb, "bootargs: ");
    tbuf_dec(&tb, (unsigned)(p->nproblems - (BOOTARGS_MAX_WARN - 1)));
    tbuf_str(&tb, " more warnings not shown");
    p->ba->nwarn = BOOTARGS_MAX_WARN;
}

/* "NAME=VALUE" as the user wrote it (VALUE clipped), the usual start of a warning. */
static void tb_param(struct tbuf *tb, struct text name, struct text value)
{
    tb_user(tb, name);
    tbuf_char(tb, '=');
    tb_user(tb, value);
}

/* ------------------------------------------------------------------ parameters */

struct param;

struct param_token {
    struct text name;
    struct text value;
    bool has_value;          /* an '=' was present; without one the value is empty */
    const struct param *prm; /* the table entry whose name matched */
};

struct param {
    const char *name;
    void (*set)(struct parser *p, const struct param_token *t);
    const char *canon;  /* for flags: the name used when reporting the value in effect */
    size_t flag_offset; /* for flags: offsetof the bool in struct bootargs */
};

static void tail_dataplane(struct tbuf *tb, const struct bootargs *ba)
{
    if (!ba->has_dataplane || cpumask_empty(ba->dataplane)) {
        tbuf_str(tb, "; no dataplane CPUs");
        return;
    }
    tbuf_str(tb, "; using dataplane=");
    tb_cpulist(tb, ba->dataplane);
}

/* The three names of the dataplane set, in the order of bootargs.dataplane_by_name[]. */
static const char *const dataplane_names[3] = {"dataplane", "nohz_full", "isolcpus"};

/* dataplane=, nohz_full=, isolcpus= (whose leading Linux flag words are skipped).  Each name
 * keeps its own list; the set used is their union (bootargs.h). */
static void set_dataplane(struct parser *p, const struct param_token *t)
{
    struct text list = t->value;
    cpumask_t m = CPUMASK_NONE;
    unsigned bad = 0;
    struct tbuf tb;
    int rc;

    if (text_is(t->name, "isolcpus")) {
        while (text_skip_prefix(&list, "nohz,") || text_skip_prefix(&list, "domain,") ||
               text_skip_prefix(&list, "managed_irq,")) {
        }
    }
    rc = cpulist_parse(list.s, list.len, &m, &bad);
    if (rc == 0) {
        unsigned i = text_is(t->name, "nohz_full") ? 1 : text_is(t->name, "isolcpus") ? 2 : 0;
        p->ba->dataplane_by_name[i] = m;
        p->ba->dataplane_named |= 1u << i;
        p->ba->has_dataplane = true;
        p->ba->dataplane = CPUMASK_NONE;
        for (unsigned k = 0; k < 3; k++) {
            if (p->ba->dataplane_named & (1u << k)) {
                p->ba->dataplane = cpumask_or(p->ba->dataplane, p->ba->dataplane_by_name[k]);
            }
        }
        return;
    }
    warn_begin(p, &tb);
    if (rc == -ERANGE) {
        tb_param(&tb, t->name, t->value);
        if (bad == ~0u) {
            tbuf_str(&tb, ": CPU number too large (max ");
        } else {
            tbuf_str(&tb, ": CPU ");
            tbuf_dec(&tb, bad);
            tbuf_str(&tb, " does not exist (max ");
        }
        tbuf_dec(&tb, MAX_CPUS - 1);
        tbuf_char(&tb, ')');
    } else {
        tb_param(&tb, t->name, t->value);
        tbuf_str(&tb, " is not a CPU list");
    }
    tail_dataplane(&tb, p->ba);
}

/* After the whole line: several names with different lists get one line saying what is
 * used, e.g. "bootargs: nohz_full=2-3 and isolcpus=1 differ; using their union,
 * dataplane=1-3 (a CPU any of them names leaves housekeeping)". */
static void dataplane_names_report(struct parser *p)
{
    const struct bootargs *ba = p->ba;
    bool differ = false;
    unsigned given = 0;
    struct tbuf tb;

    for (unsigned k = 0; k < 3; k++) {
        if (ba->dataplane_named & (1u << k)) {
            differ |= !cpumask_equal(ba->dataplane_by_name[k], ba->dataplane); /* != union */
            given++;
        }
    }
    if (given < 2 || !differ) {
        return;
    }
    warn_begin(p, &tb);
    for (unsigned k = 0, n = 0; k < 3; k++) {
        if (ba->dataplane_named & (1u << k)) {
            tbuf_str(&tb, n == 0 ? "" : n + 1 == given ? " and " : ", ");
            tbuf_str(&tb, dataplane_names[k]);
            tbuf_char(&tb, '=');
            tb_cpulist(&tb, ba->dataplane_by_name[k]);
            n++;
        }
    }
    tbuf_str(&tb, " differ; using their union, dataplane=");
    tb_cpulist(&tb, ba->dataplane);
    tbuf_str(&tb, " (a CPU any of them names leaves housekeeping)");
}

static void set_tick(struct parser *p, const struct param_token *t)
{
    struct tbuf tb;

    if (text_is(t->value, "nohz")) {
        p->ba->tick = TICK_NOHZ;
    } else if (text_is(t->value, "periodic")) {
        p->ba->tick = TICK_PERIODIC;
    } else {
        warn_begin(p, &tb);
        tb_param(&tb, t->name, t->value);
        tbuf_str(&tb, " unknown (nohz|periodic); using tick=");
        tbuf_str(&tb, p->ba->tick == TICK_PERIODIC ? "periodic" : "nohz");
    }
}

/* Shared by hz=, debug_exit= and max_procs=: a number in lo..hi, or a warning ending in
 * "; ". */
static bool number_in_range(struct parser *p, const struct param_token *t, unsigned lo, unsigned hi,
                            unsigned *out, struct tbuf *tb)
{
    int rc = text_to_uint(t->value, out);

    if (rc == 0 && *out >= lo && *out <= hi) {
        return true;
    }
    warn_begin(p, tb);
    tb_param(tb, t->name, t->value);
    if (rc == -EINVAL) {
        tbuf_str(tb, " is not a number; ");
    } else {
        tbuf_str(tb, " out of range ");
        tbuf_dec(tb, lo);
        tbuf_str(tb, "..");
        tbuf_dec(tb, hi);
        tbuf_str(tb, "; ");
    }
    return false;
}

static void set_hz(struct parser *p, const struct param_token *t)
{
    unsigned v;
    struct tbuf tb;

    if (number_in_range(p, t, 1, MAX_HZ, &v, &tb)) {
        p->ba->hz = v;
        return;
    }
    tbuf_str(&tb, "using hz=");
    tbuf_dec(&tb, p->ba->hz);
}

static void set_max_procs(struct parser *p, const struct param_token *t)
{
    unsigned v;
    struct tbuf tb;

    if (number_in_range(p, t, MIN_MAX_PROCS, MAX_MAX_PROCS, &v, &tb)) {
        p->ba->max_procs = v;
        return;
    }
    tbuf_str(&tb, "using max_procs=");
    tbuf_dec(&tb, p->ba->max_procs);
}

static void set_watchdog(struct parser *p, const struct param_token *t)
{
    unsigned v;
    struct tbuf tb;

    bool number = number_in_range(p, t, 0, 60000, &v, &tb);
    if (number && (v == 0 || v >= 4)) {
        p->ba->watchdog_ms = v;
        return;
    }
    if (number) {
        warn_begin(p, &tb);
        tb_param(&tb, t->name, t->value);
        tbuf_str(&tb, " below 4 ms; ");
    }
    tbuf_str(&tb, "using watchdog=");
    tbuf_dec(&tb, p->ba->watchdog_ms);
}

static void set_debug_exit(struct parser *p, const struct param_token *t)
{
    unsigned v;
    struct tbuf tb;

    if (number_in_range(p, t, 0, 255, &v, &tb)) {
        p->ba->debug_exit = (int)v;
        return;
    }
    if (p->ba->debug_exit < 0) {
        tbuf_str(&tb, "no debug_exit");
    } else {
        tbuf_str(&tb, "using debug_exit=");
        tbuf_dec(&tb, (unsigned)p->ba->debug_exit);
    }
}

static void set_debug_fault(struct parser *p, const struct param_token *t)
{
    static const char *const kinds[] = {
        [DEBUG_FAULT_DATA] = "data",
        [DEBUG_FAULT_UNDEF] = "undef",
        [DEBUG_FAULT_OVERFLOW] = "overflow",
        [DEBUG_FAULT_WRITE_TEXT] = "write-text",
        [DEBUG_FAULT_EXEC_DATA] = "exec-data",
        [DEBUG_FAULT_GUARD] = "guard",
        [DEBUG_FAULT_USER_READ] = "user-read",
        [DEBUG_FAULT_IRQS_OFF] = "irqs-off",
        [DEBUG_FAULT_LOCK_ORDER] = "lock-order",
        [DEBUG_FAULT_BAD_FRAME] = "bad-frame",
    };
    struct tbuf tb;

    for (unsigned k = DEBUG_FAULT_DATA; k <= DEBUG_FAULT_BAD_FRAME; k++) {
        if (text_is(t->value, kinds[k])) {
            p->ba->debug_fault = (enum debug_fault)k;
            return;
        }
    }
    warn_begin(p, &tb);
    tb_param(&tb, t->name, t->value);
    tbuf_str(&tb, " unknown (data|undef|overflow|write-text|exec-data|guard|user-read|"
                  "irqs-off|lock-order|bad-frame); ");
    if (p->ba->debug_fault == DEBUG_FAULT_NONE) {
        tbuf_str(&tb, "no debug_fault");
    } else {
        tbuf_str(&tb, "using debug_fault=");
        tbuf_str(&tb, kinds[p->ba->debug_fault]);
    }
}

static void set_init(struct parser *p, const struct param_token *t)
{
    struct bootargs *ba = p->ba;
    struct tbuf tb;

    if (t->value.len > 0 && t->value.len < BOOTARGS_PATH_MAX) {
        for (size_t i = 0; i < t->value.len; i++) {
            ba->init_path[i] = t->value.s[i];
        }
        ba->init_path[t->value.len] = '\0';
        return;
    }
    warn_begin(p, &tb);
    tbuf_str(&tb, t->value.len == 0 ? "init= is empty; using " : "init= path too long; using ");
    tbuf_str(&tb, ba->init_path[0] != '\0' ? ba->init_path : DEFAULT_INIT);
}

/* Flags: bare (meaning 1), =1 or =0. */
static void set_flag(struct parser *p, const struct param_token *t)
{
    bool *flag = (bool *)((char *)p->ba + t->prm->flag_offset);
    struct tbuf tb;

    if (!t->has_value || text_is(t->value, "1")) {
        *flag = true;
    } else if (text_is(t->value, "0")) {
        *flag = false;
    } else {
        warn_begin(p, &tb);
        tb_param(&tb, t->name, t->value);
        tbuf_str(&tb, " is not 0 or 1; using ");
        tbuf_str(&tb, t->prm->canon);
        tbuf_str(&tb, *flag ? "=1" : "=0");
    }
}

/* A flag entry names its bool twice: by offset to set it, by name to report its value. */
static const struct param params[] = {
    {"dataplane", set_dataplane, NULL, 0},
    {"nohz_full", set_dataplane, NULL, 0},
    {"isolcpus", set_dataplane, NULL, 0},
    {"tick", set_tick, NULL, 0},
    {"hz", set_hz, NULL, 0},
    {"init", set_init, NULL, 0},
    {"debug_fault", set_debug_fault, NULL, 0},
    {"debug_exit", set_debug_exit, NULL, 0},
    {"max_procs", set_max_procs, NULL, 0},
    {"watchdog", set_watchdog, NULL, 0},
    {"tick_residual", set_flag, "tick_residual", offsetof(struct bootargs, tick_residual)},
    {"debug_1hz_tick", set_flag, "tick_residual", offsetof(struct bootargs, tick_residual)},
    {"isol_debug", set_flag, "isol_debug", offsetof(struct bootargs, isol_debug)},
    {"task_isolation_debug", set_flag, "isol_debug", offsetof(struct bootargs, isol_debug)},
    {"quiet", set_flag, "quiet", offsetof(struct bootargs, quiet)},
    {"exit_stats", set_flag, "exit_stats", offsetof(struct bootargs, exit_stats)},
    {"trace", set_flag, "trace", offsetof(struct bootargs, trace)},
    {"syscall_debug", set_flag, "syscall_debug", offsetof(struct bootargs, syscall_debug)},
};

/* Apply one parameter token; `whole` is the token as written, for the unknown warning. */
static void apply_param(struct parser *p, struct param_token *t, struct text whole)
{
    struct tbuf tb;

    for (size_t i = 0; i < sizeof(params) / sizeof(params[0]); i++) {
        if (text_is(t->name, params[i].name)) {
            t->prm = &params[i];
            t->prm->set(p, t);
            return;
        }
    }
    warn_begin(p, &tb);
    tbuf_str(&tb, "unknown parameter '");
    tb_user(&tb, whole);
    tbuf_str(&tb, "' ignored");
}

/* ------------------------------------------------------------------ tokenising */

static size_t skip_blanks(struct text line, size_t pos)
{
    while (pos < line.len && is_blank(line.s[pos])) {
        pos++;
    }
    return pos;
}

/*
 * The parameter token starting at pos (not blank): runs to the next blank outside double
 * quotes.  Returns its end; *open_quote tells whether a quote was left open.
 */
static size_t param_token_end(struct text line, size_t pos, bool *open_quote)
{
    bool in_quote = false;

    while (pos < line.len && (in_quote || !is_blank(line.s[pos]))) {
        if (line.s[pos] == '"') {
            in_quote = !in_quote;
        }
        pos++;
    }
    *open_quote = in_quote;
    return pos;
}

/* Drop one leading '"' and, if there was one, a trailing '"' too (as Linux's next_arg). */
static struct text strip_quotes(struct text t)
{
    if (t.len > 0 && t.s[0] == '"') {
        t.s++;
        t.len--;
        if (t.len > 0 && t.s[t.len - 1] == '"') {
            t.len--;
        }
    }
    return t;
}

static struct param_token param_split(struct text whole)
{
    struct text t = strip_quotes(whole);
    struct param_token pt = {.name = t, .value = {t.s + t.len, 0}, .has_value = false, .prm = NULL};

    for (size_t i = 0; i < t.len; i++) {
        if (t.s[i] == '=') {
            pt.name.len = i;
            pt.value.s = t.s + i + 1;
            pt.value.len = t.len - i - 1;
            pt.has_value = true;
            pt.value = strip_quotes(pt.value);
            break;
        }
    }
    return pt;
}

/* ------------------------------------------------------------------ init arguments */

/* Bounded writer into argbuf; `fits` goes false once a character had no room. */
struct wordbuf {
    char *buf;
    size_t size;
    size_t used;
    bool fits;
};

static void word_put(struct wordbuf *w, char c)
{
    if (w->used + 1 < w->size) { /* always leave room for the word's NUL */
        w->buf[w->used++] = c;
    } else {
        w->fits = false;
    }
}

/*
 * One shell word starting at pos (not blank), written to w without its NUL.  Returns the
 * position after it; *open_quote is set when the line ended inside quotes.
 */
static size_t shell_word(struct text line, size_t pos, struct wordbuf *w, bool *open_quote)
{
    char quote = 0; /* 0, '\'' or '"' */

    for (; pos < line.len; pos++) {
        char c = line.s[pos];
        bool has_next = pos + 1 < line.len;

        if (quote == 0 && is_blank(c)) {
            break;
        } else if (quote == 0 && (c == '\'' || c == '"')) {
            quote = c;
        } else if (quote == c) {
            quote = 0;
        } else if (c == '\\' && has_next &&
                   (quote == 0 ||
                    (quote == '"' && (line.s[pos + 1] == '"' || line.s[pos + 1] == '\\')))) {
            word_put(w, line.s[++pos]);
        } else {
            word_put(w, c);
        }
    }
    *open_quote = quote != 0;
    return pos;
}

/* Split line[pos..] into init_argv/argbuf.  Once one word is dropped, all later ones are. */
static void split_init_args(struct parser *p, struct text line, size_t pos)
{
    struct bootargs *ba = p->ba;
    struct wordbuf w = {.buf = ba->argbuf, .size = sizeof(ba->argbuf), .used = 0, .fits = true};
    bool open_quote = false;
    unsigned dropped = 0;
    struct tbuf tb;

    for (pos = skip_blanks(line, pos); pos < line.len; pos = skip_blanks(line, pos)) {
        size_t start = w.used;
        pos = shell_word(line, pos, &w, &open_quote);
        if (!w.fits || dropped > 0 || ba->init_argc == BOOTARGS_MAX_INIT_ARGS) {
            dropped++;
            w.used = start;
            w.fits = true;
            continue;
        }
        ASSERT(w.used < w.size); /* word_put leaves room for the NUL */
        w.buf[w.used++] = '\0';
        ba->init_argv[ba->init_argc++] = &ba->argbuf[start];
    }
    if (open_quote) {
        warn_begin(p, &tb);
        tbuf_str(&tb, "unterminated quote in init arguments; rest taken as one word");
    }
    if (dropped > 0) {
        warn_begin(p, &tb);
        tbuf_str(&tb, "init arguments over the limit (");
        tbuf_dec(&tb, BOOTARGS_MAX_INIT_ARGS);
        tbuf_str(&tb, " words, ");
        tbuf_dec(&tb, BOOTARGS_ARGBUF);
        tbuf_str(&tb, " bytes); last ");
        tbuf_dec(&tb, dropped);
        tbuf_str(&tb, " dropped");
    }
}

/* ------------------------------------------------------------------ entry points */

static void bootargs_defaults(struct bootargs *ba)
{
    ba->has_dataplane = false;
    ba->dataplane = CPUMASK_NONE;
    ba->dataplane_named = 0;
    for (int i = 0; i < 3; i++) {
        ba->dataplane_by_name[i] = CPUMASK_NONE;
    }
    ba->tick = TICK_NOHZ;
    ba->hz = DEFAULT_HZ;
    ba->tick_residual = false;
    ba->isol_debug = false;
    ba->exit_stats = false;
    ba->trace = false;
    ba->syscall_debug = false;
    ba->quiet = false;
    ba->debug_fault = DEBUG_FAULT_NONE;
    ba->debug_exit = -1;
    ba->max_procs = DEFAULT_MAX_PROCS;
    ba->watchdog_ms = ZT_CHECKS_ON ? 1000 : 0; /* the checked kernel watches by default */
    ba->init_path[0] = '\0';
    ba->init_argc = 0;
    for (int i = 0; i < BOOTARGS_MAX_INIT_ARGS; i++) {
        ba->init_argv[i] = NULL;
    }
    ba->argbuf[0] = '\0';
    ba->nwarn = 0;
    for (int i = 0; i < BOOTARGS_MAX_WARN; i++) {
        ba->warn[i][0] = '\0';
    }
}

void bootargs_parse(const char *cmdline, size_t len, struct bootargs *out)
{
    struct parser p; /* fields set one by one: an initializer would zero overflow[] */
    struct text line = {cmdline, 0};
    size_t pos = 0;

    p.ba = out;
    p.nproblems = 0;
    bootargs_defaults(out);
    while (cmdline != NULL && line.len < len && cmdline[line.len] != '\0') {
        line.len++;
    }
    for (pos = skip_blanks(line, pos); pos < line.len; pos = skip_blanks(line, pos)) {
        bool open_quote;
        size_t end = param_token_end(line, pos, &open_quote);
        struct text whole = {line.s + pos, end - pos};

        pos = end;
        if (text_is(whole, "--")) {
            split_init_args(&p, line, pos);
            break;
        }
        if (open_quote) {
            struct tbuf tb;
            warn_begin(&p, &tb);
            tbuf_str(&tb, "unterminated quote in '");
            tb_user(&tb, whole);
            tbuf_str(&tb, "'; rest of line taken as its value");
        }
        struct param_token t = param_split(whole);
        apply_param(&p, &t, whole);
    }
    dataplane_names_report(&p);
    warn_finish(&p);
}
