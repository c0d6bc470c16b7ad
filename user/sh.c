/* SPDX-License-Identifier: MIT */
/*
 * sh — the zerotick shell.
 *
 *   sh                 interactive on the console: prompt `zt$ `; the console's line
 *                      discipline edits the line (Backspace/DEL erase, Ctrl-U kills the
 *                      line, Enter runs, Ctrl-C drops it, Ctrl-D on an empty line exits)
 *   sh -c 'CMD'        runs CMD and exits with the status of its last foreground command,
 *                      after waiting for its background jobs (so their output is complete)
 *
 * A command line is pipelines separated by `;` (one after the other) or ended by `&` (in the
 * background); a pipeline is commands joined by `|`, each one's standard output the next
 * one's standard input.  Words split on blanks; '...' and "..." quote (a backslash escapes
 * the next character outside single quotes).  `NAME args` runs the first NAME found in the
 * directories of $PATH (default /usr/bin:/bin, so a program `make run PROG=` put in /usr/bin
 * comes before /bin's), or the path itself if NAME holds a '/'.  Every pipeline runs in its
 * own process group; a foreground one becomes the console's foreground group (ioctl
 * TIOCSPGRP), so Ctrl-C sends it SIGINT; the shell takes the console back when it ends.
 *
 * A pipeline: every pipe is made first, then every program is spawned with its ends as
 * descriptors 0 and 1 (the shell's own 0 and 1 are set to them around each spawn and put
 * back), then the built-ins of the pipeline run in the shell with their output in their
 * pipe, in order, each pipe end closed as soon as its last user is done; the shell then waits
 * for every program.  So a built-in that writes more than a pipe holds (`cpus -a | head`)
 * never waits for a reader that does not exist yet.  The status is the last command's.
 *
 * Statuses are reported as `[pid 7] exited with status 3` / `[pid 7] killed by signal 11
 * (SIGSEGV)`; a status of 0 is not reported, except `[pid 7] done` for background jobs in
 * interactive mode.  Finished background jobs are reaped and reported before each prompt.
 * Built-ins: see `help`.
 */
#include "zt.h"

#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINE_BYTES         256
#define MAX_WORDS          32
#define MAX_JOBS           32
#define MAX_STAGES         8
#define PATH_BYTES         128
#define DEFAULT_PATH       "/usr/bin:/bin"
#define O_CLOEXEC_LX       02000000 /* Linux's O_CLOEXEC (picolibc's differs) */
#define F_DUPFD_CLOEXEC_LX 1030

struct command {
    char *argv[MAX_WORDS + 1];
    int argc;
    bool background;
    bool piped; /* ended by `|`: its output goes to the next command */
};

struct job {
    int pid;
    char name[ZT_NAME_LEN];
};

static bool interactive;
static int last_status;
static struct job jobs[MAX_JOBS];

/* ---------------------------------------------------------------- status reports */

static void report(int pid, int status, bool background)
{
    if (zt_wifsignaled(status)) {
        int sig = zt_wtermsig(status);

        printf("[pid %d] killed by signal %d (%s)\n", pid, sig, zt_signal_name(sig));
    } else if (zt_wexitstatus(status) != 0) {
        printf("[pid %d] exited with status %d\n", pid, zt_wexitstatus(status));
    } else if (background && interactive) {
        printf("[pid %d] done\n", pid);
    }
}

static void job_add(int pid, const char *name)
{
    for (int i = 0; i < MAX_JOBS; i++) {
        if (jobs[i].pid == 0) {
            jobs[i].pid = pid;
            snprintf(jobs[i].name, sizeof(jobs[i].name), "%s", name);
            return;
        }
    }
    /* Table full: the job still runs and is reaped, just reported without a name. */
}

static bool job_remove(int pid)
{
    for (int i = 0; i < MAX_JOBS; i++) {
        if (jobs[i].pid == pid) {
            jobs[i].pid = 0;
            return true;
        }
    }
    return false;
}

static int jobs_running(void)
{
    int n = 0;

    for (int i = 0; i < MAX_JOBS; i++) {
        n += jobs[i].pid != 0;
    }
    return n;
}

