// SPDX-License-Identifier: MIT
/*
 * src/mem: the MR cache (interval map of registrations, LRU eviction,
 * forget) and the registered bounce pool. A recording registrar sits
 * under both and checks every MR it hands out. The cases run on fake
 * MRs, then again on a real verbs PD when an RDMA device exists (rxe in
 * the VM testbed), with the recorder passing through to ibv_reg_mr.
 */
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "mem/mem.h"
#include "t.h"

#define ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE)
#define ARENA_PAGES 64
#define REC_MAX 128

static size_t ps;
static uint8_t *arena;

static uint8_t *pg(size_t i)
{
	return arena + i * ps;
}

static uint64_t rng;

static uint32_t rnd(uint32_t n)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(rng >> 33) % n;
}

/* ---- the recording registrar ---- */

struct rec_mr {
	struct ibv_mr *mr;
	unsigned id;			/* registration number, from 1 */
};

/* Fake MRs when pd is NULL, else ibv_reg_mr on pd. */
struct rec {
	struct ibv_pd *pd;
	int fail;			/* the next reg returns this */
	unsigned regs;
	struct rec_mr live[REC_MAX];
	unsigned nlive;
	unsigned dereg_log[REC_MAX];	/* ids in dereg order */
	unsigned nderegs;
	unsigned bad_deregs;		/* of MRs never registered */
	void *last_addr;
	size_t last_len;
	int last_access;
};

static int rec_reg(void *ctx, void *addr, size_t len, int access, struct ibv_mr **out)
{
	struct rec *r = ctx;
	struct ibv_mr *mr;
	unsigned i;
	int ret;

	r->last_addr = addr;
	r->last_len = len;
	r->last_access = access;
	if (r->fail) {
		ret = r->fail;
		r->fail = 0;
		return ret;
	}
	T_ASSERT(r->nlive < REC_MAX);
	if (r->nlive == REC_MAX)
		return -ENOSPC;
	if (r->pd) {
		ret = mem_verbs_ops.reg(r->pd, addr, len, access, &mr);
		if (ret) {
			printf("  ibv_reg_mr(%p, %zu): %s\n", addr, len, strerror(-ret));
			return ret;
		}
		T_ASSERT(mr->pd == r->pd);
		T_ASSERT(mr->context == r->pd->context);
	} else {
		mr = calloc(1, sizeof(*mr));
		if (!mr)
			return -ENOMEM;
		mr->addr = addr;
		mr->length = len;
		mr->lkey = 0x1000 + r->regs;
		mr->rkey = 0x80000 + r->regs;
	}
	T_ASSERT(mr->addr == addr);
	T_EQ(mr->length, len);
	for (i = 0; i < r->nlive; i++) {
		T_ASSERT(r->live[i].mr->lkey != mr->lkey);
		T_ASSERT(r->live[i].mr->rkey != mr->rkey);
	}
	r->live[r->nlive++] = (struct rec_mr){ mr, ++r->regs };
	*out = mr;
	return 0;
}

static int rec_dereg(void *ctx, struct ibv_mr *mr)
{
	struct rec *r = ctx;
	unsigned i;
	int ret = 0;

	for (i = 0; i < r->nlive && r->live[i].mr != mr; i++)
		;
	if (i == r->nlive) {
		r->bad_deregs++;
		return -EINVAL;
	}
	if (r->nderegs < REC_MAX)
		r->dereg_log[r->nderegs] = r->live[i].id;
	r->nderegs++;
	r->live[i] = r->live[--r->nlive];
	if (r->pd) {
		ret = mem_verbs_ops.dereg(r->pd, mr);
		T_EQ(ret, 0);
	} else {
		free(mr);
	}
	return ret;
}

static const struct mem_reg_ops rec_ops = { .reg = rec_reg, .dereg = rec_dereg };

/* Registration number of a registered MR; 0 if it is not. */
static unsigned rec_id(const struct rec *r, const struct ibv_mr *mr)
{
	unsigned i;

	for (i = 0; i < r->nlive; i++)
		if (r->live[i].mr == mr)
			return r->live[i].id;
	return 0;
}

static bool rec_alive(const struct rec *r, unsigned id)
{
	unsigned i;

	for (i = 0; i < r->nlive; i++)
		if (r->live[i].id == id)
			return true;
	return false;
}

static size_t rec_bytes(const struct rec *r)
{
	size_t n = 0;
	unsigned i;

	for (i = 0; i < r->nlive; i++)
		n += r->live[i].mr->length;
	return n;
}

/* ---- MR cache helpers ---- */

static bool covers(const struct ibv_mr *mr, const void *addr, size_t len)
{
	uintptr_t a = (uintptr_t)addr, s = (uintptr_t)mr->addr;

	return s <= a && a + len <= s + mr->length;
}

static struct mr_cache *cache_new(struct rec *r, size_t max_bytes)
{
	struct mr_cache *mc = NULL;
	int ret = mr_cache_new_ops(&rec_ops, r, max_bytes, ACCESS, &mc);

	T_EQ(ret, 0);
	if (ret || !mc)
		exit(1);
	return mc;
}

/* mr_cache_get that must succeed, with an MR covering the range */
#define GET(mc, addr, len) cache_get(mc, addr, len, __LINE__)

static struct ibv_mr *cache_get(struct mr_cache *mc, void *addr, size_t len, int line)
{
	struct ibv_mr *mr = NULL;
	char msg[256] = "";
	int ret = mr_cache_get(mc, addr, len, &mr, msg, sizeof(msg));

	if (ret || !mr) {
		t_fail(__FILE__, line, "mr_cache_get");
		printf("  arena+%td len %zu: %d %s\n", (uint8_t *)addr - arena, len, ret, msg);
		exit(1);
	}
	t_checks++;
	if (!covers(mr, addr, len))
		t_fail(__FILE__, line, "the MR covers the range");
	return mr;
}

/* get, check, put: for a hit that should not change what is cached */
#define HIT(mc, r, addr, len, want)						\
	do {									\
		unsigned regs_ = (r)->regs;					\
		struct ibv_mr *m_ = GET(mc, addr, len);				\
										\
		T_ASSERT(m_ == (want));						\
		T_EQ((r)->regs, regs_);						\
		mr_cache_put(mc, m_);						\
	} while (0)

/* the MR registers exactly pages [first, first + n) of the arena */
#define T_MR(mr, first, n)							\
	do {									\
		T_ASSERT((mr)->addr == pg(first));				\
		T_EQ((mr)->length, (size_t)(n) * ps);				\
	} while (0)

