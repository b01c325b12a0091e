// SPDX-License-Identifier: MIT
/*
 * DAX store on the host: no pmem here, so files live on an ordinary file
 * system with libpmem2's documented test switch PMEM2_FORCE_GRANULARITY
 * forcing cache-line persistence (CLWB/CLFLUSHOPT + fence on page-cache
 * memory). Exercises growth, the mapped/unmapped boundary, page-unaligned
 * tails, truncation, sparse files, allocation and concurrent users, and
 * a file opened read-only first: mapped read-only, made writable by the
 * first writer, and mapped by a user who may only read it.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "store/dax.h"
#include "t.h"

static char dir[] = "/tmp/rdax-dax-XXXXXX";

static int dirfd_;

static int mkfile(const char *name)
{
	int fd = openat(dirfd_, name, O_RDWR | O_CREAT | O_TRUNC, 0644);

	T_REQUIRE(fd >= 0);
	return fd;
}

static void fill(uint8_t *p, size_t n, uint64_t seed)
{
	size_t i;

	for (i = 0; i < n; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		p[i] = (uint8_t)(seed >> 56);
	}
}

static ssize_t wr(struct dax_file *f, const void *b, size_t n, uint64_t off)
{
	struct iovec v = { (void *)b, n };

	return dax_pwritev(f, &v, 1, off);
}

static ssize_t rd(struct dax_file *f, void *b, size_t n, uint64_t off)
{
	struct iovec v = { b, n };

	return dax_preadv(f, &v, 1, off);
}

static void probe(void)
{
	char why[256];
	int ret;

	t_section("probe");
	unsetenv("PMEM2_FORCE_GRANULARITY");
	ret = dax_probe(dirfd_, why, sizeof(why));
	printf("  unforced: %d (%s)\n", ret, why);
	/* /tmp is not DAX on a CI host; on a DAX mount this is 0 */
	T_ASSERT(ret == -EOPNOTSUPP || ret == 0);
	if (ret == -EOPNOTSUPP)
		T_ASSERT(strstr(why, "DAX") != NULL);
	setenv("PMEM2_FORCE_GRANULARITY", "CACHE_LINE", 1);
	ret = dax_probe(dirfd_, why, sizeof(why));
	printf("  forced: %d (%s)\n", ret, why);
	T_EQ(ret, 0);
	T_ASSERT(strstr(why, "cache line") != NULL);
}

/* sequential growth from empty: mapped part grows, data intact */
static void growth(void)
{
	const size_t chunk = 256 << 10, total = 24 << 20;
	uint8_t *buf = malloc(total), *back = malloc(total);
	struct dax_stats st;
	struct dax_file *f;
	char why[256];
	size_t off;
	int fd;

	t_section("growth");
	fd = mkfile("grow.bin");
	T_EQ(dax_open(fd, &f, why, sizeof(why)), 0);
	fill(buf, total, 1);
	for (off = 0; off < total; off += chunk)
		T_EQ(wr(f, buf + off, chunk, off), (long long)chunk);
	dax_get_stats(f, &st);
	printf("  mapped %llu of %zu in %d pieces; %llu bytes via mapping, %llu via pwritev2\n",
	       (unsigned long long)st.mapped, total, st.maps,
	       (unsigned long long)st.mapped_bytes_written,
	       (unsigned long long)st.tail_bytes_written);
	T_ASSERT(st.mapped >= total / 2);	/* geometric steps: at least half */
	T_ASSERT(st.maps >= 2 && st.maps < 16);
	T_EQ(dax_size(f), (long long)total);
	/* overwrite everything: now mostly through the mapping */
	fill(buf, total, 2);
	T_EQ(wr(f, buf, total, 0), (long long)total);
	dax_get_stats(f, &st);
	T_ASSERT(st.mapped_bytes_written >= total / 2);
	/* one read spanning mapped part and tail */
	memset(back, 0, total);
	T_EQ(rd(f, back, total, 0), (long long)total);
	T_MEMEQ(back, buf, total);
	/* what the kernel sees through its own fd is the same */
	memset(back, 0, total);
	T_EQ(pread(fd, back, total, 0), (long long)total);
	T_ASSERT(!memcmp(back, buf, total));
	/* reads stop at EOF */
	T_EQ(rd(f, back, 4096, total - 100), 100);
	T_EQ(rd(f, back, 4096, total + 5), 0);
	dax_close(&f);
	T_ASSERT(f == NULL);
	/* a fresh open maps the whole file at once */
	T_EQ(dax_open(fd, &f, why, sizeof(why)), 0);
	dax_get_stats(f, &st);
	T_EQ(st.mapped, (long long)total);
	T_EQ(st.maps, 1);
	dax_close(&f);
	close(fd);
	free(buf);
	free(back);
}

