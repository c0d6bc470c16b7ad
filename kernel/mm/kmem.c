/* SPDX-License-Identifier: MIT */
/*
 * kmem.c — kernel objects in power-of-two size classes (contract in include/kernel/kmem.h).
 *
 * Each class keeps a list of slab pages that have free objects.  A slab page starts with a
 * header (how many objects are in use, its own free list, and in checked builds its class);
 * objects follow, each aligned to its size.
 * Freeing the last object of a page gives the page back to the page allocator, so the
 * free page count returns exactly to where it was once every object is freed — which is
 * what the leak tests compare.  Objects over half a page are whole pages.
 * Lock: one per class (leaf, IRQs masked).
 *
 * Host tests (ZT_HOST with AddressSanitizer): a free object is poisoned but for its free-list
 * link, so a use after free of a kernel object is a sanitizer report, not a silent read of the
 * allocator's next object (VFS-24 proves the working-directory race that way).
 */
#include "kernel/kmem.h"
#include "arch.h"
#include "kernel/lib.h"
#include "kernel/list.h"
#include "kernel/page.h"
#include "kernel/panic.h"
#include "kernel/spinlock.h"

#if defined(ZT_HOST) && defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define POISON(p, n)   ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n)   ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define MIN_SHIFT 5
#define NCLASSES  (PAGE_SHIFT - 1 - MIN_SHIFT + 1) /* 32 .. 2048 bytes */

struct free_obj {
    struct free_obj *next;
};

struct slab {
    struct list link;      /* in its class's partial list while it has free objects */
    struct free_obj *free; /* free objects in this page */
    unsigned in_use;
    unsigned capacity;
    unsigned cls; /* checked builds: the size class (kmem_free's size must name it) */
} __attribute__((aligned(64)));

struct size_class {
    spinlock_t lock;
    struct list partial;     /* slabs with at least one free object */
    uint64_t objects, slabs; /* in use, and pages held (/proc/slabinfo) */
};

static uint64_t page_objects; /* objects over half a page: a page each */
_Static_assert(NCLASSES + 1 == KMEM_CLASSES, "kmem.h's class count");

static struct size_class classes[NCLASSES] = {
    [0 ... NCLASSES - 1] = {.lock = SPINLOCK_INIT_RANK(LOCK_ALLOC)},
};

static unsigned class_of(size_t size)
{
    unsigned c = 0;
    while (((size_t)1 << (c + MIN_SHIFT)) < size) {
        c++;
    }
    return c;
}

static size_t class_size(unsigned c)
{
    return (size_t)1 << (c + MIN_SHIFT);
}

/* Where class c's first object starts in its page (objects stay size-aligned). */
static size_t first_offset(unsigned c)
{
    size_t obj = class_size(c);
    return (sizeof(struct slab) + obj - 1) / obj * obj;
}

/* A fresh slab for class c, every object on its free list. */
static struct slab *slab_new(unsigned c)
{
    paddr_t pa = page_alloc();
    if (!pa) {
        return 0;
    }
    struct slab *s = phys_to_virt(pa);
    size_t obj = class_size(c), first = first_offset(c);
    /* the page came zeroed: no object yet */
    ASSERT(c < NCLASSES && s->free == 0 && s->in_use == 0);
    if (ZT_CHECKS_ON) {
        s->cls = c;
    }
    list_init(&s->link);
    for (size_t off = PAGE_SIZE - obj; off >= first && off < PAGE_SIZE; off -= obj) {
        struct free_obj *o = (struct free_obj *)((char *)s + off);
        o->next = s->free;
        s->free = o;
        s->capacity++;
        POISON((char *)o + sizeof(*o), obj - sizeof(*o));
    }
    return s;
}

void *kmem_alloc(size_t size)
{
    if (size > PAGE_SIZE / 2) {
        paddr_t pa = size <= PAGE_SIZE ? page_alloc() : 0;
        if (pa) {
            __atomic_fetch_add(&page_objects, 1, __ATOMIC_RELAXED);
        }
        return pa ? phys_to_virt(pa) : 0;
    }
    unsigned c = class_of(size);
    struct size_class *sc = &classes[c];
    unsigned long flags = spin_lock_irqsave(&sc->lock);
    if (!sc->partial.next) {
        list_init(&sc->partial);
    }
    if (list_empty(&sc->partial)) {
        struct slab *fresh = slab_new(c);
        if (!fresh) {
            spin_unlock_irqrestore(&sc->lock, flags);
            return 0;
        }
        list_add_head(&sc->partial, &fresh->link);
        sc->slabs++;
    }
    struct slab *s = container_of(sc->partial.next, struct slab, link);
    ASSERT(s->free && s->in_use < s->capacity); /* a partial slab has a free object */
    struct free_obj *o = s->free;
    s->free = o->next;
    if (++s->in_use == s->capacity) {
        list_del(&s->link);
    }
    sc->objects++;
    spin_unlock_irqrestore(&sc->lock, flags);
    UNPOISON(o, class_size(c));
    memset(o, 0, class_size(c));
    return o;
}

void kmem_free(void *p, size_t size)
{
    if (!p) {
        return;
    }
    if (size > PAGE_SIZE / 2) {
        __atomic_fetch_sub(&page_objects, 1, __ATOMIC_RELAXED);
        page_free(virt_to_phys(p));
        return;
    }
    struct size_class *sc = &classes[class_of(size)];
    struct slab *s = (struct slab *)((uintptr_t)p & ~(uintptr_t)(PAGE_SIZE - 1));
    ASSERT(s->cls == class_of(size)); /* freed with the size it was allocated with */
    ASSERT((uintptr_t)p - (uintptr_t)s >= sizeof(*s) &&
           ((uintptr_t)p & (class_size(s->cls) - 1)) == 0);
    unsigned long flags = spin_lock_irqsave(&sc->lock);
    VERIFY(s->in_use > 0);
    bool was_full = s->in_use == s->capacity;
    struct free_obj *o = p;
    o->next = s->free;
    s->free = o;
    POISON((char *)o + sizeof(*o), class_size(class_of(size)) - sizeof(*o));
    s->in_use--;
    sc->objects--;
    if (s->in_use == 0) {
        if (!was_full) {
            list_del(&s->link);
        }
        sc->slabs--;
        spin_unlock_irqrestore(&sc->lock, flags);
        UNPOISON(s, PAGE_SIZE);
        page_free(virt_to_phys(s));
        return;
    }
    if (was_full) {
        list_add_head(&sc->partial, &s->link);
    }
    spin_unlock_irqrestore(&sc->lock, flags);
}

void kmem_info(struct kmem_class_info out[KMEM_CLASSES])
{
    for (unsigned c = 0; c < NCLASSES; c++) {
        struct size_class *sc = &classes[c];
        unsigned long flags = spin_lock_irqsave(&sc->lock);
        out[c].objects = sc->objects;
        out[c].slabs = sc->slabs;
        spin_unlock_irqrestore(&sc->lock, flags);
        out[c].size = class_size(c);
        out[c].per_slab = (unsigned)((PAGE_SIZE - first_offset(c)) / class_size(c));
    }
    uint64_t pages = __atomic_load_n(&page_objects, __ATOMIC_RELAXED);
    out[NCLASSES] = (struct kmem_class_info){PAGE_SIZE, 1, pages, pages};
}
