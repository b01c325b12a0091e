// SPDX-License-Identifier: MIT
/* Memory registration, the MR cache and the bounce pool. */
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "mem/mem.h"

static size_t page_size(void)
{
	static size_t ps;

	if (!ps)
		ps = (size_t)sysconf(_SC_PAGESIZE);
	return ps;
}

void mem_memlock_text(size_t want, char *msg, size_t msglen)
{
	struct rlimit rl;
	char cur[32];

	if (!msg || !msglen)
		return;
	if (getrlimit(RLIMIT_MEMLOCK, &rl) || rl.rlim_cur == RLIM_INFINITY)
		snprintf(cur, sizeof(cur), "unlimited");
	else
		snprintf(cur, sizeof(cur), "%llu KiB", (unsigned long long)rl.rlim_cur / 1024);
	snprintf(msg, msglen,
		 "cannot pin %zu KiB for RDMA: RLIMIT_MEMLOCK (ulimit -l) is %s; "
		 "raise it with 'ulimit -l unlimited', LimitMEMLOCK=infinity in a "
		 "systemd unit, or a memlock line in /etc/security/limits.conf",
		 want / 1024, cur);
}

static int verbs_reg(void *pd, void *addr, size_t len, int access, struct ibv_mr **out)
{
	struct ibv_mr *mr;

	errno = 0;
	mr = ibv_reg_mr(pd, addr, len, access);
	if (!mr)
		return errno ? -errno : -ENOMEM;
	*out = mr;
	return 0;
}

static int verbs_dereg(void *pd, struct ibv_mr *mr)
{
	return -ibv_dereg_mr(mr);
}

const struct mem_reg_ops mem_verbs_ops = {
	.reg = verbs_reg,
	.dereg = verbs_dereg,
};

/* Register with ops; a failure is explained in msg. */
static int reg_msg(const struct mem_reg_ops *ops, void *ctx, void *addr, size_t len,
		   int access, struct ibv_mr **out, char *msg, size_t msglen)
{
	int ret = ops->reg(ctx, addr, len, access, out);

	if (!ret)
		return 0;
	if (ret == -ENOMEM || ret == -EAGAIN || ret == -EPERM)
		mem_memlock_text(len, msg, msglen);
	else if (msg && msglen)
		snprintf(msg, msglen, "ibv_reg_mr of %zu bytes: %s", len, strerror(-ret));
	return ret;
}

int mem_reg(struct ibv_pd *pd, void *addr, size_t len, int access,
	    struct ibv_mr **out, char *msg, size_t msglen)
{
	return reg_msg(&mem_verbs_ops, pd, addr, len, access, out, msg, msglen);
}

int mem_dereg(struct ibv_mr *mr)
{
	return mr ? -ibv_dereg_mr(mr) : 0;
}

/* ---- MR cache: sorted array of entries, LRU by use tick ---- */

struct mr_entry {
	uintptr_t start;
	uintptr_t end;
	struct ibv_mr *mr;
	uint64_t last_use;
	int refs;
	bool stale;			/* invalidated while in use */
};

struct mr_cache {
	const struct mem_reg_ops *ops;
	void *ctx;
	int access;
	size_t max_bytes;
	struct mr_entry *e;
	uint32_t n, cap;
	uintptr_t max_len;		/* longest entry: bounds the search */
	uint64_t tick;
	struct mr_cache_stats st;
};

int mr_cache_new_ops(const struct mem_reg_ops *ops, void *ctx, size_t max_bytes,
		     int access, struct mr_cache **out)
{
	struct mr_cache *mc = calloc(1, sizeof(*mc));

	if (!mc)
		return -ENOMEM;
	mc->ops = ops;
	mc->ctx = ctx;
	mc->access = access;
	mc->max_bytes = max_bytes;
	*out = mc;
	return 0;
}

