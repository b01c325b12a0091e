// SPDX-License-Identifier: MIT
/*
 * Corpus replay without libFuzzer: runs LLVMFuzzerTestOneInput once on
 * every file named on the command line or found (not recursively) in a
 * directory named there. A crash, sanitizer report or broken invariant
 * aborts the process; otherwise it prints how many inputs ran.
 *
 * usage: fuzz_NAME [-v] FILE|DIR...
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

/* Optional in a target; the weak reference is NULL when it is absent. */
extern int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static int verbose;

static int run_file(const char *path)
{
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0, n;
	FILE *f;

	f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	do {
		if (len == cap) {
			uint8_t *nb;

			cap = cap ? 2 * cap : 65536;
			nb = realloc(buf, cap);
			if (!nb) {
				fprintf(stderr, "replay: %s: out of memory\n", path);
				free(buf);
				fclose(f);
				return -1;
			}
			buf = nb;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n);
	if (ferror(f)) {
		fprintf(stderr, "replay: %s: read error\n", path);
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	if (verbose)
		fprintf(stderr, "replay: %s (%zu bytes)\n", path, len);
	/* an exact-size copy, so ASan sees reads past the end */
	{
		uint8_t *exact = malloc(len ? len : 1);

		if (!exact) {
			free(buf);
			return -1;
		}
		memcpy(exact, buf, len);
		free(buf);
		LLVMFuzzerTestOneInput(exact, len);
		free(exact);
	}
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Files of a directory in name order (reproducible runs). */
static int run_dir(const char *dir, long *count)
{
	char **names = NULL, path[4096];
	size_t n = 0, cap = 0, i;
	struct dirent *de;
	struct stat st;
	int ret = 0;
	DIR *d;

	d = opendir(dir);
	if (!d) {
		fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (n == cap) {
			char **nn;

			cap = cap ? 2 * cap : 64;
			nn = realloc(names, cap * sizeof(*names));
			if (!nn) {
				ret = -1;
				break;
			}
			names = nn;
		}
		names[n] = strdup(de->d_name);
		if (!names[n]) {
			ret = -1;
			break;
		}
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_names);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (!ret && !stat(path, &st) && S_ISREG(st.st_mode)) {
			if (run_file(path))
				ret = -1;
			else
				(*count)++;
		}
		free(names[i]);
	}
	free(names);
	return ret;
}

int main(int argc, char **argv)
{
	struct stat st;
	long count = 0;
	int i, ret = 0;

	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-v")) {
			verbose = 1;
			continue;
		}
		if (stat(argv[i], &st)) {
			fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
			ret = 1;
		} else if (S_ISDIR(st.st_mode)) {
			if (run_dir(argv[i], &count))
				ret = 1;
		} else if (run_file(argv[i])) {
			ret = 1;
		} else {
			count++;
		}
	}
	printf("%ld inputs\n", count);
	return ret;
}