#define T_STATS(mc, h, m, ev, pages, n)						\
	do {									\
		struct mr_cache_stats st_;					\
										\
		mr_cache_get_stats(mc, &st_);					\
		T_EQ(st_.hits, h);						\
		T_EQ(st_.misses, m);						\
		T_EQ(st_.evictions, ev);					\
		T_EQ(st_.bytes, (size_t)(pages) * ps);				\
		T_EQ(st_.entries, n);						\
	} while (0)

/* what the cache counts is what is registered */
#define T_SAME(mc, r)								\
	do {									\
		struct mr_cache_stats st_;					\
										\
		mr_cache_get_stats(mc, &st_);					\
		T_EQ(st_.entries, (r)->nlive);					\
		T_EQ(st_.bytes, rec_bytes(r));					\
	} while (0)

/* ---- MR cache cases ---- */

/* max_bytes 0 (rdax_cfg_set_mr_cache(cfg, 0)): nothing stays registered */
static void cache_off(struct rec *r)
{
	struct mr_cache *mc = cache_new(r, 0);
	struct ibv_mr *a, *b;

	a = GET(mc, pg(0) + 100, 200);
	b = GET(mc, pg(0) + 100, 200);
	/* while in use it is shared, and stays */
	T_ASSERT(a == b);
	T_EQ(r->regs, 1);
	mr_cache_put(mc, a);
	T_EQ(r->nderegs, 0);
	mr_cache_put(mc, b);
	/* the last put deregisters it */
	T_EQ(r->nderegs, 1);
	T_EQ(r->nlive, 0);
	T_SAME(mc, r);
	a = GET(mc, pg(0) + 100, 200);
	T_EQ(r->regs, 2);
	mr_cache_put(mc, a);
	T_EQ(r->nlive, 0);
	T_STATS(mc, 1, 2, 0, 0, 0);
	mr_cache_free(&mc);
}

static void cache_hit_miss(struct rec *r)
{
	struct mr_cache *mc = cache_new(r, 1 << 20);
	struct ibv_mr *a, *b;

	/* a miss registers the request's pages, with the cache's access */
	a = GET(mc, pg(0) + 100, 200);
	T_EQ(r->regs, 1);
	T_MR(a, 0, 1);
	T_EQ(r->last_access, ACCESS);
	T_STATS(mc, 0, 1, 0, 1, 1);
	/* the same range, the whole page, its last byte: hits */
	HIT(mc, r, pg(0) + 100, 200, a);
	HIT(mc, r, pg(0), ps, a);
	HIT(mc, r, pg(1) - 1, 1, a);
	T_STATS(mc, 3, 1, 0, 1, 1);
	/* one byte over the page boundary: a miss, two pages */
	b = GET(mc, pg(1) - 1, 2);
	T_EQ(r->regs, 2);
	T_MR(b, 0, 2);
	T_ASSERT(b->lkey != a->lkey);
	T_STATS(mc, 3, 2, 0, 3, 2);
	/* idle after their puts, still registered */
	mr_cache_put(mc, a);
	mr_cache_put(mc, b);
	T_EQ(r->nderegs, 0);
	T_SAME(mc, r);
	mr_cache_free(&mc);
	T_ASSERT(mc == NULL);
	T_EQ(r->nderegs, 2);
}

/* adjacent, straddling and extending requests */
static void cache_ranges(struct rec *r)
{
	struct mr_cache *mc = cache_new(r, 1 << 20);
	struct ibv_mr *a, *b, *s, *e, *m;

	a = GET(mc, pg(0), 2 * ps);
	b = GET(mc, pg(2), 2 * ps);
	T_MR(a, 0, 2);
	T_MR(b, 2, 2);
	/* ranges are half-open: a's last page is a's, b's first is b's */
	HIT(mc, r, pg(1), ps, a);
	HIT(mc, r, pg(2), 1, b);
	HIT(mc, r, pg(2), 2 * ps, b);
	/* straddling a and b: neither covers it, a new MR, no merge */
	s = GET(mc, pg(1) + 10, ps);
	T_EQ(r->regs, 3);
	T_MR(s, 1, 2);
	/* extending a by a byte: a new MR over a and the next page */
	e = GET(mc, pg(0), 2 * ps + 1);
	T_EQ(r->regs, 4);
	T_MR(e, 0, 3);
	T_EQ(r->nderegs, 0);
	T_STATS(mc, 3, 4, 0, 9, 4);
	/* inside several entries: any of them, nothing new */
	m = GET(mc, pg(1) + 5, ps);
	T_ASSERT(m == s || m == e);
	T_EQ(r->regs, 4);
	mr_cache_put(mc, m);
	m = GET(mc, pg(0) + 5, 10);
	T_ASSERT(m == a || m == e);
	T_EQ(r->regs, 4);
	mr_cache_put(mc, m);
	T_STATS(mc, 5, 4, 0, 9, 4);
	mr_cache_put(mc, a);
	mr_cache_put(mc, b);
	mr_cache_put(mc, s);
	mr_cache_put(mc, e);
	T_SAME(mc, r);
	mr_cache_free(&mc);
}

/* a long registration is found past shorter ones that start later */
static void cache_scan(struct rec *r)
{
	struct mr_cache *mc = cache_new(r, 1 << 20);
	struct ibv_mr *big, *m[3];
	unsigned i;

	m[0] = GET(mc, pg(12), ps);
	m[1] = GET(mc, pg(14), 3 * ps);
	m[2] = GET(mc, pg(25), ps);
	big = GET(mc, pg(10), 20 * ps);
	T_EQ(r->regs, 4);
	HIT(mc, r, pg(26), ps, big);
	HIT(mc, r, pg(29) + ps - 1, 1, big);
	HIT(mc, r, pg(16), 2 * ps, big);
	HIT(mc, r, pg(25), ps, m[2]);
	HIT(mc, r, pg(14) + 1, 3 * ps - 1, m[1]);
	/* just past big's end */
	mr_cache_put(mc, GET(mc, pg(29) + ps - 1, 2));
	T_EQ(r->regs, 5);
	T_STATS(mc, 5, 5, 0, 27, 5);
	mr_cache_put(mc, big);
	for (i = 0; i < 3; i++)
		mr_cache_put(mc, m[i]);
	mr_cache_free(&mc);
}

