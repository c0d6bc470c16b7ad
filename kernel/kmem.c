/*
 * kmem.c — kernel objects in power-of-two size classes (contract in include/kernel/kmem.h).
 *
 * Classes of 32 bytes to one page; each keeps a free list threaded through its free
 * objects and refills from a fresh page, carving it into objects.  Whole-page objects come
 * straight from the page allocator and go back to it.  One lock per class (leaf, IRQs
 * masked).  Memory in a class is never returned: after warm-up, allocating and freeing
 * the same mix of objects leaves the free page count unchanged, which is what leak tests
 * check.
 */
#include "kernel/kmem.h"
#include "arch.h"
#include "kernel/lib.h"
#include "kernel/page.h"
#include "kernel/spinlock.h"

#define MIN_SHIFT 5
#define NCLASSES  (PAGE_SHIFT - MIN_SHIFT) /* 32 .. 2048; 4096 goes to the page allocator */

struct free_obj {
    struct free_obj *next;
};

struct size_class {
    spinlock_t lock;
    struct free_obj *free;
};

static struct size_class classes[NCLASSES];

static int class_of(size_t size)
{
    int c = 0;
    while (((size_t)1 << (c + MIN_SHIFT)) < size) {
        c++;
    }
    return c;
}

/* Carve a new page into objects of class c (lock held). */
static bool refill(struct size_class *sc, int c)
{
    paddr_t pa = page_alloc();
    if (!pa) {
        return false;
    }
    size_t obj = (size_t)1 << (c + MIN_SHIFT);
    char *base = phys_to_virt(pa);
    for (size_t off = 0; off + obj <= PAGE_SIZE; off += obj) {
        struct free_obj *o = (struct free_obj *)(base + off);
        o->next = sc->free;
        sc->free = o;
    }
    return true;
}

void *kmem_alloc(size_t size)
{
    if (size > PAGE_SIZE / 2) {
        paddr_t pa = size <= PAGE_SIZE ? page_alloc() : 0;
        return pa ? phys_to_virt(pa) : 0;
    }
    int c = class_of(size);
    struct size_class *sc = &classes[c];
    unsigned long flags = spin_lock_irqsave(&sc->lock);
    struct free_obj *o = sc->free;
    if (!o && refill(sc, c)) {
        o = sc->free;
    }
    if (o) {
        sc->free = o->next;
    }
    spin_unlock_irqrestore(&sc->lock, flags);
    if (o) {
        memset(o, 0, (size_t)1 << (c + MIN_SHIFT));
    }
    return o;
}

void kmem_free(void *p, size_t size)
{
    if (!p) {
        return;
    }
    if (size > PAGE_SIZE / 2) {
        page_free(virt_to_phys(p));
        return;
    }
    struct size_class *sc = &classes[class_of(size)];
    unsigned long flags = spin_lock_irqsave(&sc->lock);
    struct free_obj *o = p;
    o->next = sc->free;
    sc->free = o;
    spin_unlock_irqrestore(&sc->lock, flags);
}
