/* SPDX-License-Identifier: MIT */
/* Logging: the daemon logs to stderr; the library is silent unless asked. */
#ifndef RDAX_UTIL_LOG_H
#define RDAX_UTIL_LOG_H

#include <stdarg.h>
#include <stdbool.h>

enum log_level {
	LOG_ERR = 0,
	LOG_WARN,
	LOG_NOTICE,
	LOG_INFO,
	LOG_DEBUG,
};

/* Messages at or below this level are printed. */
extern int log_threshold;

void log_init(const char *ident, int threshold);
/*
 * Where messages go: stderr by default (rdaxd); fn == NULL drops them
 * (librdax). A thread's own sink, if set, takes its messages first
 * (librdax: the log callback of the connection the thread is in).
 */
void log_set_sink(void (*fn)(void *arg, const char *msg), void *arg);
void log_set_thread_sink(void (*fn)(void *arg, const char *msg), void *arg);
/* stderr is journald's stream: no timestamps, syslog priority prefixes. */
void log_set_journal(bool on);
void log_msg(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void log_vmsg(int level, const char *fmt, va_list ap);
/* Rate-limited variant for per-peer errors: at most a few per second. */
void log_ratelimited(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define pr_err(...) log_msg(LOG_ERR, __VA_ARGS__)
#define pr_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define pr_notice(...) log_msg(LOG_NOTICE, __VA_ARGS__)
#define pr_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define pr_debug(...)                                                       \
	do {                                                                \
		if (log_threshold >= LOG_DEBUG)                             \
			log_msg(LOG_DEBUG, __VA_ARGS__);                    \
	} while (0)

#endif