static void cache_lru(struct rec *r)
{
	struct mr_cache *mc = cache_new(r, 4 * ps);
	unsigned id[8], i;
	struct ibv_mr *m;

	/* A B C D, one page each, idle; then A is used again */
	for (i = 0; i < 4; i++) {
		m = GET(mc, pg(2 * i), ps);
		id[i] = rec_id(r, m);
		mr_cache_put(mc, m);
	}
	T_STATS(mc, 0, 4, 0, 4, 4);
	mr_cache_put(mc, GET(mc, pg(0), ps));
	/* E does not fit: B, the least recently used, goes */
	m = GET(mc, pg(8), ps);
	id[4] = rec_id(r, m);
	mr_cache_put(mc, m);
	T_EQ(r->nderegs, 1);
	T_EQ(r->dereg_log[0], id[1]);
	T_ASSERT(rec_alive(r, id[0]));
	T_STATS(mc, 1, 5, 1, 4, 4);
	/* B again: a miss that evicts C */
	m = GET(mc, pg(2), ps);
	id[5] = rec_id(r, m);
	mr_cache_put(mc, m);
	T_EQ(r->nderegs, 2);
	T_EQ(r->dereg_log[1], id[2]);
	T_STATS(mc, 1, 6, 2, 4, 4);
	/* three pages: D, A, E go, in that order; B stays */
	m = GET(mc, pg(10), 3 * ps);
	T_EQ(r->nderegs, 5);
	T_EQ(r->dereg_log[2], id[3]);
	T_EQ(r->dereg_log[3], id[0]);
	T_EQ(r->dereg_log[4], id[4]);
	T_ASSERT(rec_alive(r, id[5]));
	T_STATS(mc, 1, 7, 5, 4, 2);
	mr_cache_put(mc, m);
	T_SAME(mc, r);
	mr_cache_free(&mc);
	T_EQ(r->nderegs, 7);
}

/* entries between get and put are never evicted */
static void cache_held(struct rec *r)
{
	struct mr_cache *mc = cache_new(r, 2 * ps);
	struct ibv_mr *a, *b, *c, *d, *e, *g, *h;
	unsigned ia, ib, ic, id, ie, ig;
	uint32_t bkey;

	a = GET(mc, pg(0), ps);
	b = GET(mc, pg(2), ps);
	ia = rec_id(r, a);
	ib = rec_id(r, b);
	bkey = b->lkey;
	/* over the budget with nothing idle: registered anyway */
	c = GET(mc, pg(4), ps);
	ic = rec_id(r, c);
	T_EQ(r->nderegs, 0);
	T_STATS(mc, 0, 3, 0, 3, 3);
	/* a idle: only a may go */
	mr_cache_put(mc, a);
	d = GET(mc, pg(6), ps);
	id = rec_id(r, d);
	T_EQ(r->nderegs, 1);
	T_EQ(r->dereg_log[0], ia);
	T_STATS(mc, 0, 4, 1, 3, 3);
	/* b and c are intact and still found */
	T_EQ(b->lkey, bkey);
	T_ASSERT(rec_alive(r, ib) && rec_alive(r, ic));
	HIT(mc, r, pg(2) + 1, 1, b);
	HIT(mc, r, pg(4), ps, c);
	mr_cache_put(mc, d);
	e = GET(mc, pg(8), ps);
	ie = rec_id(r, e);
	T_EQ(r->nderegs, 2);
	T_EQ(r->dereg_log[1], id);
	mr_cache_put(mc, e);
	/* larger than the whole budget: what is idle goes, then it is registered */
	g = GET(mc, pg(10), 4 * ps);
	ig = rec_id(r, g);
	T_EQ(r->nderegs, 3);
	T_EQ(r->dereg_log[2], ie);
	T_STATS(mc, 2, 6, 3, 6, 3);
	/* once nothing is held the next miss trims back to the budget, LRU first */
	mr_cache_put(mc, b);
	mr_cache_put(mc, c);
	mr_cache_put(mc, g);
	h = GET(mc, pg(20), ps);
	T_EQ(r->nderegs, 6);
	T_EQ(r->dereg_log[3], ib);
	T_EQ(r->dereg_log[4], ic);
	T_EQ(r->dereg_log[5], ig);
	T_STATS(mc, 2, 7, 6, 1, 1);
	mr_cache_put(mc, h);
	mr_cache_free(&mc);
}

/* mr_cache_invalidate: memory being freed */
static void cache_forget(struct rec *r)
{
	struct mr_cache *mc = cache_new(r, 1 << 20);
	struct ibv_mr *a, *b, *c, *c2, *d;
	unsigned ia, ib, ic, ic2, idd;

	a = GET(mc, pg(0), ps);
	b = GET(mc, pg(1), ps);
	c = GET(mc, pg(2), ps);
	ia = rec_id(r, a);
	ib = rec_id(r, b);
	ic = rec_id(r, c);
	mr_cache_put(mc, a);
	mr_cache_put(mc, b);
	mr_cache_put(mc, c);
	/* b's page: b goes at once; a and c only touch the range's edges */
	mr_cache_invalidate(mc, pg(1), ps);
	T_EQ(r->nderegs, 1);
	T_EQ(r->dereg_log[0], ib);
	T_ASSERT(rec_alive(r, ia) && rec_alive(r, ic));
	T_STATS(mc, 0, 3, 0, 2, 2);
	HIT(mc, r, pg(0), ps, a);
	T_ASSERT(GET(mc, pg(2), ps) == c);
	/* the range comes back as a miss */
	b = GET(mc, pg(1) + 7, 9);
	ib = rec_id(r, b);
	T_EQ(r->regs, 4);
	mr_cache_put(mc, b);
	/* c is in use: kept registered but no longer handed out */
	mr_cache_invalidate(mc, pg(2) + 100, 1);
	T_EQ(r->nderegs, 1);
	T_ASSERT(rec_alive(r, ic));
	c2 = GET(mc, pg(2), ps);
	ic2 = rec_id(r, c2);
	T_ASSERT(c2 != c);
	T_EQ(r->regs, 5);
	T_STATS(mc, 2, 5, 0, 4, 4);
	/* ... and deregistered on its last put */
	mr_cache_put(mc, c);
	T_EQ(r->nderegs, 2);
	T_EQ(r->dereg_log[1], ic);
	T_ASSERT(rec_alive(r, ic2));
	T_STATS(mc, 2, 5, 0, 3, 3);
	/* stale with two users */
	d = GET(mc, pg(4), 2 * ps);
	idd = rec_id(r, d);
	HIT(mc, r, pg(4), ps, d);
	T_ASSERT(GET(mc, pg(5), 1) == d);
	mr_cache_invalidate(mc, pg(5) + ps - 1, 1);
	HIT(mc, r, pg(0), ps, a);
	mr_cache_put(mc, d);
	T_ASSERT(rec_alive(r, idd));
	T_EQ(r->regs, 6);
	mr_cache_put(mc, d);
	T_ASSERT(!rec_alive(r, idd));
	/* a range over idle entries, a held one (c2) and a gap */
	mr_cache_invalidate(mc, pg(0) + 1, 5 * ps);
	T_ASSERT(!rec_alive(r, ia) && !rec_alive(r, ib) && rec_alive(r, ic2));
	mr_cache_put(mc, c2);
	T_ASSERT(!rec_alive(r, ic2));
	/* nothing registered there: nothing happens */
	mr_cache_invalidate(mc, pg(40), 8 * ps);
	T_EQ(r->nlive, 0);
	/* forgetting is not evicting */
	T_STATS(mc, 5, 6, 0, 0, 0);
	mr_cache_free(&mc);
}