/* page-unaligned sizes: the tail beyond the last page goes through the fd */
static void unaligned(void)
{
	uint8_t buf[3 << 20], back[3 << 20];
	struct dax_stats st;
	struct dax_file *f;
	char why[256];
	int fd;

	t_section("unaligned tail");
	fd = mkfile("tail.bin");
	fill(buf, sizeof(buf), 3);
	T_EQ(pwrite(fd, buf, (2 << 20) + 1234, 0), (2 << 20) + 1234);
	T_EQ(dax_open(fd, &f, why, sizeof(why)), 0);
	dax_get_stats(f, &st);
	T_EQ(st.mapped, 2 << 20);
	/* a write straddling the mapped end and EOF */
	T_EQ(wr(f, buf + 100, 8192, (2 << 20) - 4096), 8192);
	memcpy(back, buf, sizeof(back));
	memcpy(back + (2 << 20) - 4096, buf + 100, 8192);
	memset(buf, 0, sizeof(buf));
	T_EQ(rd(f, buf, sizeof(buf), 0), (2 << 20) + 4096);
	T_MEMEQ(buf, back, (2 << 20) + 4096);
	T_EQ(dax_size(f), (2 << 20) + 4096);
	dax_close(&f);
	close(fd);
}

static void truncation(void)
{
	uint8_t *buf = malloc(8 << 20), *back = malloc(8 << 20);
	struct dax_stats st;
	struct dax_file *f;
	char why[256];
	int fd;

	t_section("truncate and sparse");
	fd = mkfile("trunc.bin");
	fill(buf, 8 << 20, 4);
	T_EQ(pwrite(fd, buf, 8 << 20, 0), 8 << 20);
	T_EQ(dax_open(fd, &f, why, sizeof(why)), 0);
	/* shrink below the mapping, unaligned: no access faults past EOF */
	T_EQ(dax_truncate(f, (3 << 20) + 77), 0);
	dax_get_stats(f, &st);
	T_ASSERT(st.mapped <= (3u << 20));
	T_EQ(dax_size(f), (3 << 20) + 77);
	T_EQ(rd(f, back, 8 << 20, 0), (3 << 20) + 77);
	T_MEMEQ(back, buf, (3 << 20) + 77);
	/* writes to the old (now unmapped) range regrow the file */
	T_EQ(wr(f, buf + (5 << 20), 1 << 20, 5 << 20), 1 << 20);
	T_EQ(dax_size(f), 6 << 20);
	T_EQ(rd(f, back, 1 << 20, 5 << 20), 1 << 20);
	T_MEMEQ(back, buf + (5 << 20), 1 << 20);
	/* the gap between old EOF and the write reads as zeros */
	T_EQ(rd(f, back, 4096, 4 << 20), 4096);
	memset(buf, 0, 4096);
	T_MEMEQ(back, buf, 4096);
	/* grow by truncate: a sparse extension, then a far sparse write */
	T_EQ(dax_truncate(f, 64 << 20), 0);
	T_EQ(dax_size(f), 64 << 20);
	T_EQ(wr(f, "far", 3, (1ull << 30) + 5), 3);
	T_EQ(dax_size(f), (1 << 30) + 8);
	T_EQ(rd(f, back, 8, (1ull << 30)), 8);
	T_MEMEQ(back, "\0\0\0\0\0far", 8);
	T_EQ(rd(f, back, 4096, 40 << 20), 4096);
	T_MEMEQ(back, buf, 4096);
	dax_get_stats(f, &st);
	printf("  after sparse growth: mapped %llu in %d pieces\n",
	       (unsigned long long)st.mapped, st.maps);
	/* allocate never shrinks */
	T_EQ(dax_allocate(f, 4096), 0);
	T_EQ(dax_size(f), (1 << 30) + 8);
	T_EQ(dax_truncate(f, 0), 0);
	dax_get_stats(f, &st);
	T_EQ(st.mapped, 0);
	T_EQ(st.maps, 0);
	T_EQ(rd(f, back, 4096, 0), 0);
	T_EQ(dax_allocate(f, 5 << 20), 0);
	T_EQ(dax_size(f), 5 << 20);
	dax_get_stats(f, &st);
	T_EQ(st.mapped, 5 << 20);	/* allocated space gets mapped */
	T_ASSERT(!dax_is_device(f));
	/* a window held across a truncate: retired, regrowth waits for it */
	{
		uint8_t *w = dax_window(f, 4096, 8192, true);

		T_REQUIRE(w != NULL);
		T_ASSERT(dax_window(f, 5 << 20, 1, false) == NULL);	/* beyond the mapping */
		memset(w, 0x5a, 8192);
		dax_persist(f, w, 8192);
		T_EQ(rd(f, back, 8192, 4096), 8192);
		memset(buf, 0x5a, 8192);
		T_MEMEQ(back, buf, 8192);
		T_EQ(dax_truncate(f, 0), 0);
		T_EQ(dax_allocate(f, 4 << 20), 0);
		dax_get_stats(f, &st);
		T_EQ(st.mapped, 0);		/* the old piece still holds the range */
		T_EQ(rd(f, back, 4096, 4096), 4096);	/* served from the fd */
		dax_window_put(f);
		T_EQ(wr(f, buf, 8192, 4 << 20), 8192);	/* a tail write regrows */
		dax_get_stats(f, &st);
		T_ASSERT(st.mapped >= (4u << 20));
		memset(buf, 0, 4096);
		T_EQ(rd(f, back, 4096, 4096), 4096);
		T_MEMEQ(back, buf, 4096);
	}
	dax_close(&f);
	close(fd);
	free(buf);
	free(back);
}

