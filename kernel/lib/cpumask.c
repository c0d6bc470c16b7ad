/* SPDX-License-Identifier: MIT */
/*
 * cpumask.c — Linux "cpulist" text (0-3,7 and 0-7:2/4) to and from a CPU set (cpumask_t),
 * and the number of set words that can hold an existing CPU (cpumask_words_used: written
 * once at boot, before any other CPU runs, read everywhere after).
 *
 * The text functions are pure, no state, no locks: callable from any context, including
 * before the console or the MMU is up.  They never touch hardware, never allocate, and read exactly
 * the bytes they are given (the boot command line is not NUL-terminated where it is sliced).
 *
 * Grammar accepted by cpulist_parse (Linux's bitmap_parselist, minus "all" and "N"):
 *   list  := "none" | item ("," item)*
 *   item  := num | num "-" num | num "-" num ":" num "/" num
 *   num   := digit+                       (decimal, leading zeros allowed, no sign)
 * Errors: a malformed list is -EINVAL even when it also names a too-large CPU, so that the
 * caller's message talks about the real problem first; otherwise the first CPU >= MAX_CPUS
 * (in text order) is -ERANGE.
 */
#include "kernel/cpumask.h"
#include "kernel/lib.h"
#include "kernel/panic.h"
#include "uapi/zt_errno.h"

unsigned cpumask_words_used = CPUMASK_WORDS;

void cpumask_set_machine(unsigned ncpus)
{
    unsigned words = (ncpus + 63) / 64;
    cpumask_words_used = words < 1 ? 1 : words > CPUMASK_WORDS ? CPUMASK_WORDS : words;
}

/* Reads the cursor as a bounded slice of text; pos never passes len. */
struct cursor {
    const char *s;
    size_t len;
    size_t pos;
};

static bool cursor_is_at(const struct cursor *c, char ch)
{
    return c->pos < c->len && c->s[c->pos] == ch;
}

static bool cursor_take(struct cursor *c, char ch)
{
    if (!cursor_is_at(c, ch)) {
        return false;
    }
    c->pos++;
    return true;
}

/*
 * Decimal number at the cursor.  Returns 0, -EINVAL if there is no digit, or -ERANGE if it
 * does not fit an unsigned (then *out saturates to ~0u so callers can still report it).
 */
static int cursor_number(struct cursor *c, unsigned *out)
{
    size_t start = c->pos;
    unsigned v = 0;
    bool overflow = false;

    while (c->pos < c->len && c->s[c->pos] >= '0' && c->s[c->pos] <= '9') {
        unsigned d = (unsigned)(c->s[c->pos] - '0');
        if (v > (~0u - d) / 10) {
            overflow = true;
        } else {
            v = v * 10 + d;
        }
        c->pos++;
    }
    if (c->pos == start) {
        return -EINVAL;
    }
    *out = overflow ? ~0u : v;
    return overflow ? -ERANGE : 0;
}

/* Remember the first CPU number that is out of range (an overflowing one reads as ~0u). */
static void note_range(unsigned cpu, bool *have_bad, unsigned *first_bad)
{
    if (cpu >= MAX_CPUS && !*have_bad) {
        *have_bad = true;
        *first_bad = cpu;
    }
}

/*
 * One item at the cursor, OR-ed into *m when its CPUs are all in range.  Returns -EINVAL
 * for bad syntax; range problems are only recorded, so parsing can go on looking for
 * syntax errors (which take precedence).
 */
static int parse_item(struct cursor *c, cpumask_t *m, bool *have_bad, unsigned *first_bad)
{
    unsigned first, last, used = 1, group = 1;
    int rc;

    rc = cursor_number(c, &first);
    if (rc == -EINVAL) {
        return rc;
    }
    note_range(first, have_bad, first_bad);
    last = first;
    if (cursor_take(c, '-')) {
        rc = cursor_number(c, &last);
        if (rc == -EINVAL) {
            return rc;
        }
        note_range(last, have_bad, first_bad);
        if (cursor_take(c, ':')) {
            if (cursor_number(c, &used) != 0 || !cursor_take(c, '/') ||
                cursor_number(c, &group) != 0) {
                return -EINVAL;
            }
            if (used == 0 || used > group) {
                return -EINVAL;
            }
        }
    }
    if (first >= MAX_CPUS || last >= MAX_CPUS) {
        return 0; /* already recorded; nothing sensible to set */
    }
    if (first > last) {
        return -EINVAL;
    }
    ASSERT(used >= 1 && used <= group); /* checked above when given: no division by zero */
    for (unsigned cpu = first; cpu <= last; cpu++) {
        if ((cpu - first) % group < used) {
            cpumask_set(m, cpu);
        }
    }
    return 0;
}

static bool text_equals(const char *s, size_t len, const char *word)
{
    size_t i = 0;

    while (i < len && word[i] != '\0' && s[i] == word[i]) {
        i++;
    }
    return i == len && word[i] == '\0';
}

int cpulist_parse(const char *s, size_t len, cpumask_t *out, unsigned *bad_cpu)
{
    struct cursor c = {.s = s, .len = s ? len : 0, .pos = 0};
    cpumask_t m = CPUMASK_NONE;
    bool have_bad = false;
    unsigned first_bad = 0;

    if (c.len == 0) {
        return -EINVAL;
    }
    if (text_equals(s, len, "none")) {
        *out = CPUMASK_NONE;
        return 0;
    }
    for (;;) {
        if (parse_item(&c, &m, &have_bad, &first_bad) != 0) {
            return -EINVAL;
        }
        if (c.pos == c.len) {
            break;
        }
        if (!cursor_take(&c, ',')) {
            return -EINVAL;
        }
    }
    if (have_bad) {
        if (bad_cpu) {
            *bad_cpu = first_bad;
        }
        return -ERANGE;
    }
    *out = m;
    return 0;
}

int cpulist_format(cpumask_t m, char *buf, size_t size)
{
    struct tbuf f;
    unsigned cpu = 0;

    tbuf_init(&f, buf, size);
    if (cpumask_empty(m)) {
        tbuf_str(&f, "none");
    }
    while ((cpu = cpumask_next(m, cpu)) < MAX_CPUS) {
        unsigned last = cpu;
        while (cpumask_has(m, last + 1)) {
            last++;
        }
        if (f.need != 0) {
            tbuf_char(&f, ',');
        }
        tbuf_dec(&f, cpu);
        if (last != cpu) {
            tbuf_char(&f, '-');
            tbuf_dec(&f, last);
        }
        cpu = last + 1;
    }
    return (int)f.need;
}