/* Reap every finished child (background jobs, and orphans when we are pid 1). */
static void reap_finished(void)
{
    int status;
    long pid;

    while ((pid = zt_wait4(-1, &status, WNOHANG, NULL)) > 0) {
        if (job_remove((int)pid)) {
            report((int)pid, status, true);
        }
    }
}

/* Wait for every background job (sh -c does this before exiting). */
static void wait_all_jobs(void)
{
    int status;
    long pid;

    while (jobs_running() > 0 && (pid = zt_wait(-1, &status)) > 0) {
        if (job_remove((int)pid)) {
            report((int)pid, status, true);
        }
    }
}

/* ---------------------------------------------------------------- running programs */

/* The console's foreground process group: Ctrl-C signals it. */
static void set_foreground(int pgrp)
{
    zt_ioctl(0, TIOCSPGRP, &pgrp);
}

/* Did the last spawn_program find the file, whatever the spawn said?  (-ENOENT for a file
 * that exists: something it needs, such as its interpreter, does not.) */
static bool found_file;

static bool file_exists(const char *path)
{
    return zt_syscall4(SYS_faccessat, -100 /* AT_FDCWD */, path, 0 /* F_OK */, 0) == 0;
}

/* Spawn c->argv[0]: the path itself if it holds a '/', else the first directory of $PATH
 * where it exists (a directory without it: -ENOENT, try the next).  The pid or -errno. */
static long spawn_program(struct command *c)
{
    const char *dirs = getenv("PATH");
    char path[PATH_BYTES];
    long pid = -ENOENT;

    found_file = false;
    if (strchr(c->argv[0], '/')) {
        pid = zt_spawn(c->argv[0], c->argv, 0);
        found_file = pid != -ENOENT || file_exists(c->argv[0]);
        return pid;
    }
    for (dirs = dirs && *dirs ? dirs : DEFAULT_PATH; pid == -ENOENT && *dirs;) {
        size_t n = strcspn(dirs, ":");
        if (n > 0 && n + strlen(c->argv[0]) + 2 <= sizeof(path)) {
            snprintf(path, sizeof(path), "%.*s/%s", (int)n, dirs, c->argv[0]);
            pid = zt_spawn(path, c->argv, 0);
            if (pid == -ENOENT && file_exists(path)) {
                found_file = true;
                return pid; /* it is there: do not look further down $PATH */
            }
        }
        dirs += n + (dirs[n] == ':');
    }
    return pid;
}

/* Start c in process group *pgid (0: a new group, whose id is then stored), or say why not:
 * its pid, or the status the command fails with. */
static long start_program(struct command *c, int *pgid, int *fail_status)
{
    long pid = spawn_program(c);

    if (pid < 0) {
        if (pid == -ENOENT && !found_file) {
            printf("sh: %s: not found\n", c->argv[0]);
            *fail_status = 127;
        } else {
            printf("sh: %s: cannot run: %s\n", c->argv[0], zt_errno_name((int)-pid));
            *fail_status = 126;
        }
        return pid;
    }
    /* Its pipeline's group: Ctrl-C reaches only the foreground. */
    zt_syscall2(SYS_setpgid, pid, *pgid ? *pgid : pid);
    *pgid = *pgid ? *pgid : (int)pid;
    if (c->background) {
        job_add((int)pid, c->argv[0]);
        if (interactive) {
            printf("[pid %ld] %s &\n", pid, c->argv[0]);
        }
    }
    return pid;
}

/* Wait for the foreground program pid; its status as the shell reports it.  A program
 * before the last of a pipeline that a SIGPIPE ended (its reader had finished) is not
 * reported: that is how a pipeline ends early, as in any shell. */
static int wait_program(long pid, bool piped)
{
    int status = 0;
    long r;

    do { /* a Ctrl-C typed before the hand-over interrupts only the shell's wait */
        r = zt_wait((int)pid, &status);
    } while (r == -EINTR);
    if (r < 0) {
        printf("sh: wait4(%ld) failed: %s\n", pid, zt_errno_name((int)-r));
        return 126;
    }
    if (!(piped && zt_wifsignaled(status) && zt_wtermsig(status) == SIGPIPE)) {
        report((int)pid, status, false);
    }
    return zt_status_code(status);
}