/* a failed registration leaves the cache as it was, with a message */
static void cache_reg_errors(struct rec *r)
{
	/* pinning refusals get the memlock advice, the rest strerror */
	static const struct {
		int err;
		bool memlock;
	} cases[] = {
		{ -ENOMEM, true }, { -EAGAIN, true }, { -EPERM, true },
		{ -EFAULT, false }, { -EINVAL, false },
	};
	struct mr_cache *mc = cache_new(r, 1 << 20);
	struct ibv_mr *mr;
	char msg[512], want[128];
	size_t i;
	int ret;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		mr = NULL;
		msg[0] = 0;
		r->fail = cases[i].err;
		ret = mr_cache_get(mc, pg(3) + 1, ps, &mr, msg, sizeof(msg));
		T_EQ(ret, cases[i].err);
		T_ASSERT(mr == NULL);
		/* two pages asked: the request crosses a page boundary */
		T_EQ(r->last_len, 2 * ps);
		if (cases[i].memlock)
			snprintf(want, sizeof(want),
				 "cannot pin %zu KiB for RDMA: RLIMIT_MEMLOCK (ulimit -l) is ",
				 2 * ps / 1024);
		else
			snprintf(want, sizeof(want), "ibv_reg_mr of %zu bytes: %s", 2 * ps,
				 strerror(-cases[i].err));
		if (!strstr(msg, want)) {
			T_ASSERT(strstr(msg, want));
			printf("  got \"%s\"\n  want \"%s\"\n", msg, want);
		}
	}
	T_EQ(r->regs, 0);
	/* no room for a message */
	r->fail = -ENOMEM;
	T_EQ(mr_cache_get(mc, pg(3), ps, &mr, NULL, 0), -ENOMEM);
	T_STATS(mc, 0, 6, 0, 0, 0);
	/* and then it works */
	mr = GET(mc, pg(3), ps);
	T_MR(mr, 3, 1);
	mr_cache_put(mc, mr);
	T_STATS(mc, 0, 7, 0, 1, 1);
	mr_cache_free(&mc);
}

static void cache_stats_reset(struct rec *r)
{
	struct mr_cache *mc = cache_new(r, 2 * ps);
	struct ibv_mr *a;

	a = GET(mc, pg(0), ps);
	mr_cache_put(mc, GET(mc, pg(1), ps));
	HIT(mc, r, pg(0), 1, a);
	mr_cache_put(mc, GET(mc, pg(2), ps));
	T_STATS(mc, 1, 3, 1, 2, 2);
	/* counters go to zero, what is registered stays */
	mr_cache_reset_stats(mc);
	T_STATS(mc, 0, 0, 0, 2, 2);
	HIT(mc, r, pg(0), ps, a);
	T_STATS(mc, 1, 0, 0, 2, 2);
	mr_cache_put(mc, a);
	mr_cache_free(&mc);
}

/* free deregisters everything: idle, held and stale entries */
static void cache_free(struct rec *r)
{
	struct mr_cache *mc = cache_new(r, 1 << 20);

	mr_cache_put(mc, GET(mc, pg(0), ps));
	GET(mc, pg(2), 3 * ps);
	GET(mc, pg(8), ps);
	mr_cache_invalidate(mc, pg(8), ps);
	T_EQ(r->nlive, 3);
	mr_cache_free(&mc);
	T_ASSERT(mc == NULL);
	T_EQ(r->nlive, 0);
	T_EQ(r->nderegs, 3);
	/* a freed cache, and none at all */
	mr_cache_free(&mc);
	T_EQ(r->nderegs, 3);
}

/* empty and wrapping ranges; an MR the cache does not know */
static void cache_args(struct rec *r)
{
	struct mr_cache *mc = cache_new(r, 1 << 20);
	struct ibv_mr *a, *b, *c, *mr = NULL, other = { 0 };
	unsigned ib, ic;

	a = GET(mc, pg(0), 2 * ps);
	/* nothing to register, or a range past the end of memory */
	T_EQ(mr_cache_get(mc, pg(4), 0, &mr, NULL, 0), -EINVAL);
	T_EQ(mr_cache_get(mc, pg(1), SIZE_MAX, &mr, NULL, 0), -EINVAL);
	T_EQ(mr_cache_get(mc, pg(1), SIZE_MAX - ps, &mr, NULL, 0), -EINVAL);
	T_ASSERT(mr == NULL);
	T_EQ(r->regs, 1);
	T_STATS(mc, 0, 1, 0, 2, 1);
	/* an empty range forgets nothing, not even inside an entry */
	mr_cache_invalidate(mc, pg(1), 0);
	HIT(mc, r, pg(0), 2 * ps, a);
	/* forget from an address to the end of memory */
	b = GET(mc, pg(8), ps);
	c = GET(mc, pg(10), ps);
	ib = rec_id(r, b);
	ic = rec_id(r, c);
	mr_cache_put(mc, b);
	mr_cache_put(mc, c);
	mr_cache_invalidate(mc, pg(9), SIZE_MAX);
	T_ASSERT(rec_alive(r, ib));
	T_ASSERT(!rec_alive(r, ic));
	/* put of an MR it never handed out */
	mr_cache_put(mc, &other);
	T_EQ(r->nderegs, 1);
	mr_cache_put(mc, a);
	mr_cache_free(&mc);
}

