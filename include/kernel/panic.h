/* SPDX-License-Identifier: MIT */
/*
 * panic.h — broken kernel invariants.  panic() stops every other CPU (IPI_STOP), prints the
 * message (and, for exceptions, the register dump), and powers off with PANIC_EXIT_STATUS so
 * a test harness sees it.  Never used for anything user input can cause.
 *
 * Checked invariants.  The ASSERT family states a contract where it holds ("lock held",
 * "IRQs masked", a data-structure invariant) and panics, naming file and line, when it does
 * not.  It is compiled in when ZT_CHECKED is defined: in the kernel that `make test` boots
 * (build/checked/kernel.elf) and in every host unit test.  The release kernel (`make`,
 * `make run`, `make bench`) compiles each ASSERT to nothing — the condition is type-checked
 * but never evaluated, so it must have no side effects.  Why: the checks sit on the hottest
 * paths (every lock, every schedule()), the REPRO instruction counts measure the release
 * kernel, and every test scenario already runs the checked one.  VERIFY is the exception,
 * for the few checks cheap enough and important enough to keep in every build.
 *
 *   ASSERT(cond)            cond holds (checked builds)
 *   ASSERT_IRQS_MASKED()    this CPU has IRQs masked (checked builds)
 *   ASSERT_HELD(lock)       this CPU holds the spinlock (checked builds; spinlock.h)
 *   ASSERT_NOT_HELD(lock)   this CPU does not hold it (checked builds; spinlock.h)
 *   VERIFY(cond)            cond holds (every build)
 */
#ifndef ZT_KERNEL_PANIC_H
#define ZT_KERNEL_PANIC_H

#include <stdbool.h>

#include "arch.h"
#include "uapi/zt_events.h"

#define PANIC_EXIT_STATUS ZT_PANIC_STATUS /* 125 */

struct trap_frame;

_Noreturn void panic(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Panic for an exception: message, then the register dump of `f`. */
_Noreturn void panic_frame(const struct trap_frame *f, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The two things a panic does with what lies above lib/ (docs/layout.md): stop every other
 * CPU, and print what this CPU was running.  main.c hands them in at boot. */
void panic_set_hooks(void (*stop_others)(void), void (*describe_cpu)(void));

#define VERIFY(cond)                                                                               \
    do {                                                                                           \
        if (__builtin_expect(!(cond), 0)) {                                                        \
            panic("assertion failed: %s (%s:%d)", #cond, __FILE__, __LINE__);                      \
        }                                                                                          \
    } while (0)

#ifdef ZT_CHECKED
#define ZT_CHECKS_ON 1
#define ASSERT(cond) VERIFY(cond)
#else
#define ZT_CHECKS_ON 0
#define ASSERT(cond) ((void)sizeof(!(cond)))
#endif

#define ASSERT_IRQS_MASKED()  ASSERT(!arch_irqs_enabled())
#define ASSERT_HELD(lock)     ASSERT(spin_is_held(lock))
#define ASSERT_NOT_HELD(lock) ASSERT(!spin_is_held(lock))

#endif