/* a reader first, then a writer: read-only mapping, then writable */
static void upgrade(void)
{
	uint8_t *buf = malloc(4 << 20), *back = malloc(4 << 20), *w;
	struct dax_stats st;
	struct dax_file *f;
	char why[256];
	int fd, ro, rw;

	t_section("read-only first, then a writer");
	fd = mkfile("up.bin");
	fill(buf, 4 << 20, 9);
	T_EQ(pwrite(fd, buf, 4 << 20, 0), 4 << 20);
	close(fd);
	ro = openat(dirfd_, "up.bin", O_RDONLY);
	T_ASSERT(ro >= 0);
	T_EQ(dax_open(ro, &f, why, sizeof(why)), 0);
	T_ASSERT(!dax_writable(f));
	dax_get_stats(f, &st);
	T_ASSERT(!st.map_writable);
	T_EQ(st.mapped, 4 << 20);
	T_EQ(rd(f, back, 4 << 20, 0), 4 << 20);
	T_MEMEQ(back, buf, 4 << 20);
	/* nothing may write through a reader's descriptor */
	T_EQ(wr(f, "x", 1, 0), -EBADF);
	T_EQ(dax_truncate(f, 0), -EBADF);
	T_EQ(dax_allocate(f, 8 << 20), -EBADF);
	T_ASSERT(dax_window(f, 0, 4096, true) == NULL);
	w = dax_window(f, 0, 4096, false);
	T_ASSERT(w != NULL);
	if (w)
		T_MEMEQ(w, buf, 4096);
	/* a read-only descriptor upgrades nothing */
	T_EQ(dax_upgrade(f, ro), 0);
	T_ASSERT(!dax_writable(f));
	/* the writer: writes work at once, the mapping waits for the window */
	rw = openat(dirfd_, "up.bin", O_RDWR);
	T_ASSERT(rw >= 0);
	T_EQ(dax_upgrade(f, rw), 0);
	close(rw);			/* the store keeps its own */
	T_ASSERT(dax_writable(f));
	dax_get_stats(f, &st);
	T_ASSERT(!st.map_writable);
	memset(buf, 0xa5, 8192);
	T_EQ(wr(f, buf, 8192, 0), 8192);
	dax_get_stats(f, &st);
	T_EQ(st.mapped_bytes_written, 0);	/* through the descriptor */
	T_EQ(rd(f, back, 4 << 20, 0), 4 << 20);
	T_MEMEQ(back, buf, 4 << 20);
	if (w)
		T_MEMEQ(w, buf, 4096);		/* the read-only window sees it */
	dax_window_put(f);
	dax_get_stats(f, &st);
	T_ASSERT(st.map_writable);
	T_EQ(st.mapped, 4 << 20);
	memset(buf + 65536, 0x3c, 65536);
	T_EQ(wr(f, buf + 65536, 65536, 65536), 65536);
	dax_get_stats(f, &st);
	T_EQ(st.mapped_bytes_written, 65536);	/* now through the mapping */
	T_ASSERT(dax_window(f, 0, 4096, true) != NULL);
	dax_window_put(f);
	T_EQ(pread(ro, back, 4 << 20, 0), 4 << 20);
	T_MEMEQ(back, buf, 4 << 20);
	/* a second writer changes nothing */
	rw = openat(dirfd_, "up.bin", O_RDWR);
	T_EQ(dax_upgrade(f, rw), 0);
	close(rw);
	T_EQ(dax_truncate(f, 1 << 20), 0);
	T_EQ(dax_size(f), 1 << 20);
	dax_close(&f);
	close(ro);
	free(buf);
	free(back);
}

