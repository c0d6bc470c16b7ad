/* SPDX-License-Identifier: MIT */
/*
 * list.h — intrusive circular doubly-linked lists.  A `struct list` is both the head of a
 * list and the link inside each element; container_of() gets from a link to its element.
 * No locking: every list is guarded by the lock its owner names.
 */
#ifndef ZT_KERNEL_LIST_H
#define ZT_KERNEL_LIST_H

#include <stdbool.h>
#include <stddef.h>

struct list {
    struct list *next, *prev;
};

#define container_of(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))
#define LIST_INIT(name)                                                                            \
    {                                                                                              \
        &(name), &(name)                                                                           \
    }

static inline void list_init(struct list *l)
{
    l->next = l->prev = l;
}

static inline bool list_empty(const struct list *l)
{
    return l->next == l;
}

static inline void list_insert_between(struct list *e, struct list *prev, struct list *next)
{
    e->prev = prev;
    e->next = next;
    prev->next = e;
    next->prev = e;
}

static inline void list_add_tail(struct list *head, struct list *e)
{
    list_insert_between(e, head->prev, head);
}

static inline void list_add_head(struct list *head, struct list *e)
{
    list_insert_between(e, head, head->next);
}

/* Unlink e and leave it pointing at itself (so list_empty(e) says "not on a list"). */
static inline void list_del(struct list *e)
{
    e->prev->next = e->next;
    e->next->prev = e->prev;
    list_init(e);
}

#define list_for_each(pos, head)                                                                   \
    for (struct list *pos = (head)->next; pos != (head); pos = pos->next)
#define list_for_each_safe(pos, tmp, head)                                                         \
    for (struct list *pos = (head)->next, *tmp = pos->next; pos != (head);                         \
         pos = tmp, tmp = pos->next)

#endif