/* Random gets, puts and forgets against a model of the contract. */
static void cache_random(struct rec *r)
{
	enum { HELD_MAX = 8, BUDGET = 16 };
	const unsigned nops = r->pd ? 600 : 5000;
	struct mr_cache *mc = cache_new(r, BUDGET * ps);
	struct rec_mr held[HELD_MAX];
	struct mr_cache_stats st;
	bool *stale = calloc(nops + 1, sizeof(*stale));
	unsigned op, i, j, nheld = 0;
	int fails = t_failures;

	if (!stale)
		exit(1);
	rng = 42;
	for (op = 0; op < nops; op++) {
		unsigned k = rnd(100), regs = r->regs;
		uint8_t *a = pg(rnd(48)) + rnd((uint32_t)ps);
		size_t len = 1 + rnd(5 * (uint32_t)ps);
		uintptr_t s, e;
		bool hit = false;
		struct ibv_mr *mr;
		unsigned id;

		/* half the time in or around something registered */
		if (r->nlive && rnd(2)) {
			mr = r->live[rnd(r->nlive)].mr;
			a = (uint8_t *)mr->addr + rnd((uint32_t)mr->length);
			len = (size_t)((uint8_t *)mr->addr + mr->length - a);
			len = 1 + rnd((uint32_t)(rnd(4) ? len : len + ps));
		}
		s = (uintptr_t)a & ~(ps - 1);
		e = ((uintptr_t)a + len + ps - 1) & ~(ps - 1);
		if (k < 50 && nheld < HELD_MAX) {
			/* a hit exactly when a fresh registration covers the range */
			for (i = 0; i < r->nlive; i++)
				if (!stale[r->live[i].id] && covers(r->live[i].mr, a, len))
					hit = true;
			mr = GET(mc, a, len);
			id = rec_id(r, mr);
			T_ASSERT(id && !stale[id]);
			T_EQ(r->regs, regs + !hit);
			if (!hit) {
				T_ASSERT((uintptr_t)mr->addr == s);
				T_EQ(mr->length, e - s);
			}
			held[nheld++] = (struct rec_mr){ mr, id };
			/* over budget only when nothing idle is left */
			if (!hit && rec_bytes(r) > BUDGET * ps) {
				for (i = 0; i < r->nlive; i++) {
					for (j = 0; j < nheld && held[j].id != r->live[i].id; j++)
						;
					T_ASSERT(j < nheld);
				}
			}
		} else if (k < 85 && nheld) {
			i = rnd(nheld);
			id = held[i].id;
			mr_cache_put(mc, held[i].mr);
			held[i] = held[--nheld];
			for (j = 0; j < nheld && held[j].id != id; j++)
				;
			T_EQ(rec_alive(r, id), !stale[id] || j < nheld);
		} else {
			unsigned gone[REC_MAX], ngone = 0;

			/* an empty range forgets nothing */
			len = rnd(4 * (uint32_t)ps);
			for (i = 0; len && i < r->nlive; i++) {
				struct ibv_mr *m = r->live[i].mr;

				if ((uintptr_t)m->addr >= (uintptr_t)a + len ||
				    (uintptr_t)m->addr + m->length <= (uintptr_t)a)
					continue;
				for (j = 0; j < nheld && held[j].id != r->live[i].id; j++)
					;
				if (j < nheld)
					stale[r->live[i].id] = true;
				else
					gone[ngone++] = r->live[i].id;
			}
			mr_cache_invalidate(mc, a, len);
			for (i = 0; i < ngone; i++)
				T_ASSERT(!rec_alive(r, gone[i]));
		}
		for (i = 0; i < nheld; i++)
			T_ASSERT(rec_alive(r, held[i].id));
		T_SAME(mc, r);
		if (t_failures > fails) {
			printf("  stopped at op %u\n", op);
			break;
		}
	}
	for (i = 0; i < nheld; i++)
		mr_cache_put(mc, held[i].mr);
	mr_cache_get_stats(mc, &st);
	for (i = 1, j = 0; i <= r->regs; i++)
		j += stale[i];
	printf("  %u ops: %llu hits, %llu misses, %llu evictions, %u forgotten in use\n", op,
	       (unsigned long long)st.hits, (unsigned long long)st.misses,
	       (unsigned long long)st.evictions, j);
	mr_cache_free(&mc);
	free(stale);
}

/* ---- bounce pool helpers ---- */

static struct mem_pool *pool_new(struct rec *r, size_t size, size_t unit)
{
	struct mem_pool *p = NULL;
	char msg[256] = "";
	int ret = mem_pool_new_ops(&rec_ops, r, size, unit, ACCESS, &p, msg, sizeof(msg));

	T_EQ(ret, 0);
	if (ret || !p) {
		printf("  mem_pool_new: %s\n", msg);
		exit(1);
	}
	return p;
}

/* The pool's MR: the only one registered in the pool cases. */
static struct ibv_mr *pool_mr(const struct rec *r)
{
	T_EQ(r->nlive, 1);
	if (r->nlive != 1)
		exit(1);
	return r->live[0].mr;
}

/*
 * Segments of a successful get: inside the pool and its MR, whole units
 * but for the last one's length, len bytes in all; then written.
 */
#define T_SEGS(p, mr, len, segs, n) check_segs(p, mr, len, segs, n, __LINE__)

static void check_segs(struct mem_pool *p, const struct ibv_mr *mr, size_t len,
		       const struct mem_seg *segs, int n, int line)
{
	uint8_t *base = mem_pool_base(p);
	size_t unit = ps, sum = 0, units = mem_pool_size(p) / unit;
	bool ok = n > 0;
	int i;

	for (i = 0; ok && i < n; i++) {
		const struct mem_seg *s = &segs[i];
		size_t cap = (size_t)s->count * unit;

		ok = s->count && s->first + s->count <= units &&
		     (uint8_t *)s->addr == base + (size_t)s->first * unit &&
		     s->lkey == mr->lkey && covers(mr, s->addr, s->len) &&
		     (i == n - 1 ? s->len > cap - unit && s->len <= cap : s->len == cap);
		if (ok)
			memset(s->addr, 0x5a, s->len);
		sum += s->len;
	}
	t_checks++;
	if (!ok || sum != len) {
		t_fail(__FILE__, line, "segments");
		for (i = 0; i < n; i++)
			printf("  seg %d: +%td len %u lkey %#x first %u count %u\n", i,
			       (uint8_t *)segs[i].addr - base, segs[i].len, segs[i].lkey,
			       segs[i].first, segs[i].count);
	}
}

/* one segment of units [first, first + count) */
#define T_SEG(s, f, c)								\
	do {									\
		T_EQ((s).first, f);						\
		T_EQ((s).count, c);						\
	} while (0)

/* ---- bounce pool cases ---- */

