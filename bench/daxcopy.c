// SPDX-License-Identifier: MIT
/*
 * daxcopy: what persistence costs on the DAX store's write path.
 *
 * Copies TOTAL bytes in SIZE pieces, cycling through a REGION of the
 * target (and, for the source, through a REGION of DRAM, as the server's
 * bounce pool does), with each method:
 *
 *   memcpy-dram   memcpy into anonymous DRAM (reference)
 *   memcpy        memcpy into a plain MAP_SHARED mapping of the target:
 *                 no flush, nothing is durable when it returns
 *   dax_pwritev   the DAX store's write (src/store/dax.h): non-temporal
 *                 copies into its libpmem2 mapping, drained before it
 *                 returns: what rdaxd does for every WRITE on a DAX share
 *
 * and reports GB/s over the wall clock and per core (bytes / the thread's
 * CPU time). Repetitions are interleaved method by method; the median is
 * reported, with min/max.
 *
 * usage: daxcopy [-F] [-s SIZES] [-t TOTAL] [-r REGION] [-n REPS]
 *                [-m METHODS] [-b BENCH] [-V VERSION] [-o FILE]
 *                LABEL=TARGET...
 *   TARGET     a file or a device-DAX node (/dev/daxX.Y); only its first
 *              REGION bytes are written. A file that does not exist is
 *              created and removed afterwards; one that is shorter than
 *              REGION is grown (never shrunk); blocks are allocated before
 *              the timing starts
 *   -F         force cache-line store granularity (libpmem2's test switch
 *              PMEM2_FORCE_GRANULARITY=CACHE_LINE): for machines without
 *              pmem, where the target is page cache
 *   -s SIZES   comma list, default 4k,64k,1m
 *   -t TOTAL   bytes per measurement (default 1g)
 *   -r REGION  bytes (default 64m)
 *   -n REPS    repetitions (default 5)
 *   -m METHODS comma list, default memcpy-dram,memcpy,dax_pwritev
 *   -b BENCH   the "bench" name in the JSON (default dax-host)
 *   -V VERSION the "rdax version" in the JSON (default: this build's)
 *   -o FILE    JSON output (default: stdout); a table goes to stderr
 *
 * Per core is bytes / CLOCK_THREAD_CPUTIME_ID seconds (user + system time
 * of the copying thread, page faults included; the JSON has the minor
 * faults of each run). The run is one thread: pin it (taskset) to measure
 * one core.
 * Exit: 0 every figure measured; 1 a method failed; 2 usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "store/dax.h"

#define MAX_SIZES 8
#define MAX_TARGETS 4
#define MAX_REPS 64

enum method { M_DRAM, M_MEMCPY, M_STORE, M_COUNT };
static const char *const method_name[M_COUNT] = { "memcpy-dram", "memcpy", "dax_pwritev" };

struct target {
	const char *label, *path;
	bool device, created;
	int fd;
	char *plain;			/* MAP_SHARED mapping for memcpy */
	struct dax_file *dax;
	char why[256];
	struct dax_stats st0;
};

struct sample {
	double wall_s, cpu_s;
	long minflt;			/* the thread's minor page faults */
};

struct result {
	int target;			/* -1: DRAM */
	enum method m;
	size_t size;
	struct sample s[MAX_REPS];
	int n;
	uint64_t bytes;
};

static size_t region = 64ul << 20, total = 1ul << 30;
static size_t sizes[MAX_SIZES];
static int nsizes, reps = 5;
static bool use[M_COUNT];
static struct target targets[MAX_TARGETS];
static int ntargets;
static char *src, *dram;

static double clock_s(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static size_t parse_size(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 0);

	switch (*end) {
	case 'g': case 'G':
		v <<= 10;
		/* fall through */
	case 'm': case 'M':
		v <<= 10;
		/* fall through */
	case 'k': case 'K':
		v <<= 10;
		end++;
	}
	return *end ? 0 : (size_t)v;
}

