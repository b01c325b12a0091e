// SPDX-License-Identifier: MIT
/*
 * Counts what makes OpenSSL contexts or fetches algorithms in a real
 * process (LD_PRELOAD): EVP_CIPHER_CTX_new, EVP_MAC_CTX_new,
 * EVP_MD_CTX_new, EVP_CIPHER_fetch, EVP_MAC_fetch, EVP_MD_fetch, the
 * program's calls and libcrypto's own (they go through the PLT). At exit
 * the counts go to $OSSLCOUNT_DIR/PID, one "NAME COUNT" a line. Built as
 * build/tests/osslcount.so; never sanitized itself, so it can sit in
 * front of a sanitizer runtime. tests/integ/crypto_ctx.sh uses it.
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

enum { CIPHER_CTX, MAC_CTX, MD_CTX, CIPHER_FETCH, MAC_FETCH, MD_FETCH, NCOUNT };

static const char *const names[NCOUNT] = {
	"EVP_CIPHER_CTX_new", "EVP_MAC_CTX_new", "EVP_MD_CTX_new",
	"EVP_CIPHER_fetch", "EVP_MAC_fetch", "EVP_MD_fetch",
};
static atomic_ulong counts[NCOUNT];

/* the next definition of name (libcrypto's); a process without one exits */
static void *next(int i)
{
	void *f = dlsym(RTLD_NEXT, names[i]);

	if (!f) {
		fprintf(stderr, "osslcount: no %s\n", names[i]);
		_exit(127);
	}
	atomic_fetch_add(&counts[i], 1);
	return f;
}

EXPORT void *EVP_CIPHER_CTX_new(void)
{
	void *(*f)(void) = (void *(*)(void))next(CIPHER_CTX);

	return f();
}

EXPORT void *EVP_MAC_CTX_new(void *mac)
{
	void *(*f)(void *) = (void *(*)(void *))next(MAC_CTX);

	return f(mac);
}

EXPORT void *EVP_MD_CTX_new(void)
{
	void *(*f)(void) = (void *(*)(void))next(MD_CTX);

	return f();
}

EXPORT void *EVP_CIPHER_fetch(void *lib, const char *alg, const char *props)
{
	void *(*f)(void *, const char *, const char *) =
		(void *(*)(void *, const char *, const char *))next(CIPHER_FETCH);

	return f(lib, alg, props);
}

EXPORT void *EVP_MAC_fetch(void *lib, const char *alg, const char *props)
{
	void *(*f)(void *, const char *, const char *) =
		(void *(*)(void *, const char *, const char *))next(MAC_FETCH);

	return f(lib, alg, props);
}

EXPORT void *EVP_MD_fetch(void *lib, const char *alg, const char *props)
{
	void *(*f)(void *, const char *, const char *) =
		(void *(*)(void *, const char *, const char *))next(MD_FETCH);

	return f(lib, alg, props);
}

__attribute__((destructor)) static void osslcount_write(void)
{
	const char *dir = getenv("OSSLCOUNT_DIR");
	char path[4096];
	FILE *f;
	int i;

	if (!dir)
		return;
	snprintf(path, sizeof(path), "%s/%ld", dir, (long)getpid());
	f = fopen(path, "w");
	if (!f)
		return;
	for (i = 0; i < NCOUNT; i++)
		fprintf(f, "%s %lu\n", names[i], atomic_load(&counts[i]));
	fclose(f);
}