static void pool_create(struct rec *r)
{
	struct mem_pool *p;
	char msg[512], want[64];
	uint8_t *base;

	/* the size rounds up to whole units, registered once */
	p = pool_new(r, 5 * ps + 1, ps);
	base = mem_pool_base(p);
	T_EQ(mem_pool_size(p), 6 * ps);
	T_EQ(mem_pool_free_bytes(p), 6 * ps);
	T_EQ((uintptr_t)base % ps, 0);
	T_EQ(r->regs, 1);
	T_ASSERT(r->last_addr == base);
	T_EQ(r->last_len, 6 * ps);
	T_EQ(r->last_access, ACCESS);
	T_ASSERT(covers(pool_mr(r), base, 6 * ps));
	memset(base, 1, mem_pool_size(p));
	mem_pool_free(&p);
	T_ASSERT(p == NULL);
	T_EQ(r->nderegs, 1);
	mem_pool_free(&p);

	p = pool_new(r, 3 * ps, 2 * ps);
	T_EQ(mem_pool_size(p), 4 * ps);
	mem_pool_free(&p);

	/* a unit must be whole pages */
	T_EQ(mem_pool_new_ops(&rec_ops, r, 4 * ps, 0, ACCESS, &p, NULL, 0), -EINVAL);
	T_EQ(mem_pool_new_ops(&rec_ops, r, 4 * ps, ps / 2, ACCESS, &p, NULL, 0), -EINVAL);
	T_EQ(mem_pool_new_ops(&rec_ops, r, 4 * ps, ps + 8, ACCESS, &p, NULL, 0), -EINVAL);
	T_EQ(r->regs, 2);
	T_ASSERT(p == NULL);

	/* registration refused: the memlock message, nothing left behind */
	r->fail = -ENOMEM;
	msg[0] = 0;
	T_EQ(mem_pool_new_ops(&rec_ops, r, 6 * ps, ps, ACCESS, &p, msg, sizeof(msg)), -ENOMEM);
	snprintf(want, sizeof(want), "cannot pin %zu KiB", 6 * ps / 1024);
	T_ASSERT(strstr(msg, want) && strstr(msg, "RLIMIT_MEMLOCK"));
	r->fail = -EFAULT;
	T_EQ(mem_pool_new_ops(&rec_ops, r, 6 * ps, ps, ACCESS, &p, msg, sizeof(msg)), -EFAULT);
	snprintf(want, sizeof(want), "ibv_reg_mr of %zu bytes: Bad address", 6 * ps);
	T_ASSERT(strstr(msg, want));
	T_ASSERT(p == NULL);
	T_EQ(r->nlive, 0);
}

static void pool_contiguous(struct rec *r)
{
	struct mem_pool *p = pool_new(r, 8 * ps, ps);
	struct ibv_mr *mr = pool_mr(r);
	struct mem_seg g[4][1], s[2];
	int ret;

	/* one unit at least, units in order from a fresh pool */
	T_EQ(mem_pool_get(p, 1, g[0], 1), 1);
	T_SEGS(p, mr, 1, g[0], 1);
	T_SEG(g[0][0], 0, 1);
	T_EQ(mem_pool_free_bytes(p), 7 * ps);
	T_EQ(mem_pool_get(p, ps + 1, g[1], 1), 1);
	T_SEGS(p, mr, ps + 1, g[1], 1);
	T_SEG(g[1][0], 1, 2);
	T_EQ(mem_pool_get(p, 3 * ps, g[2], 1), 1);
	T_SEGS(p, mr, 3 * ps, g[2], 1);
	T_SEG(g[2][0], 3, 3);
	T_EQ(mem_pool_free_bytes(p), 2 * ps);
	T_EQ(mem_pool_get(p, 2 * ps, g[3], 1), 1);
	T_SEG(g[3][0], 6, 2);
	T_EQ(mem_pool_free_bytes(p), 0);
	/* out of units */
	T_EQ(mem_pool_get(p, 1, s, 2), -EAGAIN);
	/* the two units given back are the ones handed out next */
	mem_pool_put(p, g[1], 1);
	T_EQ(mem_pool_free_bytes(p), 2 * ps);
	T_EQ(mem_pool_get(p, 3 * ps, s, 2), -EAGAIN);
	ret = mem_pool_get(p, 2 * ps, s, 2);
	T_EQ(ret, 1);
	T_SEG(s[0], 1, 2);
	T_EQ(mem_pool_get(p, 1, s, 2), -EAGAIN);
	mem_pool_put(p, g[0], 1);
	mem_pool_put(p, s, 1);
	mem_pool_put(p, g[2], 1);
	mem_pool_put(p, g[3], 1);
	T_EQ(mem_pool_free_bytes(p), 8 * ps);
	/* the whole pool in one piece */
	T_EQ(mem_pool_get(p, 8 * ps, s, 1), 1);
	T_SEGS(p, mr, 8 * ps, s, 1);
	T_SEG(s[0], 0, 8);
	mem_pool_put(p, s, 1);
	mem_pool_free(&p);
}

static void pool_fragmented(struct rec *r)
{
	struct mem_pool *p = pool_new(r, 8 * ps, ps);
	struct ibv_mr *mr = pool_mr(r);
	struct mem_seg one[8][1], s[4];
	int i;

	for (i = 0; i < 8; i++)
		T_EQ(mem_pool_get(p, ps, one[i], 1), 1);
	/* holes at units 1, 3 and 6 */
	mem_pool_put(p, one[1], 1);
	mem_pool_put(p, one[3], 1);
	mem_pool_put(p, one[6], 1);
	T_EQ(mem_pool_free_bytes(p), 3 * ps);
	/* too few segments allowed: -EAGAIN although the bytes are free */
	T_EQ(mem_pool_get(p, 3 * ps, s, 2), -EAGAIN);
	T_EQ(mem_pool_get(p, 2 * ps, s, 1), -EAGAIN);
	T_EQ(mem_pool_free_bytes(p), 3 * ps);
	/* more than is free */
	T_EQ(mem_pool_get(p, 3 * ps + 1, s, 4), -EAGAIN);
	T_EQ(mem_pool_free_bytes(p), 3 * ps);
	/* three holes, in unit order, the last one partly used */
	T_EQ(mem_pool_get(p, 3 * ps - 100, s, 3), 3);
	T_SEGS(p, mr, 3 * ps - 100, s, 3);
	T_SEG(s[0], 1, 1);
	T_SEG(s[1], 3, 1);
	T_SEG(s[2], 6, 1);
	T_EQ(s[2].len, ps - 100);
	T_EQ(mem_pool_free_bytes(p), 0);
	mem_pool_put(p, s, 3);
	/* holes 1, 3-4, 6: a run that fits is taken whole */
	mem_pool_put(p, one[4], 1);
	T_EQ(mem_pool_get(p, 2 * ps, s, 4), 1);
	T_SEG(s[0], 3, 2);
	mem_pool_put(p, s, 1);
	/* no run fits: gathered from unit 0 up */
	T_EQ(mem_pool_get(p, 3 * ps, s, 2), 2);
	T_SEGS(p, mr, 3 * ps, s, 2);
	T_SEG(s[0], 1, 1);
	T_SEG(s[1], 3, 2);
	T_EQ(mem_pool_free_bytes(p), ps);
	mem_pool_put(p, s, 2);
	for (i = 0; i < 8; i++)
		if (i != 1 && i != 3 && i != 4 && i != 6)
			mem_pool_put(p, one[i], 1);
	T_EQ(mem_pool_free_bytes(p), 8 * ps);
	mem_pool_free(&p);
}

