// SPDX-License-Identifier: MIT
/*
 * rdaxctl: talk to a running rdaxd over its control socket. One request
 * line per connection; the answer's first line is "ok[: message]" or
 * "error: why", the rest is the body (status, metrics).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define DEFAULT_SOCKET "/run/rdaxd/control"

static void usage(FILE *f)
{
	fprintf(f,
"usage: rdaxctl [--socket PATH] COMMAND\n"
"\n"
"commands:\n"
"  status [--json]      connections, sessions, opens, shares, workers\n"
"  metrics              counters in Prometheus text format\n"
"  reload               re-read the configuration (as SIGHUP)\n"
"  close-session ID     end a session (ID as status shows it: 0x...)\n"
"\n"
"  -s, --socket PATH    rdaxd's control socket (default " DEFAULT_SOCKET ";\n"
"                       rdaxd --control, smb.conf 'rdax control socket')\n"
"  -h, --help           this help\n"
"  -V, --version        print the version\n");
}

/* The request line for argv, or NULL (usage error). */
static int make_request(int argc, char **argv, char *req, size_t len)
{
	static const struct {
		const char *cmd;
		int nargs;
	} tab[] = {
		{ "status", 0 }, { "metrics", 0 }, { "reload", 0 }, { "close-session", 1 },
	};
	size_t i;

	if (argc < 1)
		return -EINVAL;
	if (!strcmp(argv[0], "status") && argc == 2 && !strcmp(argv[1], "--json")) {
		snprintf(req, len, "status json\n");
		return 0;
	}
	for (i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		if (strcmp(argv[0], tab[i].cmd))
			continue;
		if (argc != 1 + tab[i].nargs)
			return -EINVAL;
		if (tab[i].nargs && (strchr(argv[1], '\n') || strlen(argv[1]) > 64))
			return -EINVAL;
		snprintf(req, len, "%s%s%s\n", tab[i].cmd, tab[i].nargs ? " " : "",
			 tab[i].nargs ? argv[1] : "");
		return 0;
	}
	return -EINVAL;
}

static int ctl_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "rdaxctl: %s: path too long\n", path);
		return -1;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, "rdaxctl: socket: %s\n", strerror(errno));
		return -1;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		fprintf(stderr, "rdaxctl: %s: %s%s\n", path, strerror(errno),
			errno == ENOENT || errno == ECONNREFUSED ? " (is rdaxd running?)" :
			errno == EACCES ? " (root only)" : "");
		close(fd);
		return -1;
	}
	return fd;
}

/* Read the whole answer; 0: ok (body on stdout), 1: error. */
static int answer(int fd)
{
	char *buf = NULL, *nl;
	size_t len = 0, cap = 0;
	ssize_t n;

	for (;;) {
		if (cap - len < 4096) {
			char *b = realloc(buf, cap ? cap * 2 : 8192);

			if (!b) {
				free(buf);
				fprintf(stderr, "rdaxctl: out of memory\n");
				return 1;
			}
			buf = b;
			cap = cap ? cap * 2 : 8192;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fprintf(stderr, "rdaxctl: read: %s\n", strerror(errno));
			free(buf);
			return 1;
		}
		if (!n)
			break;
		len += (size_t)n;
	}
	buf[len] = 0;
	nl = strchr(buf, '\n');
	if (!nl) {
		fprintf(stderr, "rdaxctl: no answer from rdaxd\n");
		free(buf);
		return 1;
	}
	*nl = 0;
	if (strncmp(buf, "ok", 2)) {
		fprintf(stderr, "rdaxctl: %s\n", !strncmp(buf, "error: ", 7) ? buf + 7 : buf);
		free(buf);
		return 1;
	}
	if (buf[2] == ':')
		printf("%s\n", buf + 4);
	fwrite(nl + 1, 1, len - (size_t)(nl + 1 - buf), stdout);
	free(buf);
	return fflush(stdout) ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	const char *path = getenv("RDAXCTL_SOCKET");
	char req[128];
	size_t off = 0;
	int c, fd, rc;

	if (!path || !*path)
		path = DEFAULT_SOCKET;
	/* "+": options stop at the command ("status --json") */
	while ((c = getopt_long(argc, argv, "+s:hV", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			path = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("rdaxctl %s\n", RDAX_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (make_request(argc - optind, argv + optind, req, sizeof(req))) {
		usage(stderr);
		return 2;
	}
	fd = ctl_connect(path);
	if (fd < 0)
		return 1;
	while (off < strlen(req)) {
		/* a refusal may come before the request is read: read it */
		ssize_t n = send(fd, req + off, strlen(req) - off, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	rc = answer(fd);
	close(fd);
	return rc;
}
