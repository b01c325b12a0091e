// SPDX-License-Identifier: MIT
/*
 * The POSIX store's io_uring ring: fixed buffers, several segments at
 * consecutive offsets, O_DIRECT when aligned, the contiguous-prefix
 * result at EOF, errors, and completions signalled on the eventfd.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/uring.h"
#include "t.h"

static int ndone;

static void done(struct store_rw *rw)
{
	(void)rw;
	ndone++;
}

/* wait for the eventfd, then reap */
static int wait_done(struct store_ring *r, int want)
{
	struct pollfd p = { .fd = store_ring_fd(r), .events = POLLIN };

	while (ndone < want) {
		if (poll(&p, 1, 5000) != 1)
			return -ETIMEDOUT;
		store_ring_reap(r);
	}
	return 0;
}

/* why O_DIRECT could not be tried, per directory */
static char no_direct[700];

/* false if the O_DIRECT run found no O_DIRECT in dir (the reason is kept) */
static bool run(const char *dir, bool direct)
{
	const size_t unit = 64 << 10, pool = 16 * unit;
	struct store_ring *r;
	struct store_rw rw;
	char path[256];
	uint8_t *mem, *back;
	int fd, ret, i;

	t_section(direct ? "O_DIRECT, fixed buffers" : "buffered, fixed buffers");
	ret = store_ring_new(64, &r);
	if (ret == -ENOSYS || ret == -EPERM)
		T_SKIP("io_uring is not available here");
	T_EQ(ret, 0);
	mem = mmap(NULL, pool, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_REQUIRE(mem != MAP_FAILED);
	T_REQUIRE(!posix_memalign((void **)&back, 4096, pool));
	T_EQ(store_ring_set_buffer(r, 2, mem, pool), 0);
	for (i = 0; i < (int)pool; i++)
		mem[i] = (uint8_t)(i * 7 + 3);
	snprintf(path, sizeof(path), "%s/rdax-uring-XXXXXX", dir);
	fd = mkstemp(path);
	T_REQUIRE(fd >= 0);
	unlink(path);
	if (direct) {
		int dfd;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		dfd = open(path, O_RDWR | O_DIRECT);
		if (dfd < 0) {
			size_t n = strlen(no_direct);

			snprintf(no_direct + n, sizeof(no_direct) - n, "%s%s: %s",
				 n ? "; " : "", dir, strerror(errno));
			close(fd);
			store_ring_free(&r);
			munmap(mem, pool);
			free(back);
			return false;
		}
		close(fd);
		fd = dfd;
	}
	/* three segments, not adjacent in memory, at consecutive offsets */
	memset(&rw, 0, sizeof(rw));
	rw.fd = fd;
	rw.write = true;
	rw.buf_index = 2;
	rw.niov = 3;
	rw.iov[0] = (struct iovec){ mem + 4 * unit, unit };
	rw.iov[1] = (struct iovec){ mem, unit };
	rw.iov[2] = (struct iovec){ mem + 9 * unit, unit };
	rw.off = 8192;
	rw.done = done;
	T_ASSERT(store_rw_aligned(&rw, 4096));
	ndone = 0;
	T_EQ(store_ring_submit(r, &rw), 0);
	T_EQ(store_ring_inflight(r), 3);
	T_EQ(wait_done(r, 1), 0);
	T_EQ(rw.res, (long long)(3 * unit));
	T_EQ(store_ring_inflight(r), 0);
	T_EQ(pread(fd, back, 3 * unit, 8192), (long long)(3 * unit));
	T_ASSERT(!memcmp(back, mem + 4 * unit, unit));
	T_ASSERT(!memcmp(back + unit, mem, unit));
	T_ASSERT(!memcmp(back + 2 * unit, mem + 9 * unit, unit));

	/* read back into other slots, past EOF: the contiguous prefix */
	memset(mem + 12 * unit, 0, 4 * unit);
	memset(&rw, 0, sizeof(rw));
	rw.fd = fd;
	rw.buf_index = 2;
	rw.niov = 4;
	for (i = 0; i < 4; i++)
		rw.iov[i] = (struct iovec){ mem + (12 + i) * unit, unit };
	rw.off = 8192;
	rw.done = done;
	ndone = 0;
	T_EQ(store_ring_submit(r, &rw), 0);
	T_EQ(wait_done(r, 1), 0);
	T_EQ(rw.res, (long long)(3 * unit));	/* the 4th segment is past EOF */
	T_ASSERT(!memcmp(mem + 12 * unit, back, 3 * unit));

	/* no fixed buffer, unaligned (buffered only) */
	if (!direct) {
		memset(&rw, 0, sizeof(rw));
		rw.fd = fd;
		rw.write = true;
		rw.buf_index = -1;
		rw.niov = 1;
		rw.iov[0] = (struct iovec){ (char *)"tail", 4 };
		rw.off = 8192 + 3 * unit;
		rw.done = done;
		T_ASSERT(!store_rw_aligned(&rw, 4096));
		ndone = 0;
		T_EQ(store_ring_submit(r, &rw), 0);
		T_EQ(wait_done(r, 1), 0);
		T_EQ(rw.res, 4);
		T_EQ(pread(fd, back, 8, 8192 + 3 * unit), 4);
		T_MEMEQ(back, "tail", 4);
	}

	/* an error is the result when nothing moved */
	memset(&rw, 0, sizeof(rw));
	rw.fd = 12345;		/* not open */
	rw.buf_index = -1;
	rw.niov = 1;
	rw.iov[0] = (struct iovec){ back, 16 };
	rw.done = done;
	ndone = 0;
	T_EQ(store_ring_submit(r, &rw), 0);
	T_EQ(wait_done(r, 1), 0);
	T_EQ(rw.res, -EBADF);

	store_ring_free(&r);
	T_ASSERT(r == NULL);
	close(fd);
	munmap(mem, pool);
	free(back);
	return true;
}

int main(void)
{
	bool direct;

	run("/tmp", false);
	/*
	 * tmpfs has no O_DIRECT; try where the build lives and /var/tmp.
	 * The O_DIRECT part was skipped only if neither has it.
	 */
	direct = run(".", true);
	direct = run("/var/tmp", true) || direct;
	if (!direct) {
		char why[800];

		snprintf(why, sizeof(why), "no O_DIRECT in . nor /var/tmp (%s)", no_direct);
		t_skip_case("O_DIRECT", why);
	}
	return t_done();
}