int mr_cache_new(struct ibv_pd *pd, size_t max_bytes, int access,
		 struct mr_cache **out)
{
	return mr_cache_new_ops(&mem_verbs_ops, pd, max_bytes, access, out);
}

/* First index whose start is > a. */
static uint32_t upper(const struct mr_cache *mc, uintptr_t a)
{
	uint32_t lo = 0, hi = mc->n;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (mc->e[mid].start <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void remove_at(struct mr_cache *mc, uint32_t i)
{
	mc->ops->dereg(mc->ctx, mc->e[i].mr);
	mc->st.bytes -= mc->e[i].end - mc->e[i].start;
	memmove(&mc->e[i], &mc->e[i + 1], sizeof(*mc->e) * (mc->n - i - 1));
	mc->n--;
}

static void evict(struct mr_cache *mc, size_t need)
{
	while (mc->st.bytes + need > mc->max_bytes) {
		uint32_t i, victim = UINT32_MAX;

		for (i = 0; i < mc->n; i++)
			if (!mc->e[i].refs &&
			    (victim == UINT32_MAX || mc->e[i].last_use < mc->e[victim].last_use))
				victim = i;
		if (victim == UINT32_MAX)
			return;
		remove_at(mc, victim);
		mc->st.evictions++;
	}
}

int mr_cache_get(struct mr_cache *mc, void *addr, size_t len,
		 struct ibv_mr **mr, char *msg, size_t msglen)
{
	uintptr_t a = (uintptr_t)addr, end = a + len;
	uintptr_t ps = page_size();
	struct ibv_mr *m;
	uint32_t i, j;
	int ret;

	/* nothing to register, or a range that wraps once rounded to pages */
	if (!len || end < a || end > UINTPTR_MAX - ps + 1)
		return -EINVAL;
	/* a covering entry starts at or before a, within max_len */
	for (i = upper(mc, a); i-- > 0;) {
		struct mr_entry *e = &mc->e[i];

		if (a - e->start > mc->max_len)
			break;
		if (!e->stale && e->start <= a && e->end >= end) {
			e->refs++;
			e->last_use = ++mc->tick;
			mc->st.hits++;
			*mr = e->mr;
			return 0;
		}
	}
	mc->st.misses++;
	a &= ~(ps - 1);
	end = (end + ps - 1) & ~(ps - 1);
	evict(mc, end - a);
	ret = reg_msg(mc->ops, mc->ctx, (void *)a, end - a, mc->access, &m, msg, msglen);
	if (ret)
		return ret;
	if (mc->n == mc->cap) {
		uint32_t cap = mc->cap ? mc->cap * 2 : 64;
		struct mr_entry *ne = realloc(mc->e, sizeof(*ne) * cap);

		if (!ne) {
			mc->ops->dereg(mc->ctx, m);
			return -ENOMEM;
		}
		mc->e = ne;
		mc->cap = cap;
	}
	j = upper(mc, a);
	memmove(&mc->e[j + 1], &mc->e[j], sizeof(*mc->e) * (mc->n - j));
	mc->e[j] = (struct mr_entry){ .start = a, .end = end, .mr = m,
				      .last_use = ++mc->tick, .refs = 1 };
	mc->n++;
	mc->st.bytes += end - a;
	if (end - a > mc->max_len)
		mc->max_len = end - a;
	*mr = m;
	return 0;
}

void mr_cache_put(struct mr_cache *mc, struct ibv_mr *mr)
{
	uint32_t i;

	for (i = 0; i < mc->n; i++) {
		if (mc->e[i].mr != mr)
			continue;
		/* stale, or no cache (max_bytes 0): deregistered now */
		if (--mc->e[i].refs == 0 && (mc->e[i].stale || !mc->max_bytes))
			remove_at(mc, i);
		return;
	}
}

void mr_cache_invalidate(struct mr_cache *mc, void *addr, size_t len)
{
	uintptr_t a = (uintptr_t)addr, end = a + len;
	uint32_t i = 0;

	if (!len)
		return;
	/* a len past the end of memory means up to there */
	if (end < a)
		end = UINTPTR_MAX;
	while (i < mc->n) {
		struct mr_entry *e = &mc->e[i];

		if (e->start < end && e->end > a) {
			if (e->refs) {
				e->stale = true;
			} else {
				remove_at(mc, i);
				continue;
			}
		}
		i++;
	}
}

void mr_cache_get_stats(const struct mr_cache *mc, struct mr_cache_stats *st)
{
	*st = mc->st;
	st->entries = mc->n;
}

void mr_cache_reset_stats(struct mr_cache *mc)
{
	mc->st.hits = 0;
	mc->st.misses = 0;
	mc->st.evictions = 0;
}

void mr_cache_free(struct mr_cache **mcp)
{
	struct mr_cache *mc = *mcp;
	uint32_t i;

	if (!mc)
		return;
	for (i = 0; i < mc->n; i++)
		mc->ops->dereg(mc->ctx, mc->e[i].mr);
	free(mc->e);
	free(mc);
	*mcp = NULL;
}

/* ---- bounce pool: first-fit runs over a unit bitmap ---- */

struct mem_pool {
	uint8_t *mem;
	size_t size;
	size_t unit;
	uint32_t units;
	uint32_t free_units;
	uint32_t hint;
	uint64_t *map;			/* 1 = in use */
	struct ibv_mr *mr;
	const struct mem_reg_ops *ops;
	void *ctx;
};

static bool used(const struct mem_pool *p, uint32_t i)
{
	return p->map[i / 64] >> (i % 64) & 1;
}

static void mark(struct mem_pool *p, uint32_t first, uint32_t count, bool v)
{
	uint32_t i;

	for (i = first; i < first + count; i++) {
		if (v)
			p->map[i / 64] |= 1ull << (i % 64);
		else
			p->map[i / 64] &= ~(1ull << (i % 64));
	}
}

int mem_pool_new_ops(const struct mem_reg_ops *ops, void *ctx, size_t size,
		     size_t unit, int access, struct mem_pool **out,
		     char *msg, size_t msglen)
{
	struct mem_pool *p;
	int ret;

	if (!size || !unit || unit % page_size())
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->ops = ops;
	p->ctx = ctx;
	p->unit = unit;
	p->units = (uint32_t)((size + unit - 1) / unit);
	p->size = (size_t)p->units * unit;
	p->free_units = p->units;
	p->map = calloc((p->units + 63) / 64, sizeof(uint64_t));
	p->mem = mmap(NULL, p->size, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (!p->map || p->mem == MAP_FAILED) {
		ret = -ENOMEM;
		goto out_free;
	}
	ret = reg_msg(ops, ctx, p->mem, p->size, access, &p->mr, msg, msglen);
	if (ret)
		goto out_unmap;
	*out = p;
	return 0;
out_unmap:
	munmap(p->mem, p->size);
out_free:
	free(p->map);
	free(p);
	return ret;
}

int mem_pool_new(struct ibv_pd *pd, size_t size, size_t unit, int access,
		 struct mem_pool **out, char *msg, size_t msglen)
{
	return mem_pool_new_ops(&mem_verbs_ops, pd, size, unit, access, out, msg, msglen);
}

/* Longest free run starting at or after from, up to want units. */
static uint32_t run_at(const struct mem_pool *p, uint32_t i, uint32_t want)
{
	uint32_t n = 0;

	while (i + n < p->units && n < want && !used(p, i + n))
		n++;
	return n;
}

int mem_pool_get(struct mem_pool *p, size_t len, struct mem_seg *segs, int max)
{
	uint32_t want, i, k, n;
	size_t left = len;
	int nseg = 0;

	if (!len || max < 1)
		return -EINVAL;
	/* never enough, however much comes back (and a segment length is 32 bits) */
	if (len > p->size || len > UINT32_MAX)
		return -ENOMEM;
	want = (uint32_t)((len + p->unit - 1) / p->unit);
	if (want > p->free_units)
		return -EAGAIN;
	/* next fit: the first run of want units from the hint on, wrapping */
	for (k = 0, i = p->hint; k < p->units; k += n, i = (i + n) % p->units) {
		if (used(p, i)) {
			n = 1;
			continue;
		}
		n = run_at(p, i, want);
		if (n == want)
			break;
	}
	if (k < p->units) {
		mark(p, i, want, true);
		p->free_units -= want;
		p->hint = (i + want) % p->units;
		segs[0] = (struct mem_seg){ p->mem + (size_t)i * p->unit,
					    (uint32_t)len, p->mr->lkey, i, want };
		return 1;
	}
	/* fragmented: gather runs */
	for (i = 0; i < p->units && left; i++) {
		if (used(p, i))
			continue;
		if (nseg == max)
			goto out_undo;
		n = run_at(p, i, (uint32_t)((left + p->unit - 1) / p->unit));
		mark(p, i, n, true);
		segs[nseg] = (struct mem_seg){ p->mem + (size_t)i * p->unit,
					       (uint32_t)(left < (size_t)n * p->unit ?
							  left : (size_t)n * p->unit),
					       p->mr->lkey, i, n };
		left -= segs[nseg].len;
		p->free_units -= n;
		nseg++;
		i += n - 1;
	}
	if (!left)
		return nseg;
out_undo:
	mem_pool_put(p, segs, nseg);
	return -EAGAIN;
}

void mem_pool_put(struct mem_pool *p, const struct mem_seg *segs, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		mark(p, segs[i].first, segs[i].count, false);
		p->free_units += segs[i].count;
	}
}

size_t mem_pool_size(const struct mem_pool *p)
{
	return p->size;
}

void *mem_pool_base(const struct mem_pool *p)
{
	return p->mem;
}

size_t mem_pool_free_bytes(const struct mem_pool *p)
{
	return (size_t)p->free_units * p->unit;
}

void mem_pool_free(struct mem_pool **pp)
{
	struct mem_pool *p = *pp;

	if (!p)
		return;
	p->ops->dereg(p->ctx, p->mr);
	munmap(p->mem, p->size);
	free(p->map);
	free(p);
	*pp = NULL;
}

int mem_reg_odp(struct ibv_pd *pd, struct ibv_mr **out)
{
	errno = 0;
	*out = ibv_reg_mr(pd, NULL, SIZE_MAX, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND);
	return *out ? 0 : errno ? -errno : -ENOMEM;
}

uint32_t mem_mr_lkey(const struct ibv_mr *mr)
{
	return mr->lkey;
}

_Static_assert(MEM_ACCESS_LOCAL_WRITE == IBV_ACCESS_LOCAL_WRITE, "MEM_ACCESS_LOCAL_WRITE");

/* ---- the registration ladder ---- */

static const char *const rung_names[] = {
	[MEM_RUNG_AUTO] = "auto",
	[MEM_RUNG_DIRECT] = "direct",
	[MEM_RUNG_ODP] = "odp",
	[MEM_RUNG_BOUNCE] = "bounce",
	[MEM_RUNG_NONE] = "none",
};

const char *mem_rung_name(enum mem_rung r)
{
	return (unsigned int)r < sizeof(rung_names) / sizeof(rung_names[0]) ? rung_names[r]
									     : "auto";
}

/* Implicit ODP with RC RDMA Read and Write: what the odp rung needs. */
static bool dev_odp(struct ibv_context *v, char *why, size_t len)
{
	struct ibv_device_attr_ex a;
	uint32_t need = IBV_ODP_SUPPORT_READ | IBV_ODP_SUPPORT_WRITE;

	memset(&a, 0, sizeof(a));
	if (ibv_query_device_ex(v, NULL, &a)) {
		snprintf(why, len, "%s: ibv_query_device_ex: %s",
			 ibv_get_device_name(v->device), strerror(errno));
		return false;
	}
	if (!(a.odp_caps.general_caps & IBV_ODP_SUPPORT) ||
	    !(a.odp_caps.general_caps & IBV_ODP_SUPPORT_IMPLICIT) ||
	    (a.odp_caps.per_transport_caps.rc_odp_caps & need) != need) {
		snprintf(why, len, "%s has no implicit on-demand paging for RC RDMA Read/Write "
			 "(odp general caps 0x%llx, rc 0x%x)", ibv_get_device_name(v->device),
			 (unsigned long long)a.odp_caps.general_caps,
			 a.odp_caps.per_transport_caps.rc_odp_caps);
		return false;
	}
	snprintf(why, len, "%s supports implicit ODP", ibv_get_device_name(v->device));
	return true;
}

/* Can the NIC take the memory as a plain (pinned) MR? */
static bool dev_direct(struct ibv_context *v, const struct mem_ladder_in *in, char *why,
		       size_t len)
{
	struct ibv_mr *mr = NULL;
	struct ibv_pd *pd;
	int e = 0;

	if (!in->pmem) {
		snprintf(why, len, "posix store: data passes through the registered bounce pool");
		return false;
	}
	pd = ibv_alloc_pd(v);
	if (!pd) {
		snprintf(why, len, "%s: ibv_alloc_pd: %s", ibv_get_device_name(v->device),
			 strerror(errno));
		return false;
	}
	if (in->probe) {
		mr = ibv_reg_mr(pd, in->probe, in->probe_len, IBV_ACCESS_LOCAL_WRITE);
		e = errno;
	}
	if (mr) {
		snprintf(why, len, "ibv_reg_mr of the %s mapping works on %s", in->kind,
			 ibv_get_device_name(v->device));
		ibv_dereg_mr(mr);
	} else if (in->probe) {
		snprintf(why, len, "ibv_reg_mr of the DAX mapping on %s: %s%s",
			 ibv_get_device_name(v->device), strerror(e),
			 e == EOPNOTSUPP ? " (the kernel refuses long-term pins of fsdax pages)" : "");
	} else {
		snprintf(why, len, "cannot map a probe file in %.200s", in->where);
	}
	ibv_dealloc_pd(pd);
	return mr != NULL;
}

int mem_ladder_rung(struct ibv_context *v, const struct mem_ladder_in *in,
		    enum mem_rung *out, char *why, size_t len)
{
	char dwhy[320], owhy[320];
	bool direct, odp;

	if (in->want == MEM_RUNG_BOUNCE) {
		*out = MEM_RUNG_BOUNCE;
		snprintf(why, len, "rdma registration = bounce");
		return 0;
	}
	direct = dev_direct(v, in, dwhy, sizeof(dwhy));
	odp = in->pmem && dev_odp(v, owhy, sizeof(owhy));
	if (!in->pmem)
		snprintf(owhy, sizeof(owhy), "posix store");
	switch (in->want) {
	case MEM_RUNG_DIRECT:
		if (!direct) {
			snprintf(why, len, "rdma registration = direct: %s", dwhy);
			return -EINVAL;
		}
		break;
	case MEM_RUNG_ODP:
		if (!odp) {
			snprintf(why, len, "rdma registration = odp: %s", owhy);
			return -EINVAL;
		}
		*out = MEM_RUNG_ODP;
		snprintf(why, len, "%s", owhy);
		return 0;
	default:
		break;
	}
	if (direct) {
		*out = MEM_RUNG_DIRECT;
		snprintf(why, len, "%s", dwhy);
	} else if (odp) {
		*out = MEM_RUNG_ODP;
		snprintf(why, len, "%s; %s", dwhy, owhy);
	} else {
		*out = MEM_RUNG_BOUNCE;
		snprintf(why, len, "%s%s%s", dwhy, in->pmem ? "; " : "", in->pmem ? owhy : "");
	}
	return 0;
}