/*
 * A user who may only read a file maps it: a thread acting as nobody
 * (fsuid, as rdaxd's workers act as users) opens root's 0644 file
 * read-only; the store must not need more.
 */
static void *as_reader(void *arg)
{
	struct dax_file *f = NULL;
	char why[256];
	int *ret = arg, fd;

	ret[0] = ret[1] = -1;
	if (syscall(SYS_setfsuid, 65534) < 0 || syscall(SYS_setfsuid, -1) != 65534)
		return NULL;
	fd = openat(dirfd_, "reader.bin", O_RDWR);
	ret[0] = fd < 0 ? -errno : 0;	/* the kernel refuses writing */
	if (fd >= 0)
		close(fd);
	fd = openat(dirfd_, "reader.bin", O_RDONLY);
	if (fd < 0)
		return NULL;
	ret[1] = dax_open(fd, &f, why, sizeof(why));
	if (ret[1])
		printf("  dax_open as nobody: %s\n", why);
	dax_close(&f);
	close(fd);
	return NULL;
}

static void reader_only(void)
{
	pthread_t th;
	int ret[2], fd;

	t_section("a user who may only read");
	if (geteuid()) {
		t_skip_case("read-only user", "switching fsuid needs root");
		return;
	}
	fd = mkfile("reader.bin");
	T_EQ(ftruncate(fd, 2 << 20), 0);
	T_EQ(fchmod(fd, 0644), 0);
	close(fd);
	T_EQ(fchmod(dirfd_, 0755), 0);
	pthread_create(&th, NULL, as_reader, ret);
	pthread_join(th, NULL);
	T_EQ(ret[0], -EACCES);
	T_EQ(ret[1], 0);
	unlinkat(dirfd_, "reader.bin", 0);
}

struct worker {
	struct dax_file *f;
	int idx;
	int errors;
};

/* each thread owns a 1 MiB stripe; they grow the file together */
static void *stripe_worker(void *arg)
{
	struct worker *w = arg;
	uint8_t buf[64 << 10], back[64 << 10];
	int round, i;

	for (round = 0; round < 8; round++) {
		for (i = 0; i < 16; i++) {
			uint64_t off = ((uint64_t)round * 4 + (uint64_t)w->idx) * (1 << 20) +
				       (uint64_t)i * sizeof(buf);

			fill(buf, sizeof(buf), off);
			if (wr(w->f, buf, sizeof(buf), off) != (ssize_t)sizeof(buf) ||
			    rd(w->f, back, sizeof(back), off) != (ssize_t)sizeof(back) ||
			    memcmp(buf, back, sizeof(buf)))
				w->errors++;
		}
	}
	return NULL;
}

static void concurrent(void)
{
	struct worker w[4];
	pthread_t th[4];
	struct dax_stats st;
	struct dax_file *f;
	uint8_t buf[64 << 10], back[64 << 10];
	char why[256];
	uint64_t off;
	int fd, i, bad = 0;

	t_section("four threads growing one file");
	fd = mkfile("conc.bin");
	T_EQ(dax_open(fd, &f, why, sizeof(why)), 0);
	for (i = 0; i < 4; i++) {
		w[i] = (struct worker){ .f = f, .idx = i };
		pthread_create(&th[i], NULL, stripe_worker, &w[i]);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		T_EQ(w[i].errors, 0);
	}
	T_EQ(dax_size(f), 32 << 20);
	for (off = 0; off < (32u << 20); off += sizeof(buf)) {
		fill(buf, sizeof(buf), off);
		if (rd(f, back, sizeof(back), off) != (ssize_t)sizeof(back) ||
		    memcmp(buf, back, sizeof(buf)))
			bad++;
	}
	T_EQ(bad, 0);
	dax_get_stats(f, &st);
	printf("  mapped %llu in %d pieces\n", (unsigned long long)st.mapped, st.maps);
	dax_close(&f);
	close(fd);
}