/* arguments a pool can never satisfy are errors, not -EAGAIN */
static void pool_edges(struct rec *r)
{
	struct mem_pool *p = pool_new(r, 4 * ps, ps);
	struct mem_seg s[3];

	s[0].first = 0xdead;
	T_EQ(mem_pool_get(p, 0, s, 2), -EINVAL);
	T_EQ(mem_pool_get(p, 1, s, 0), -EINVAL);
	T_EQ(mem_pool_get(p, 1, s, -1), -EINVAL);
	T_EQ(s[0].first, 0xdead);
	/* more than the whole pool: waiting for puts will not help */
	T_EQ(mem_pool_get(p, 4 * ps + 1, s, 3), -ENOMEM);
	T_EQ(mem_pool_get(p, SIZE_MAX, s, 3), -ENOMEM);
	T_EQ(mem_pool_get(p, ((size_t)1 << 32) + 1, s, 3), -ENOMEM);
	T_EQ(mem_pool_free_bytes(p), 4 * ps);
	/* the whole pool while a unit is out: that one is worth waiting for */
	T_EQ(mem_pool_get(p, 1, s, 1), 1);
	T_EQ(mem_pool_get(p, 4 * ps, &s[1], 2), -EAGAIN);
	mem_pool_put(p, s, 1);
	T_EQ(mem_pool_get(p, 4 * ps, s, 1), 1);
	T_SEG(s[0], 0, 4);
	mem_pool_put(p, s, 1);
	mem_pool_free(&p);
	/* an empty pool */
	T_EQ(mem_pool_new_ops(&rec_ops, r, 0, ps, ACCESS, &p, NULL, 0), -EINVAL);
	T_EQ(r->regs, 1);
}

/* next fit: past the last unit the search goes on at unit 0 */
static void pool_wrap(struct rec *r)
{
	struct mem_pool *p = pool_new(r, 8 * ps, ps);
	struct mem_seg a, b, c, d;

	T_EQ(mem_pool_get(p, 5 * ps, &a, 1), 1);
	T_EQ(mem_pool_get(p, ps, &b, 1), 1);
	T_SEG(b, 5, 1);
	/* free: 0-4 and 6-7; the search starts at 6 */
	mem_pool_put(p, &a, 1);
	T_EQ(mem_pool_get(p, 4 * ps, &c, 1), 1);
	T_SEG(c, 0, 4);
	/* and goes on after it, leaving no hole at 0 */
	T_EQ(mem_pool_get(p, ps, &d, 1), 1);
	T_SEG(d, 4, 1);
	mem_pool_put(p, &b, 1);
	mem_pool_put(p, &c, 1);
	mem_pool_put(p, &d, 1);
	mem_pool_free(&p);
}

/* Set the segments' units in the model, each from !v; returns how many. */
static unsigned model_mark(bool *used, unsigned units, const struct mem_seg *s, int n, bool v)
{
	unsigned u, count = 0;
	int j;

	for (j = 0; j < n; j++) {
		for (u = s[j].first; u < s[j].first + s[j].count && u < units; u++) {
			T_ASSERT(used[u] != v);
			used[u] = v;
		}
		count += s[j].count;
	}
	return count;
}

/* Random gets and puts against a model of the units. */
static void pool_random(struct rec *r)
{
	enum { UNITS = 16, MAXSEG = 4 };
	const unsigned nops = 20000;
	struct mem_pool *p = pool_new(r, UNITS * ps, ps);
	struct ibv_mr *mr = pool_mr(r);
	struct {
		struct mem_seg s[MAXSEG + 1];
		int n;
	} out[UNITS];
	bool used[UNITS] = { false };
	unsigned op, nout = 0, i, nfree = UNITS;
	int fails = t_failures;

	rng = 7;
	for (op = 0; op < nops && t_failures == fails; op++) {
		if (rnd(2) && nout < UNITS) {
			size_t len = 1 + rnd(6 * (uint32_t)ps);
			unsigned want = (unsigned)((len + ps - 1) / ps);
			unsigned runs = 0, run = 0, longest = 0;
			int max = 1 + (int)rnd(MAXSEG), ret;
			struct mem_seg *s = out[nout].s;

			for (i = 0; i < UNITS; i++) {
				run = used[i] ? 0 : run + 1;
				runs += run == 1;
				if (run > longest)
					longest = run;
			}
			s[max].first = 0xdead;
			ret = mem_pool_get(p, len, s, max);
			T_EQ(s[max].first, 0xdead);
			if (ret < 0) {
				T_EQ(ret, -EAGAIN);
				/* short, or more runs needed than allowed */
				T_ASSERT(want > nfree || (longest < want && runs > (unsigned)max));
				T_EQ(mem_pool_free_bytes(p), nfree * ps);
				continue;
			}
			T_ASSERT(ret <= max);
			/* contiguous whenever a run fits */
			if (longest >= want)
				T_EQ(ret, 1);
			T_SEGS(p, mr, len, s, ret);
			nfree -= model_mark(used, UNITS, s, ret, true);
			out[nout++].n = ret;
		} else if (nout) {
			i = rnd(nout);
			mem_pool_put(p, out[i].s, out[i].n);
			nfree += model_mark(used, UNITS, out[i].s, out[i].n, false);
			out[i] = out[--nout];
		}
		T_EQ(mem_pool_free_bytes(p), nfree * ps);
	}
	if (t_failures > fails)
		printf("  stopped at op %u\n", op);
	while (nout--)
		mem_pool_put(p, out[nout].s, out[nout].n);
	T_EQ(mem_pool_free_bytes(p), UNITS * ps);
	mem_pool_free(&p);
}

/* ---- running the cases ---- */

