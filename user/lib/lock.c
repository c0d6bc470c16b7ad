/* SPDX-License-Identifier: MIT */
/*
 * lock.c — picolibc's lock hooks (__retarget_lock_*), so malloc and the other libc internals
 * that take __lock___libc_recursive_mutex are safe with several threads.  picolibc's own
 * versions are empty stubs for single-threaded targets; defining every one of them here keeps
 * its object out of the link.
 *
 * Every lock is recursive (a non-recursive lock used correctly never re-enters, so that is a
 * superset).  The owner is the thread pointer TPIDR_EL0, distinct per thread and readable
 * without a system call.  Waiting is a futex on the lock word: 0 free, 1 held, 2 held with
 * (possible) waiters; the uncontended path never enters the kernel.
 * Locks created at run time (__retarget_lock_init) all share one lock: libc creates none
 * on the paths zerotick programs use, and sharing is correct, only less concurrent.
 */
#include "zt.h"

#include <sys/lock.h>

struct __lock {
    int word;
    unsigned depth;  /* times the owner holds it */
    uintptr_t owner; /* TPIDR_EL0 of the holder, 0 when free */
};

struct __lock __lock___libc_recursive_mutex;
static struct __lock dynamic_lock;

static uintptr_t self(void)
{
    uintptr_t tp;

    __asm__ volatile("mrs %0, tpidr_el0" : "=r"(tp));
    return tp;
}

static void word_lock(int *w)
{
    int c = 0;

    if (__atomic_compare_exchange_n(w, &c, 1, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
        return;
    }
    if (c != 2) {
        c = __atomic_exchange_n(w, 2, __ATOMIC_ACQUIRE);
    }
    while (c != 0) {
        zt_futex_wait(w, 2, NULL);
        c = __atomic_exchange_n(w, 2, __ATOMIC_ACQUIRE);
    }
}

static void word_unlock(int *w)
{
    if (__atomic_exchange_n(w, 0, __ATOMIC_RELEASE) == 2) {
        zt_futex_wake(w, 1);
    }
}

static struct __lock *resolve(_LOCK_T lock)
{
    return lock != NULL ? lock : &dynamic_lock;
}

void __retarget_lock_acquire_recursive(_LOCK_T lock)
{
    struct __lock *l = resolve(lock);
    uintptr_t me = self();

    if (__atomic_load_n(&l->owner, __ATOMIC_RELAXED) == me) {
        l->depth++;
        return;
    }
    word_lock(&l->word);
    __atomic_store_n(&l->owner, me, __ATOMIC_RELAXED);
    l->depth = 1;
}

int __retarget_lock_try_acquire_recursive(_LOCK_T lock)
{
    struct __lock *l = resolve(lock);
    uintptr_t me = self();
    int c = 0;

    if (__atomic_load_n(&l->owner, __ATOMIC_RELAXED) == me) {
        l->depth++;
        return 1;
    }
    if (!__atomic_compare_exchange_n(&l->word, &c, 1, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
        return 0;
    }
    __atomic_store_n(&l->owner, me, __ATOMIC_RELAXED);
    l->depth = 1;
    return 1;
}

void __retarget_lock_release_recursive(_LOCK_T lock)
{
    struct __lock *l = resolve(lock);

    if (--l->depth == 0) {
        __atomic_store_n(&l->owner, 0, __ATOMIC_RELAXED);
        word_unlock(&l->word);
    }
}

void __retarget_lock_acquire(_LOCK_T lock)
{
    __retarget_lock_acquire_recursive(lock);
}

int __retarget_lock_try_acquire(_LOCK_T lock)
{
    return __retarget_lock_try_acquire_recursive(lock);
}

void __retarget_lock_release(_LOCK_T lock)
{
    __retarget_lock_release_recursive(lock);
}

void __retarget_lock_init(_LOCK_T *lock)
{
    *lock = &dynamic_lock;
}

void __retarget_lock_init_recursive(_LOCK_T *lock)
{
    *lock = &dynamic_lock;
}

void __retarget_lock_close(_LOCK_T lock)
{
}

void __retarget_lock_close_recursive(_LOCK_T lock)
{
}