static int run_program(struct command *c)
{
    int pgid = 0, status = 0;
    long pid;

    fflush(stdout);
    pid = start_program(c, &pgid, &status);
    if (pid < 0 || c->background) {
        return status;
    }
    set_foreground(pgid);
    status = wait_program(pid, false);
    set_foreground((int)zt_syscall1(SYS_getpgid, 0));
    return status;
}

/* ---------------------------------------------------------------- built-ins */

static bool parse_int(const char *s, long *out)
{
    char *end;

    *out = strtol(s, &end, 10);
    return *s != '\0' && *end == '\0';
}

static int builtin_help(struct command *c)
{
    printf("commands: PROGRAM [ARGS...] runs the first PROGRAM in $PATH (/usr/bin, then /bin);\n"
           "`a ; b` in sequence, `a &` in the background, `a | b` a pipe; '...' and \"...\"\n"
           "quote.  Ctrl-C ends the foreground program.  No redirections (<, >), variables or\n"
           "control flow: busybox's sh has them when busybox is in /bin.\n"
           "built-ins:\n"
           "  help             this text\n"
           "  ps               threads: pid, tid, name, cpu, state, user/system time\n"
           "  cpus [-s|-a|-c LIST]  per CPU: role, current task, exceptions, interrupts, time;\n"
           "                   -s one line per run of alike CPUs (the default above 16 CPUs),\n"
           "                   -a every CPU, -c LIST only the CPUs of LIST (e.g. 0,122-123);\n"
           "                   -i [-r] the longest spans with interrupts masked (the checked\n"
           "                   kernel), -r starting new records\n"
           "  echo [WORDS]     print the words\n"
           "  jobs             background jobs still running\n"
           "  wait             wait for every background job\n"
           "  kill [-SIG] PID  send a signal (default SIGTERM)\n"
           "  exit [N]         leave the shell with status N (default: the last status)\n"
           "  poweroff [N]     power the machine off; QEMU exits with N (default 0)\n"
           "programs: ");
    printf("hello, sleep, usertests, ... (see /bin)\n");
    return 0;
}

static char state_name(char s)
{
    return s != 0 ? s : '?';
}

static int builtin_ps(struct command *c)
{
    struct zt_task_info *tasks = NULL;
    long n = 16, total;

    for (;;) {
        free(tasks);
        tasks = calloc((size_t)n, sizeof(*tasks));
        if (tasks == NULL) {
            printf("ps: out of memory\n");
            return 1;
        }
        total = zt_tasks(tasks, (size_t)n);
        if (total < 0) {
            printf("ps: zt_tasks failed: %s\n", zt_errno_name((int)-total));
            free(tasks);
            return 1;
        }
        if (total <= n) {
            break;
        }
        n = total + 8;
    }
    printf("  PID   TID  PPID CPU S NAME             AFFINITY     USER(ms)    SYS(ms)\n");
    for (long i = 0; i < total; i++) {
        struct zt_task_info *t = &tasks[i];
        char aff[16];

        if (zt_cpulist_format(&t->affinity, aff, sizeof(aff)) >= (int)sizeof(aff)) {
            strcpy(aff + sizeof(aff) - 4, "...");
        }
        printf("%5d %5d %5d %3d %c %-16.16s %-10s %10llu %10llu\n", t->pid, t->tid, t->ppid, t->cpu,
               state_name(t->state), t->name, aff, (unsigned long long)(t->user_ns / 1000000),
               (unsigned long long)(t->sys_ns / 1000000));
    }
    free(tasks);
    return 0;
}

static int builtin_cpus(struct command *c)
{
    return zt_cpus_command(c->argc, c->argv);
}

static int builtin_echo(struct command *c)
{
    for (int i = 1; i < c->argc; i++) {
        printf("%s%s", i > 1 ? " " : "", c->argv[i]);
    }
    printf("\n");
    return 0;
}

static int builtin_jobs(struct command *c)
{
    for (int i = 0; i < MAX_JOBS; i++) {
        if (jobs[i].pid != 0) {
            printf("[pid %d] %s\n", jobs[i].pid, jobs[i].name);
        }
    }
    return 0;
}

