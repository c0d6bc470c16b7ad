/*
 * panic.h — broken kernel invariants.  panic() stops every other CPU (IPI_STOP), prints the
 * message (and, for exceptions, the register dump), and powers off with PANIC_EXIT_STATUS so
 * a test harness sees it.  Never used for anything user input can cause.
 */
#ifndef ZT_KERNEL_PANIC_H
#define ZT_KERNEL_PANIC_H

#define PANIC_EXIT_STATUS 125

struct trap_frame;

_Noreturn void panic(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Panic for an exception: message, then the register dump of `f`. */
_Noreturn void panic_frame(const struct trap_frame *f, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Is a panic under way?  (Other CPUs' IPI handlers stop when it is.) */
int panic_in_progress(void);

#define ASSERT(cond)                                                                               \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            panic("assertion failed: %s (%s:%d)", #cond, __FILE__, __LINE__);                      \
        }                                                                                          \
    } while (0)

#endif