static const struct {
	const char *name;
	void (*fn)(struct rec *r);
} cases[] = {
	{ "MR cache: hits and misses", cache_hit_miss },
	{ "MR cache: off (0 bytes)", cache_off },
	{ "MR cache: adjacent, straddling, extending", cache_ranges },
	{ "MR cache: a long entry behind short ones", cache_scan },
	{ "MR cache: LRU eviction", cache_lru },
	{ "MR cache: held entries are not evicted", cache_held },
	{ "MR cache: forget", cache_forget },
	{ "MR cache: registration errors", cache_reg_errors },
	{ "MR cache: stats reset", cache_stats_reset },
	{ "MR cache: free", cache_free },
	{ "MR cache: empty and wrapping ranges", cache_args },
	{ "MR cache: random against a model", cache_random },
	{ "bounce pool: create", pool_create },
	{ "bounce pool: contiguous", pool_contiguous },
	{ "bounce pool: fragmented", pool_fragmented },
	{ "bounce pool: edges", pool_edges },
	{ "bounce pool: wrapping to unit 0", pool_wrap },
	{ "bounce pool: random against a model", pool_random },
};

static void run_cases(const char *mode, struct ibv_pd *pd)
{
	static char name[128];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rec r = { .pd = pd };

		snprintf(name, sizeof(name), "%s: %s", mode, cases[i].name);
		t_section(name);
		cases[i].fn(&r);
		/* every case frees what it made */
		T_EQ(r.nlive, 0);
		T_EQ(r.bad_deregs, 0);
		T_EQ(r.fail, 0);
	}
}

static void memlock_text(void)
{
	struct rlimit old, rl;
	char msg[512], small[16];

	t_section("memlock message");
	if (getrlimit(RLIMIT_MEMLOCK, &old))
		exit(1);
	rl = old;
	rl.rlim_cur = 64 << 10;
	if (old.rlim_max == RLIM_INFINITY || old.rlim_max >= rl.rlim_cur) {
		T_EQ(setrlimit(RLIMIT_MEMLOCK, &rl), 0);
		mem_memlock_text(3 << 20, msg, sizeof(msg));
		T_ASSERT(strstr(msg, "cannot pin 3072 KiB for RDMA"));
		T_ASSERT(strstr(msg, "RLIMIT_MEMLOCK (ulimit -l) is 64 KiB;"));
		T_ASSERT(strstr(msg, "'ulimit -l unlimited'"));
		T_ASSERT(strstr(msg, "LimitMEMLOCK=infinity"));
		T_ASSERT(strstr(msg, "/etc/security/limits.conf"));
	}
	if (old.rlim_max == RLIM_INFINITY) {
		rl.rlim_cur = RLIM_INFINITY;
		T_EQ(setrlimit(RLIMIT_MEMLOCK, &rl), 0);
		mem_memlock_text(1 << 20, msg, sizeof(msg));
		T_ASSERT(strstr(msg, "is unlimited;"));
	}
	T_EQ(setrlimit(RLIMIT_MEMLOCK, &old), 0);
	/* truncated, still a string; no buffer at all */
	mem_memlock_text(1 << 20, small, sizeof(small));
	T_EQ(strlen(small), sizeof(small) - 1);
	small[0] = 'x';
	mem_memlock_text(1 << 20, small, 0);
	T_EQ(small[0], 'x');
	mem_memlock_text(1 << 20, NULL, 64);
}

/* The default registrar on a real PD, through the public wrappers. */
static void verbs_wrappers(struct ibv_pd *pd)
{
	struct mr_cache *mc;
	struct mem_pool *p;
	struct mem_seg s[2];
	struct ibv_mr *mr = NULL, *m2, *m3;
	char msg[256] = "";
	int ret;

	t_section("real-verbs: mem_reg, mr_cache_new, mem_pool_new");
	ret = mem_reg(pd, pg(0), 2 * ps, ACCESS, &mr, msg, sizeof(msg));
	T_EQ(ret, 0);
	if (ret) {
		printf("  mem_reg: %s\n", msg);
		return;
	}
	T_ASSERT(mr->pd == pd && mr->addr == pg(0) && mr->length == 2 * ps);
	T_EQ(mem_dereg(mr), 0);
	T_EQ(mem_dereg(NULL), 0);

	ret = mr_cache_new(pd, 4 * ps, ACCESS, &mc);
	T_EQ(ret, 0);
	if (ret)
		return;
	m2 = GET(mc, pg(1) + 3, ps);
	T_ASSERT(m2->pd == pd && m2->addr == pg(1) && m2->length == 2 * ps);
	m3 = GET(mc, pg(1) + 5, 10);
	T_ASSERT(m3 == m2);
	T_EQ(m3->lkey, m2->lkey);
	mr_cache_put(mc, m2);
	mr_cache_put(mc, m3);
	mr_cache_invalidate(mc, pg(0), 4 * ps);
	T_STATS(mc, 1, 1, 0, 0, 0);
	mr_cache_free(&mc);

	ret = mem_pool_new(pd, 4 * ps, ps, ACCESS, &p, msg, sizeof(msg));
	T_EQ(ret, 0);
	if (ret) {
		printf("  mem_pool_new: %s\n", msg);
		return;
	}
	T_EQ(mem_pool_get(p, ps + 1, s, 2), 1);
	T_ASSERT(s[0].addr == mem_pool_base(p));
	T_EQ(mem_pool_get(p, 2 * ps, &s[1], 1), 1);
	T_EQ(s[1].lkey, s[0].lkey);
	mem_pool_put(p, s, 2);
	T_EQ(mem_pool_free_bytes(p), 4 * ps);
	mem_pool_free(&p);
}

static void real_verbs(void)
{
	struct ibv_device **devs;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	int n = 0;

	errno = 0;
	devs = ibv_get_device_list(&n);
	if (!devs || !n) {
		printf("SKIP-CASE: real-verbs: no RDMA device (ibv_get_device_list: %s)\n",
		       devs ? "none" : strerror(errno));
		fflush(stdout);
		if (devs)
			ibv_free_device_list(devs);
		return;
	}
	t_section("real-verbs: open the device");
	printf("  %s\n", ibv_get_device_name(devs[0]));
	ctx = ibv_open_device(devs[0]);
	T_ASSERT(ctx != NULL);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	T_ASSERT(pd != NULL);
	if (pd) {
		run_cases("real-verbs", pd);
		verbs_wrappers(pd);
		T_EQ(ibv_dealloc_pd(pd), 0);
	}
	if (ctx)
		ibv_close_device(ctx);
	ibv_free_device_list(devs);
}

int main(void)
{
	/* the log shows how far a crash got */
	setvbuf(stdout, NULL, _IOLBF, 0);
	ps = (size_t)sysconf(_SC_PAGESIZE);
	arena = mmap(NULL, ARENA_PAGES * ps, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (arena == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memlock_text();
	run_cases("fake", NULL);
	real_verbs();
	munmap(arena, ARENA_PAGES * ps);
	return t_done();
}