/*
 * Truncate and extend while other threads copy through the mapping and
 * take windows: nothing may fault, and a byte read is the pattern written
 * at its offset or zero (cut off, then extended again).
 */
#define TW_BIG (16u << 20)
#define TW_SMALL ((1u << 20) + 123)
#define TW_BLOCK (64u << 10)

struct tw {
	struct dax_file *f;
	atomic_bool stop;
	atomic_int bad, ios, windows;
};

static uint8_t tw_byte(uint64_t off)
{
	return (uint8_t)(off * 2654435761u >> 24) | 1;	/* never zero */
}

static void *tw_io(void *arg)
{
	static _Thread_local uint8_t buf[TW_BLOCK];
	struct tw *t = arg;
	uint64_t seed = (uint64_t)(uintptr_t)&seed, off, i;
	ssize_t n;

	while (!atomic_load(&t->stop)) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		off = (seed >> 33) % (TW_BIG / TW_BLOCK) * TW_BLOCK;
		if (seed & 1) {
			for (i = 0; i < TW_BLOCK; i++)
				buf[i] = tw_byte(off + i);
			if (wr(t->f, buf, TW_BLOCK, off) != TW_BLOCK)
				atomic_fetch_add(&t->bad, 1);
		} else {
			n = rd(t->f, buf, TW_BLOCK, off);
			for (i = 0; n > 0 && i < (uint64_t)n; i++)
				if (buf[i] && buf[i] != tw_byte(off + i)) {
					atomic_fetch_add(&t->bad, 1);
					break;
				}
		}
		if (dax_window(t->f, off, TW_BLOCK, seed & 2)) {
			atomic_fetch_add(&t->windows, 1);
			dax_window_put(t->f);
		}
		atomic_fetch_add(&t->ios, 1);
	}
	return NULL;
}

static void truncate_while_io(void)
{
	struct tw t = { 0 };
	pthread_t th[3];
	struct dax_stats st;
	char why[256];
	int fd, i, cuts = 0;
	struct timespec t0, now;

	t_section("truncate and extend while three threads copy");
	fd = mkfile("tw.bin");
	T_REQUIRE(ftruncate(fd, TW_BIG) == 0);
	T_EQ(dax_open(fd, &t.f, why, sizeof(why)), 0);
	for (i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, tw_io, &t);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		T_EQ(dax_truncate(t.f, TW_SMALL), 0);
		usleep(2000);
		T_EQ(dax_truncate(t.f, TW_BIG), 0);
		usleep(2000);
		cuts++;
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec - t0.tv_sec < 2);
	atomic_store(&t.stop, true);
	for (i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	T_EQ(atomic_load(&t.bad), 0);
	T_ASSERT(atomic_load(&t.ios) > cuts);
	/* with no window left, no piece is retired: all of it maps again */
	T_EQ(dax_truncate(t.f, TW_BIG), 0);
	dax_get_stats(t.f, &st);
	T_EQ(st.mapped, TW_BIG);
	printf("  %d cuts, %d I/Os, %d windows; mapped %llu in %d pieces\n", cuts,
	       atomic_load(&t.ios), atomic_load(&t.windows), (unsigned long long)st.mapped,
	       st.maps);
	dax_close(&t.f);
	close(fd);
}

int main(void)
{
	/* a setup error is a failure, not a skip */
	T_REQUIRE(mkdtemp(dir) != NULL);
	dirfd_ = open(dir, O_RDONLY | O_DIRECTORY);
	T_REQUIRE(dirfd_ >= 0);
	probe();
	growth();
	unaligned();
	truncation();
	upgrade();
	reader_only();
	concurrent();
	truncate_while_io();
	unlinkat(dirfd_, "grow.bin", 0);
	unlinkat(dirfd_, "tail.bin", 0);
	unlinkat(dirfd_, "trunc.bin", 0);
	unlinkat(dirfd_, "conc.bin", 0);
	unlinkat(dirfd_, "tw.bin", 0);
	unlinkat(dirfd_, "up.bin", 0);
	close(dirfd_);
	if (rmdir(dir))
		printf("warning: %s not empty\n", dir);
	return t_done();
}
