// SPDX-License-Identifier: MIT
/*
 * util/log.c's sinks as librdax uses them: linked with the client (its
 * constructor drops what has no callback), the shared modules' messages
 * reach stderr never, and a thread's sink (the connection's log
 * callback, set by cli_begin) gets the message alone, for that thread
 * only.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "t.h"
#include "util/log.h"

struct got {
	int n;
	char last[256];
};

static void collect(void *arg, const char *msg)
{
	struct got *g = arg;

	g->n++;
	snprintf(g->last, sizeof(g->last), "%s", msg);
}

/* bytes written to stderr while fn runs */
static long stderr_bytes(void (*fn)(void))
{
	char path[] = "/tmp/test_log.XXXXXX";
	int fd = mkstemp(path), saved = dup(2);
	struct stat st;

	if (fd < 0 || saved < 0)
		return -1;
	fflush(stderr);
	dup2(fd, 2);
	fn();
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	unlink(path);
	if (fstat(fd, &st))
		st.st_size = -1;
	close(fd);
	return (long)st.st_size;
}

static void log_some(void)
{
	pr_err("an error of a shared module");
	pr_warn("a warning");
	log_ratelimited(LOG_WARN, "a rate-limited warning");
}

static struct got other;

static void *other_thread(void *arg)
{
	log_set_thread_sink(collect, &other);
	pr_warn("from the other thread");
	return NULL;
}

int main(void)
{
	struct got g = { 0 };
	pthread_t th;

	t_section("librdax's default: nothing on stderr");
	T_EQ(stderr_bytes(log_some), 0);

	t_section("a thread's sink gets the message alone");
	log_set_thread_sink(collect, &g);
	T_EQ(stderr_bytes(log_some), 0);
	T_EQ(g.n, 3);
	T_ASSERT(!strcmp(g.last, "a rate-limited warning"));
	pr_debug("below the threshold");
	T_EQ(g.n, 3);

	t_section("another thread's sink is its own");
	pthread_create(&th, NULL, other_thread, NULL);
	pthread_join(th, NULL);
	T_EQ(other.n, 1);
	T_EQ(g.n, 3);

	t_section("no sink again: dropped");
	log_set_thread_sink(NULL, NULL);
	T_EQ(stderr_bytes(log_some), 0);
	T_EQ(g.n, 3);
	return t_done();
}