static int builtin_wait(struct command *c)
{
    wait_all_jobs();
    return 0;
}

static int signal_number(const char *s)
{
    long n;

    if (strncmp(s, "SIG", 3) == 0) {
        s += 3;
    }
    if (parse_int(s, &n)) {
        return (int)n;
    }
    for (int sig = 1; sig < 32; sig++) {
        if (strcmp(zt_signal_name(sig) + 3, s) == 0) {
            return sig;
        }
    }
    return -1;
}

static int builtin_kill(struct command *c)
{
    int sig = SIGTERM, arg = 1;
    long pid, r;

    if (c->argc > 1 && c->argv[1][0] == '-') {
        sig = signal_number(c->argv[1] + 1);
        arg = 2;
    }
    if (sig < 0 || c->argc != arg + 1 || !parse_int(c->argv[arg], &pid)) {
        printf("usage: kill [-SIG] PID\n");
        return 2;
    }
    r = zt_kill((int)pid, sig);
    if (r < 0) {
        printf("kill: %ld: %s\n", pid, zt_errno_name((int)-r));
        return 1;
    }
    return 0;
}

static int status_arg(struct command *c, int fallback, bool *ok)
{
    long n = fallback;

    *ok = c->argc == 1 || (c->argc == 2 && parse_int(c->argv[1], &n));
    if (!*ok) {
        printf("usage: %s [N]\n", c->argv[0]);
    }
    return (int)(n & 0xff);
}

static int builtin_exit(struct command *c)
{
    bool ok;
    int status = status_arg(c, last_status, &ok);

    if (!ok) {
        return 2;
    }
    if (!interactive) {
        wait_all_jobs();
    }
    exit(status);
}

static int builtin_poweroff(struct command *c)
{
    bool ok;
    int status = status_arg(c, 0, &ok);
    long r;

    if (!ok) {
        return 2;
    }
    fflush(stdout);
    r = zt_poweroff(status);
    printf("poweroff: %s\n", zt_errno_name((int)-r));
    return 1;
}

struct builtin {
    const char *name;
    int (*fn)(struct command *c);
};

static const struct builtin builtins[] = {
    {"help", builtin_help}, {"ps", builtin_ps},     {"cpus", builtin_cpus},
    {"echo", builtin_echo}, {"jobs", builtin_jobs}, {"wait", builtin_wait},
    {"kill", builtin_kill}, {"exit", builtin_exit}, {"poweroff", builtin_poweroff},
};

static const struct builtin *builtin_of(const struct command *c)
{
    for (size_t i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++) {
        if (strcmp(c->argv[0], builtins[i].name) == 0) {
            return &builtins[i];
        }
    }
    return NULL;
}

static int run_command(struct command *c)
{
    const struct builtin *b = builtin_of(c);

    /* Built-ins always run in the shell itself, `&` or not. */
    return b ? b->fn(c) : run_program(c);
}

/* Make descriptor `to` refer to `from` (dup3), or close it when from < 0. */
static void fd_set_to(int from, int to)
{
    if (from >= 0) {
        zt_syscall3(SYS_dup3, from, to, 0);
    }
}

static void fd_close(int *fd)
{
    if (*fd >= 0) {
        zt_syscall1(SYS_close, *fd);
        *fd = -1;
    }
}

