// SPDX-License-Identifier: MIT
/* stderr logger with a timestamp, level tag and per-second rate limit. */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "util/log.h"

int log_threshold = LOG_NOTICE;
static const char *log_ident = "rdax";
static bool log_journal;

static void log_stderr(void *arg, const char *msg)
{
	fprintf(stderr, "%s\n", msg);
}

static void (*log_sink)(void *arg, const char *msg) = log_stderr;
static void *log_sink_arg;
static __thread void (*log_tsink)(void *arg, const char *msg);
static __thread void *log_tsink_arg;

void log_set_sink(void (*fn)(void *arg, const char *msg), void *arg)
{
	log_sink = fn;
	log_sink_arg = arg;
}

void log_set_thread_sink(void (*fn)(void *arg, const char *msg), void *arg)
{
	log_tsink = fn;
	log_tsink_arg = arg;
}

void log_set_journal(bool on)
{
	log_journal = on;
}

void log_init(const char *ident, int threshold)
{
	const char *env = getenv("RDAX_LOG_LEVEL");

	log_ident = ident;
	log_threshold = threshold;
	if (env)
		log_threshold = atoi(env);
}

void log_vmsg(int level, const char *fmt, va_list ap)
{
	static const char *const tag[] = { "error", "warning", "notice",
					   "info", "debug" };
	struct timespec ts;
	struct tm tm;
	char buf[1024];
	int n;

	/* journald: its own timestamps; "<N>" is the syslog priority */
	static const int prio[] = { 3, 4, 5, 6, 7 };

	if (level > log_threshold)
		return;
	if (log_tsink) {
		/* an application's callback: the message alone */
		vsnprintf(buf, sizeof(buf), fmt, ap);
		log_tsink(log_tsink_arg, buf);
		return;
	}
	if (!log_sink)
		return;
	if (log_journal) {
		n = snprintf(buf, sizeof(buf), "<%d>%s[%s]: ",
			     prio[level < 0 ? 0 : level > 4 ? 4 : level], log_ident,
			     tag[level < 0 ? 0 : level > 4 ? 4 : level]);
		if (n < 0)
			return;
		vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
		log_sink(log_sink_arg, buf);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = snprintf(buf, sizeof(buf), "%02d:%02d:%02d.%03ld %s[%s]: ",
		     tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000,
		     log_ident, tag[level < 0 ? 0 : level > 4 ? 4 : level]);
	if (n < 0)
		return;
	vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	log_sink(log_sink_arg, buf);
}

void log_msg(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(level, fmt, ap);
	va_end(ap);
}

void log_ratelimited(int level, const char *fmt, ...)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static time_t window;
	static unsigned int count, dropped;
	time_t now = time(NULL);
	int print;
	va_list ap;

	pthread_mutex_lock(&lock);
	if (now != window) {
		if (dropped)
			log_msg(LOG_WARN, "%u log lines suppressed", dropped);
		window = now;
		count = 0;
		dropped = 0;
	}
	print = ++count <= 10;
	if (!print)
		dropped++;
	pthread_mutex_unlock(&lock);
	if (!print)
		return;
	va_start(ap, fmt);
	log_vmsg(level, fmt, ap);
	va_end(ap);
}