static int open_target(struct target *t)
{
	struct stat st;

	int err;

	/* remove only what we created; never shrink what we did not */
	t->fd = open(t->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (t->fd >= 0)
		t->created = true;
	else if (errno == EEXIST)
		t->fd = open(t->path, O_RDWR | O_CLOEXEC);
	if (t->fd < 0) {
		fprintf(stderr, "daxcopy: %s: %s\n", t->path, strerror(errno));
		return -1;
	}
	if (fstat(t->fd, &st)) {
		fprintf(stderr, "daxcopy: %s: %s\n", t->path, strerror(errno));
		return -1;
	}
	t->device = S_ISCHR(st.st_mode);
	if (!t->device && !S_ISREG(st.st_mode)) {
		fprintf(stderr, "daxcopy: %s is neither a file nor a character device\n",
			t->path);
		return -1;
	}
	if (!t->device) {
		/* blocks allocated up front: no allocation inside the timing */
		if (st.st_size < (off_t)region && ftruncate(t->fd, (off_t)region)) {
			fprintf(stderr, "daxcopy: sizing %s: %s\n", t->path, strerror(errno));
			return -1;
		}
		err = posix_fallocate(t->fd, 0, (off_t)region);
		if (err) {
			fprintf(stderr, "daxcopy: allocating %s: %s\n", t->path, strerror(err));
			return -1;
		}
	}
	t->plain = mmap(NULL, region, PROT_READ | PROT_WRITE, MAP_SHARED, t->fd, 0);
	if (t->plain == MAP_FAILED) {
		fprintf(stderr, "daxcopy: mmap %s: %s\n", t->path, strerror(errno));
		t->plain = NULL;
		return -1;
	}
	if (dax_open(t->fd, &t->dax, t->why, sizeof(t->why))) {
		fprintf(stderr, "daxcopy: the DAX store cannot map %s: %s\n", t->path, t->why);
		return -1;
	}
	dax_get_stats(t->dax, &t->st0);
	if (t->st0.mapped < region) {
		fprintf(stderr, "daxcopy: the DAX store mapped only %llu of %zu bytes of %s\n",
			(unsigned long long)t->st0.mapped, region, t->path);
		return -1;
	}
	return 0;
}

static void close_target(struct target *t)
{
	if (t->dax)
		dax_close(&t->dax);
	if (t->plain)
		munmap(t->plain, region);
	if (t->fd >= 0)
		close(t->fd);
	if (t->created)
		unlink(t->path);
}

/* one pass of n bytes in size pieces; returns 0 or -1 */
static int copy(struct target *t, enum method m, size_t size, uint64_t n)
{
	uint64_t done;

	for (done = 0; done < n; done += size) {
		size_t off = (size_t)(done % region);

		switch (m) {
		case M_DRAM:
			memcpy(dram + off, src + off, size);
			break;
		case M_MEMCPY:
			memcpy(t->plain + off, src + off, size);
			break;
		case M_STORE: {
			struct iovec v = { src + off, size };

			if (dax_pwritev(t->dax, &v, 1, off) != (ssize_t)size) {
				fprintf(stderr, "daxcopy: dax_pwritev %s at %zu failed\n", t->path, off);
				return -1;
			}
			break;
		}
		default:
			return -1;
		}
	}
	/* keep the compiler from dropping the DRAM copies */
	if (m == M_DRAM)
		__asm__ volatile("" : : "r"(dram) : "memory");
	return 0;
}

static int measure(struct result *r)
{
	struct target *t = r->target >= 0 ? &targets[r->target] : NULL;
	uint64_t n = total - total % r->size;
	struct rusage u0, u1;
	double w0, c0;

	getrusage(RUSAGE_THREAD, &u0);
	w0 = clock_s(CLOCK_MONOTONIC);
	c0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
	if (copy(t, r->m, r->size, n))
		return -1;
	r->s[r->n].cpu_s = clock_s(CLOCK_THREAD_CPUTIME_ID) - c0;
	r->s[r->n].wall_s = clock_s(CLOCK_MONOTONIC) - w0;
	getrusage(RUSAGE_THREAD, &u1);
	r->s[r->n].minflt = u1.ru_minflt - u0.ru_minflt;
	r->n++;
	r->bytes = n;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* median, min and max of bytes / time over the repetitions */
static void stats(const struct result *r, bool cpu, double *med, double *lo, double *hi)
{
	double v[MAX_REPS];
	int i;

	for (i = 0; i < r->n; i++) {
		double s = cpu ? r->s[i].cpu_s : r->s[i].wall_s;

		v[i] = (double)r->bytes / (s > 0 ? s : 1e-9);
	}
	qsort(v, (size_t)r->n, sizeof(v[0]), cmp_double);
	*med = r->n % 2 ? v[r->n / 2] : (v[r->n / 2 - 1] + v[r->n / 2]) / 2;
	*lo = v[0];
	*hi = v[r->n - 1];
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void cpu_model(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];

	snprintf(buf, len, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *p = strchr(line, ':');

		if (!strncmp(line, "model name", 10) && p) {
			p += 2;
			p[strcspn(p, "\n")] = 0;
			snprintf(buf, len, "%s", p);
			break;
		}
	}
	fclose(f);
}

static int cpus_allowed(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		return -1;
	return CPU_COUNT(&set);
}

static const char *series_of(const struct result *r, char *buf, size_t len)
{
	if (r->target < 0 || ntargets == 1)
		snprintf(buf, len, "%s", method_name[r->m]);
	else
		snprintf(buf, len, "%s %s", method_name[r->m], targets[r->target].label);
	return buf;
}

static const char *size_name(size_t s, char *buf, size_t len)
{
	if (s >= (1u << 20) && !(s % (1u << 20)))
		snprintf(buf, len, "%zum", s >> 20);
	else if (s >= 1024 && !(s % 1024))
		snprintf(buf, len, "%zuk", s >> 10);
	else
		snprintf(buf, len, "%zu", s);
	return buf;
}

static const struct result *find(const struct result *res, int nres, int target, enum method m,
				 size_t size)
{
	int i;

	for (i = 0; i < nres; i++)
		if (res[i].target == target && res[i].m == m && res[i].size == size)
			return &res[i];
	return NULL;
}

static void write_json(FILE *f, const char *bench, const char *version, bool forced,
		       const struct result *res, int nres)
{
	char cpu[256], name[64], job[112], sz[24];
	struct utsname u;
	int i, j, first;

	cpu_model(cpu, sizeof(cpu));
	uname(&u);
	fprintf(f, "{\n \"bench\": ");
	json_str(f, bench);
	fprintf(f, ",\n \"rdax version\": ");
	json_str(f, version);
	fprintf(f, ",\n \"timestamp\": %lld,\n \"host\": {\"cpu\": ", (long long)time(NULL));
	json_str(f, cpu);
	fprintf(f, ", \"cpus\": %ld, \"kernel\": ", sysconf(_SC_NPROCESSORS_ONLN));
	json_str(f, u.release);
	fprintf(f, "},\n \"params\": {\"region_bytes\": %zu, \"total_bytes\": %zu, \"reps\": %d, "
		"\"forced_granularity\": %s, \"cpus_allowed\": %d, \"source\": \"a DRAM region of "
		"the same size, cycled like the target\", \"order\": \"per repetition: every size, "
		"every target, every method in turn\"},\n", region, total, reps,
		forced ? "\"CACHE_LINE\"" : "null", cpus_allowed());
	/* bench/plot.py: every size in one GB/s panel, and a per-core panel */
	fprintf(f, " \"plot\": {\"bw_unit\": \"GB/s\", \"bulk_min_bs\": 0, \"per_core\": true},\n");
	fprintf(f, " \"methods\": {\"memcpy-dram\": \"memcpy into anonymous DRAM\", "
		"\"memcpy\": \"memcpy into a plain MAP_SHARED mapping of the target, no flush "
		"(not durable)\", \"dax_pwritev\": \"the DAX store's write (src/store/dax.c): "
		"non-temporal copy into its libpmem2 mapping, drained before it returns "
		"(durable)\"},\n");
	fprintf(f, " \"targets\": [");
	for (i = 0; i < ntargets; i++) {
		struct target *t = &targets[i];
		struct dax_stats st;

		dax_get_stats(t->dax, &st);
		fprintf(f, "%s\n  {\"label\": ", i ? "," : "");
		json_str(f, t->label);
		fprintf(f, ", \"path\": ");
		json_str(f, t->path);
		fprintf(f, ", \"kind\": \"%s\", \"granularity\": \"%s\", "
			"\"store_mapped_bytes_written\": %llu, \"store_fd_bytes_written\": %llu}",
			t->device ? "device-dax" : "file", dax_gran_name(st.gran),
			(unsigned long long)(st.mapped_bytes_written - t->st0.mapped_bytes_written),
			(unsigned long long)(st.tail_bytes_written - t->st0.tail_bytes_written));
	}
	fprintf(f, "\n ],\n \"jobs\": [");
	for (i = 0; i < nres; i++) {
		const struct result *r = &res[i];
		double bw, bwl, bwh, pc, pcl, pch;

		stats(r, false, &bw, &bwl, &bwh);
		stats(r, true, &pc, &pcl, &pch);
		size_name(r->size, sz, sizeof(sz));
		series_of(r, name, sizeof(name));
		snprintf(job, sizeof(job), "%s/copy-%s", name, sz);
		fprintf(f, "%s\n  {\"jobname\": ", i ? "," : "");
		json_str(f, job);
		fprintf(f, ", \"workload\": \"copy-%s\", \"tool\": \"daxcopy\", \"server\": ", sz);
		json_str(f, name);
		fprintf(f, ", \"method\": \"%s\", \"target\": ", method_name[r->m]);
		json_str(f, r->target >= 0 ? targets[r->target].label : "dram");
		fprintf(f, ", \"rw\": \"write\", \"bs\": %zu, \"runs\": %d, "
			"\"write\": {\"io_bytes\": %llu, \"bw_bytes\": %.0f, \"bw\": %.0f, "
			"\"iops\": %.1f, \"runtime\": %.0f, \"lat_ns\": {\"mean\": %.1f}}, "
			"\"cpu_s\": %.6f, \"bw_per_core_bytes\": %.0f, "
			"\"spread\": {\"bw_bytes\": {\"min\": %.0f, \"max\": %.0f}, "
			"\"bw_per_core_bytes\": {\"min\": %.0f, \"max\": %.0f}}, \"per_run\": [",
			r->size, r->n, (unsigned long long)r->bytes, bw, bw / 1024,
			bw / (double)r->size, (double)r->bytes / bw * 1000,
			(double)r->size / bw * 1e9, (double)r->bytes / pc, pc, bwl, bwh, pcl, pch);
		for (j = 0; j < r->n; j++)
			fprintf(f, "%s{\"wall_s\": %.6f, \"cpu_s\": %.6f, \"minor_faults\": %ld}",
				j ? ", " : "", r->s[j].wall_s, r->s[j].cpu_s, r->s[j].minflt);
		fprintf(f, "]}");
	}
	fprintf(f, "\n ],\n \"ratios\": [");
	first = 1;
	for (i = 0; i < ntargets; i++) {
		for (j = 0; j < nsizes; j++) {
			const struct result *s = find(res, nres, i, M_STORE, sizes[j]);
			const struct result *p = find(res, nres, i, M_MEMCPY, sizes[j]);
			const struct result *d = find(res, nres, -1, M_DRAM, sizes[j]);
			double a, b, c, lo, hi, ac, bc, cc;

			if (!s || (!p && !d))
				continue;
			stats(s, false, &a, &lo, &hi);
			stats(s, true, &ac, &lo, &hi);
			fprintf(f, "%s\n  {\"workload\": \"copy-%s\", \"target\": ", first ? "" : ",",
				size_name(sizes[j], sz, sizeof(sz)));
			json_str(f, targets[i].label);
			if (p) {
				stats(p, false, &b, &lo, &hi);
				stats(p, true, &bc, &lo, &hi);
				fprintf(f, ", \"dax_pwritev_vs_memcpy\": %.3f, "
					"\"dax_pwritev_vs_memcpy_per_core\": %.3f", a / b, ac / bc);
			}
			if (d) {
				stats(d, false, &c, &lo, &hi);
				stats(d, true, &cc, &lo, &hi);
				fprintf(f, ", \"dax_pwritev_vs_memcpy_dram\": %.3f, "
					"\"dax_pwritev_vs_memcpy_dram_per_core\": %.3f", a / c, ac / cc);
			}
			fprintf(f, "}");
			first = 0;
		}
	}
	fprintf(f, "\n ]\n}\n");
}

static void table(const struct result *res, int nres)
{
	char name[64], sz[24];
	int i;

	/* spread: (max - min) / median of GB/s over the repetitions */
	fprintf(stderr, "%-26s %6s %10s %12s %10s\n", "method", "size", "GB/s", "GB/s/core",
		"spread");
	for (i = 0; i < nres; i++) {
		double bw, lo, hi, pc, pl, ph;

		stats(&res[i], false, &bw, &lo, &hi);
		stats(&res[i], true, &pc, &pl, &ph);
		fprintf(stderr, "%-26s %6s %10.2f %12.2f %9.0f%%\n",
			series_of(&res[i], name, sizeof(name)),
			size_name(res[i].size, sz, sizeof(sz)), bw / 1e9, pc / 1e9,
			bw > 0 ? (hi - lo) / bw * 100 : 0);
	}
}

static int parse_list(char *s, bool sz)
{
	char *tok, *save;

	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (sz) {
			if (nsizes == MAX_SIZES)
				return -1;
			sizes[nsizes] = parse_size(tok);
			if (!sizes[nsizes])
				return -1;
			nsizes++;
		} else {
			int m;

			for (m = 0; m < M_COUNT && strcmp(tok, method_name[m]); m++)
				;
			if (m == M_COUNT)
				return -1;
			use[m] = true;
		}
	}
	return 0;
}

static void usage(int rc)
{
	fprintf(rc ? stderr : stdout, "usage: daxcopy [-F] [-s SIZES] [-t TOTAL] [-r REGION] "
		"[-n REPS] [-m METHODS] [-b BENCH] [-V VERSION] [-o FILE] LABEL=TARGET...\n");
	exit(rc);
}

int main(int argc, char **argv)
{
	const char *out = NULL, *bench = "dax-host", *version = RDAX_VERSION;
	static struct result res[MAX_SIZES * (MAX_TARGETS * 2 + 1)];
	char sizes_def[] = "4k,64k,1m";
	bool forced = false, any = false;
	int c, i, j, k, m, nres = 0, rc = 0;
	FILE *f;

	while ((c = getopt(argc, argv, "Fs:t:r:n:m:b:V:o:h")) != -1) {
		switch (c) {
		case 'F':
			forced = true;
			break;
		case 's':
			if (parse_list(optarg, true))
				usage(2);
			break;
		case 't':
			total = parse_size(optarg);
			break;
		case 'r':
			region = parse_size(optarg);
			break;
		case 'n':
			reps = atoi(optarg);
			break;
		case 'm':
			if (parse_list(optarg, false))
				usage(2);
			any = true;
			break;
		case 'b':
			bench = optarg;
			break;
		case 'V':
			version = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'h':
			usage(0);
			break;
		default:
			usage(2);
		}
	}
	if (!nsizes)
		parse_list(sizes_def, true);
	if (!any)
		for (m = 0; m < M_COUNT; m++)
			use[m] = true;
	if (optind == argc || argc - optind > MAX_TARGETS || reps < 1 || reps > MAX_REPS ||
	    !region || region % (2u << 20) || total < region)
		usage(2);
	for (i = 0; i < nsizes; i++)
		if (region % sizes[i] || sizes[i] > region)
			usage(2);
	if (forced)
		setenv("PMEM2_FORCE_GRANULARITY", "CACHE_LINE", 1);

	src = aligned_alloc(2u << 20, region);
	dram = aligned_alloc(2u << 20, region);
	if (!src || !dram)
		return 2;
	for (size_t x = 0; x < region; x++)
		src[x] = (char)(x * 131 + (x >> 12));
	memset(dram, 0, region);

	for (i = optind; i < argc; i++) {
		struct target *t = &targets[ntargets++];
		char *eq = strchr(argv[i], '=');

		if (!eq || eq == argv[i] || !eq[1])
			usage(2);
		*eq = 0;
		t->label = argv[i];
		t->path = eq + 1;
		t->fd = -1;
		if (open_target(t)) {
			rc = 1;
			goto out;
		}
		fprintf(stderr, "daxcopy: %s (%s): %s, DAX store granularity %s\n", t->label,
			t->path, t->device ? "device DAX" : "file",
			dax_gran_name(t->st0.gran));
	}

	/* the results, in the order they are reported */
	for (j = 0; j < nsizes; j++) {
		if (use[M_DRAM])
			res[nres++] = (struct result){ .target = -1, .m = M_DRAM, .size = sizes[j] };
		for (i = 0; i < ntargets; i++)
			for (m = M_MEMCPY; m < M_COUNT; m++)
				if (use[m])
					res[nres++] = (struct result){ .target = i, .m = m,
								       .size = sizes[j] };
	}
	/* warm up: every page of every mapping faulted in, once */
	for (k = 0; k < nres; k++) {
		struct target *t = res[k].target >= 0 ? &targets[res[k].target] : NULL;

		if (copy(t, res[k].m, 1u << 20, region)) {
			rc = 1;
			goto out;
		}
	}
	for (int r = 0; r < reps; r++)
		for (k = 0; k < nres; k++)
			if (measure(&res[k])) {
				rc = 1;
				goto out;
			}

	f = out ? fopen(out, "w") : stdout;
	if (!f) {
		fprintf(stderr, "daxcopy: %s: %s\n", out, strerror(errno));
		rc = 1;
		goto out;
	}
	write_json(f, bench, version, forced, res, nres);
	if (f != stdout && fclose(f)) {
		rc = 1;
		goto out;
	}
	table(res, nres);
out:
	for (i = 0; i < ntargets; i++)
		close_target(&targets[i]);
	free(src);
	free(dram);
	return rc;
}