/* Run a pipeline of n commands (n >= 2; see the header for the order of things). */
static int run_pipeline(struct command *cmds, int n)
{
    int pipes[MAX_STAGES - 1][2], status[MAX_STAGES], pgid = 0;
    long pids[MAX_STAGES];
    int saved_in = (int)zt_syscall3(SYS_fcntl, 0, F_DUPFD_CLOEXEC_LX, 10);
    int saved_out = (int)zt_syscall3(SYS_fcntl, 1, F_DUPFD_CLOEXEC_LX, 10);
    bool background = cmds[n - 1].background;

    fflush(stdout);
    for (int i = 0; i < n - 1; i++) {
        if (zt_syscall2(SYS_pipe2, pipes[i], O_CLOEXEC_LX) != 0) {
            pipes[i][0] = pipes[i][1] = -1; /* that stage reads nothing / writes nowhere */
        }
    }
    for (int i = 0; i < n; i++) { /* the programs first, each with its ends as 0 and 1 */
        pids[i] = -1;
        status[i] = 0;
        cmds[i].background = background;
        if (builtin_of(&cmds[i])) {
            continue;
        }
        fd_set_to(i > 0 ? pipes[i - 1][0] : saved_in, 0);
        fd_set_to(i < n - 1 ? pipes[i][1] : saved_out, 1);
        pids[i] = start_program(&cmds[i], &pgid, &status[i]);
    }
    fd_set_to(saved_in, 0);
    for (int i = 0; i < n - 1; i++) {
        fd_close(&pipes[i][0]); /* read by a program, or by nobody: built-ins read no input */
    }
    /* A built-in writing into a pipe whose reader has gone must fail (EPIPE), not end the
     * shell: SIGPIPE is ignored while they run (the programs are started already). */
    zt_signal(SIGPIPE, SIG_IGN, 0);
    for (int i = 0; i < n; i++) { /* then the built-ins, in order, output into their pipe */
        if (builtin_of(&cmds[i])) {
            fd_set_to(i < n - 1 ? pipes[i][1] : saved_out, 1);
            status[i] = builtin_of(&cmds[i])->fn(&cmds[i]);
            fflush(stdout);
            clearerr(stdout); /* an EPIPE is the reader's choice, not an error to keep */
        }
        fd_set_to(saved_out, 1);
        if (i < n - 1) {
            fd_close(&pipes[i][1]); /* its reader sees the end of the data */
        }
    }
    zt_signal(SIGPIPE, SIG_DFL, 0);
    fd_close(&saved_in);
    fd_close(&saved_out);
    if (background || pgid == 0) {
        return status[n - 1];
    }
    set_foreground(pgid);
    for (int i = 0; i < n; i++) {
        if (pids[i] > 0) {
            status[i] = wait_program(pids[i], i < n - 1);
        }
    }
    set_foreground((int)zt_syscall1(SYS_getpgid, 0));
    return status[n - 1];
}

/* ---------------------------------------------------------------- parsing */

