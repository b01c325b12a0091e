/* SPDX-License-Identifier: MIT */
/* Intrusive doubly linked list. */
#ifndef RDAX_UTIL_LIST_H
#define RDAX_UTIL_LIST_H

#include <stddef.h>

struct list_head {
	struct list_head *next, *prev;
};

#define LIST_HEAD_INIT(n) { &(n), &(n) }
#define container_of(ptr, type, member)                                     \
	((type *)((char *)(ptr) - offsetof(type, member)))
#define list_entry(ptr, type, member) container_of(ptr, type, member)

static inline void list_init(struct list_head *h)
{
	h->next = h;
	h->prev = h;
}

static inline int list_empty(const struct list_head *h)
{
	return h->next == h;
}

/* at the head */
static inline void list_add(struct list_head *n, struct list_head *h)
{
	n->next = h->next;
	n->prev = h;
	h->next->prev = n;
	h->next = n;
}

static inline void list_add_tail(struct list_head *n, struct list_head *h)
{
	n->prev = h->prev;
	n->next = h;
	h->prev->next = n;
	h->prev = n;
}

static inline void list_del(struct list_head *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->next = n;
	n->prev = n;
}

#define list_for_each(pos, head)                                            \
	for (pos = (head)->next; pos != (head); pos = pos->next)

#define list_for_each_safe(pos, tmp, head)                                  \
	for (pos = (head)->next, tmp = pos->next; pos != (head);           \
	     pos = tmp, tmp = pos->next)

#endif
