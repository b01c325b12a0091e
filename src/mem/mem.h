/* SPDX-License-Identifier: MIT */
/*
 * Registered memory: pinning with ibv_reg_mr and RLIMIT_MEMLOCK
 * accounting, an MR cache for buffers the caller did not register
 * (interval map + LRU), and a registered bounce pool carved into units.
 */
#ifndef RDAX_MEM_H
#define RDAX_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ibv_context;
struct ibv_pd;
struct ibv_mr;

/* IBV_ACCESS_LOCAL_WRITE, for callers that include no verbs header */
#define MEM_ACCESS_LOCAL_WRITE 1

/*
 * How memory gets registered: reg returns 0 or a negative errno and an
 * MR whose addr, length, lkey and rkey are set; dereg undoes it.
 * mem_verbs_ops is ibv_reg_mr/ibv_dereg_mr with the PD as ctx; the
 * unit tests substitute a registrar that records every call.
 */
struct mem_reg_ops {
	int (*reg)(void *ctx, void *addr, size_t len, int access, struct ibv_mr **out);
	int (*dereg)(void *ctx, struct ibv_mr *mr);
};

extern const struct mem_reg_ops mem_verbs_ops;

/*
 * Register [addr, addr+len) on pd. On a pinning failure the message
 * says how much was asked, what RLIMIT_MEMLOCK allows and how to raise
 * it (msg may be NULL).
 */
int mem_reg(struct ibv_pd *pd, void *addr, size_t len, int access,
	    struct ibv_mr **out, char *msg, size_t msglen);
int mem_dereg(struct ibv_mr *mr);
/* An implicit on-demand-paging MR over the whole address space. */
int mem_reg_odp(struct ibv_pd *pd, struct ibv_mr **out);
uint32_t mem_mr_lkey(const struct ibv_mr *mr);
/* Describe RLIMIT_MEMLOCK for an error message. */
void mem_memlock_text(size_t want, char *msg, size_t msglen);

/* ---- MR cache ---- */

struct mr_cache;

struct mr_cache_stats {
	uint64_t hits;
	uint64_t misses;
	uint64_t evictions;
	uint64_t bytes;			/* registered now */
	uint32_t entries;
};

int mr_cache_new(struct ibv_pd *pd, size_t max_bytes, int access,
		 struct mr_cache **out);
int mr_cache_new_ops(const struct mem_reg_ops *ops, void *ctx, size_t max_bytes,
		     int access, struct mr_cache **out);
/*
 * An MR covering [addr, addr+len), registered (page-aligned) on a miss.
 * The entry stays pinned in the cache until mr_cache_put(). -EINVAL for
 * len 0 or a range that wraps around.
 */
int mr_cache_get(struct mr_cache *mc, void *addr, size_t len,
		 struct ibv_mr **mr, char *msg, size_t msglen);
/* Done with it; with max_bytes 0 (no cache) the last put deregisters it. */
void mr_cache_put(struct mr_cache *mc, struct ibv_mr *mr);
/*
 * Forget registrations overlapping a range (memory being freed); one in
 * use is deregistered on its last put. An empty range forgets nothing.
 */
void mr_cache_invalidate(struct mr_cache *mc, void *addr, size_t len);
void mr_cache_get_stats(const struct mr_cache *mc, struct mr_cache_stats *st);
/* Zero the counters (hits, misses, evictions); what is registered stays. */
void mr_cache_reset_stats(struct mr_cache *mc);
void mr_cache_free(struct mr_cache **mc);

/* ---- bounce pool ---- */

struct mem_pool;

struct mem_seg {
	void *addr;
	uint32_t len;
	uint32_t lkey;
	uint32_t first;			/* unit index */
	uint32_t count;			/* units */
};

/* size bytes (rounded to units), registered once with access. */
int mem_pool_new(struct ibv_pd *pd, size_t size, size_t unit, int access,
		 struct mem_pool **out, char *msg, size_t msglen);
int mem_pool_new_ops(const struct mem_reg_ops *ops, void *ctx, size_t size,
		     size_t unit, int access, struct mem_pool **out,
		     char *msg, size_t msglen);
/*
 * Take len bytes, contiguous when possible, else up to max segments.
 * Returns the segment count; -EAGAIN when the pool is short for now
 * (free bytes are not enough: the segments may not fit in max), -ENOMEM
 * when len is more than the whole pool, -EINVAL for len 0 or max < 1.
 */
int mem_pool_get(struct mem_pool *p, size_t len, struct mem_seg *segs, int max);
void mem_pool_put(struct mem_pool *p, const struct mem_seg *segs, int n);
size_t mem_pool_size(const struct mem_pool *p);
void *mem_pool_base(const struct mem_pool *p);
size_t mem_pool_free_bytes(const struct mem_pool *p);
void mem_pool_free(struct mem_pool **p);

/* ---- the registration ladder ---- */

/*
 * Where the NIC may touch file memory, best first: direct (the mapping
 * is a plain pinned MR: device DAX), odp (an implicit on-demand-paging
 * MR covers mappings as they come), bounce (a registered DRAM pool and a
 * copy). auto: the best allowed; none: no RDMA device to use.
 */
enum mem_rung { MEM_RUNG_AUTO, MEM_RUNG_DIRECT, MEM_RUNG_ODP, MEM_RUNG_BOUNCE,
		MEM_RUNG_NONE };

const char *mem_rung_name(enum mem_rung r);

/* What one kind of memory asks of one device. */
struct mem_ladder_in {
	enum mem_rung want;		/* auto, or the rung asked for */
	bool pmem;			/* file memory the NIC could reach (DAX) */
	const char *kind;		/* "device-DAX", "DAX file": for messages */
	void *probe;			/* memory like it, to try a plain MR on */
	size_t probe_len;
	const char *where;		/* for the message when there is no probe */
};

/*
 * The best rung the device allows for that memory, or -EINVAL when the
 * rung asked for is not possible; why says what was found either way.
 */
int mem_ladder_rung(struct ibv_context *v, const struct mem_ladder_in *in,
		    enum mem_rung *out, char *why, size_t len);

#endif