static bool is_blank(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

/*
 * Split the next command off *cursor, in place: words are NUL-terminated inside the line
 * (quotes removed, so a word never grows past the byte that ended it).  Returns false when
 * the line is used up; true with c->argc == 0 for an empty command (`a ;; b`).  On an
 * unterminated quote or too many words, sets *error and returns false.  A command ended by
 * `|` has c->piped set.
 */
static bool parse_command(char **cursor, struct command *c, const char **error)
{
    char *in = *cursor;
    char end = 0; /* the `;` or `&` that ended the command, 0 at the end of the line */

    c->argc = 0;
    while (end == 0) {
        char *word, *out;
        char quote = 0, stop;

        while (is_blank(*in)) {
            in++;
        }
        if (*in == '\0') {
            break;
        }
        if (*in == ';' || *in == '&' || *in == '|') {
            end = *in++;
            break;
        }
        if (c->argc == MAX_WORDS) {
            *error = "too many words";
            return false;
        }
        word = out = in;
        while (*in != '\0' &&
               (quote != 0 || (!is_blank(*in) && *in != ';' && *in != '&' && *in != '|'))) {
            if (quote != 0 && *in == quote) {
                quote = 0;
                in++;
            } else if (quote == 0 && (*in == '\'' || *in == '"')) {
                quote = *in++;
            } else if (*in == '\\' && quote != '\'' && in[1] != '\0') {
                *out++ = in[1];
                in += 2;
            } else {
                *out++ = *in++;
            }
        }
        if (quote != 0) {
            *error = "unterminated quote";
            return false;
        }
        stop = *in; /* saved: the terminator below may land on it */
        in += stop != '\0';
        *out = '\0';
        c->argv[c->argc++] = word;
        if (stop == ';' || stop == '&' || stop == '|') {
            end = stop;
        }
    }
    c->argv[c->argc] = NULL;
    c->background = end == '&';
    c->piped = end == '|';
    *cursor = in;
    return c->argc > 0 || end != 0;
}

/* Run every pipeline of one line; last_status becomes the last foreground pipeline's. */
static void run_line(char *line)
{
    static struct command cmds[MAX_STAGES];
    const char *error = NULL;
    char *cursor = line;
    int n = 0;

    while (error == NULL && parse_command(&cursor, &cmds[n], &error)) {
        struct command *c = &cmds[n];
        int status;

        if (c->argc == 0) {
            error = c->piped || n > 0 ? "a pipe with no command on one side" : NULL;
            n = 0;
            continue;
        }
        if (c->piped) {
            error = ++n == MAX_STAGES ? "too many commands in one pipeline" : NULL;
            continue;
        }
        status = n == 0 ? run_command(c) : run_pipeline(cmds, n + 1);
        if (!c->background) {
            last_status = status;
        }
        n = 0;
    }
    if (error == NULL && n > 0) {
        error = "a pipe with no command on one side";
    }
    if (error != NULL) {
        printf("sh: %s\n", error);
        last_status = 2;
    }
}

/* ---------------------------------------------------------------- interactive input */

/*
 * Ctrl-C at the prompt.  The line discipline drops what was typed and sends SIGINT; the shell
 * must then show a fresh prompt, wherever the signal finds it.  A signal taken inside read()
 * makes it return -EINTR; one taken on the way there (after the prompt was printed, before
 * the call) would leave the shell blocked on input that no longer exists, so the handler
 * notes it and, once the shell is committed to reading, jumps back out of the read.
 */
static volatile sig_atomic_t sigint_pending; /* a Ctrl-C since the prompt was printed */
static volatile sig_atomic_t in_read;        /* the handler may leave through read_jmp */
static jmp_buf read_jmp;

static void on_sigint(int sig)
{
    (void)sig;
    sigint_pending = 1;
    if (in_read) {
        in_read = 0;
        longjmp(read_jmp, 1); /* SA_NODEFER: nothing to unblock */
    }
}

/*
 * Read one line into line[LINE_BYTES].  The console's line discipline (kernel/fs/tty.c) does the
 * editing and echo; Ctrl-C there drops the typed line and sends SIGINT: an empty line.
 * Returns false at end of input (Ctrl-D on an empty line).
 */
static bool read_line(char *line)
{
    volatile long r = -EINTR; /* read after a jump out of the handler */

    fflush(stdout);
    if (setjmp(read_jmp) == 0) {
        in_read = 1;
        if (!sigint_pending) {
            r = zt_read(0, line, LINE_BYTES - 1);
        }
        in_read = 0;
    }
    if (r == -EINTR) {
        sigint_pending = 0;
        zt_write(1, "\n", 1);
        line[0] = '\0';
        return true;
    }
    if (r <= 0) {
        zt_write(1, "\n", 1);
        return false;
    }
    line[r] = '\0';
    if (r > 0 && line[r - 1] == '\n') {
        line[r - 1] = '\0';
    }
    return true;
}

static int interactive_loop(void)
{
    char line[LINE_BYTES];

    interactive = true;
    zt_syscall2(SYS_setpgid, 0, 0); /* a group of its own, apart from init's */
    set_foreground((int)zt_syscall1(SYS_getpgid, 0));
    zt_signal(SIGINT, on_sigint, ZT_SA_NODEFER);
    printf("zerotick shell: 'help' lists the commands\n");
    for (;;) {
        reap_finished();
        sigint_pending = 0; /* a Ctrl-C from now on drops the line about to be typed */
        printf("zt$ ");
        fflush(stdout);
        if (!read_line(line)) {
            return last_status;
        }
        run_line(line);
    }
}

int main(int argc, char **argv)
{
    if (argc == 1) {
        return interactive_loop();
    }
    if (argc == 3 && strcmp(argv[1], "-c") == 0) {
        char *line = strdup(argv[2]);

        if (line == NULL) {
            printf("sh: out of memory\n");
            return 2;
        }
        run_line(line);
        wait_all_jobs();
        return last_status;
    }
    printf("usage: sh [-c COMMANDS]\n");
    return 2;
}
