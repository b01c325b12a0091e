// SPDX-License-Identifier: MIT
/*
 * "username map" files (src/server/usermap.c): Samba's syntax (names,
 * quotes, "*", "@group" and "+group", "!", comments, "\" continuation),
 * rdaxd's chaining (each line applies to the result of the lines before
 * it; Samba matches every line against the name the client sent), and
 * the errors a map is refused for, each naming its line: no "=", a Unix
 * user or group that does not exist, an open quote, a netgroup, names
 * that map to each other in a loop. A large map (100000 lines) loads,
 * and a loop hidden in it is found, in time linear in its size.
 *
 * Unix names must exist, so the maps use Debian's system accounts: root,
 * daemon, bin, sys, nobody (group nogroup).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "server/usermap.h"
#include "t.h"

static char dir[] = "/tmp/rdax-usermap-XXXXXX";
static char path[300];
static char err[1024];

static int load_text(const char *text, struct usermap **m)
{
	FILE *f = fopen(path, "w");

	T_REQUIRE(f != NULL);
	fputs(text, f);
	fclose(f);
	err[0] = 0;
	return usermap_load(path, m, err, sizeof(err));
}

/* the Unix name user maps to under map text (text must load) */
static const char *map(const char *text, const char *user)
{
	static char out[256];
	struct usermap *m = NULL;

	out[0] = 0;
	if (load_text(text, &m)) {
		printf("  unexpected error: %s\n", err);
		T_ASSERT(0);
		return "(error)";
	}
	T_EQ(usermap_apply(m, user, out, sizeof(out)), 0);
	usermap_free(&m);
	return out;
}

#define T_MAP(text, user, want) do {						\
		const char *_got = map((text), (user));				\
		if (strcmp(_got, (want)))					\
			printf("  %s -> '%s', want '%s'\n", (user), _got, (want)); \
		T_ASSERT(!strcmp(_got, (want)));				\
	} while (0)

/* text must be refused with -errno want and an error containing needle */
static void refused(const char *text, int want, const char *needle)
{
	struct usermap *m = NULL;
	int ret = load_text(text, &m);

	T_EQ(ret, want);
	T_ASSERT(m == NULL);
	if (!strstr(err, needle) || strncmp(err, path, strlen(path)))
		printf("  error '%s', want '%s: ...%s...'\n", err, path, needle);
	T_ASSERT(strstr(err, needle) != NULL);
	T_ASSERT(!strncmp(err, path, strlen(path)));
	usermap_free(&m);
}

static void syntax(void)
{
	t_section("names, quotes, comments, continuation");
	T_MAP("root = admin Administrator\n", "admin", "root");
	T_MAP("root = admin Administrator\n", "ADMINISTRATOR", "root");
	T_MAP("root = admin,Administrator\n", "administrator", "root");
	T_MAP("root = admin\n", "joe", "joe");	/* no line: the name itself */
	T_MAP("daemon = \"Fred Smith\" fred\n", "Fred Smith", "daemon");
	T_MAP("daemon = \"Fred Smith\" fred\n", "fred", "daemon");
	T_MAP("daemon = \"Fred Smith\" fred\n", "Freddy", "Freddy");
	T_MAP("\"nobody\" = guestuser\n", "guestuser", "nobody");
	T_MAP("# comment = x\n; another = y\n\n   \nroot = admin\n", "x", "x");
	T_MAP("root = a \\\n b \\\n c\n", "c", "root");
	T_MAP("root = a \\\n b\n", "a", "root");
}

static void wildcard_group_stop(void)
{
	t_section("*, @group, +group, !");
	T_MAP("nobody = *\n", "anyone", "nobody");
	/* without '!' the wildcard applies to root too */
	T_MAP("root = admin\nnobody = *\n", "admin", "nobody");
	/* '!' ends the mapping when its line matched */
	T_MAP("!root = admin\nnobody = *\n", "admin", "root");
	T_MAP("!root = admin\nnobody = *\n", "joe", "nobody");
	T_MAP("! root = admin\nnobody = *\n", "admin", "root");
	/* nobody's primary group is nogroup; root is not in it */
	T_MAP("daemon = @nogroup\n", "nobody", "daemon");
	T_MAP("daemon = +nogroup\n", "nobody", "daemon");
	T_MAP("daemon = @nogroup\n", "root", "root");
	T_MAP("daemon = @root\n", "root", "daemon");
	/* a name that is no Unix user is in no group */
	T_MAP("daemon = @nogroup\n", "nosuchuser-rdax", "nosuchuser-rdax");
}

static void chaining(void)
{
	t_section("chaining: each line applies to what the lines before made");
	T_MAP("bin = alias\nsys = bin\n", "alias", "sys");
	T_MAP("bin = alias\nsys = bin\n", "bin", "sys");
	/* a line only sees names made above it */
	T_MAP("sys = bin\nbin = alias\n", "alias", "bin");
	/* '!' on the second line stops there */
	T_MAP("bin = alias\n!sys = bin\nnobody = *\n", "alias", "sys");
	/* a group line sees the name made so far: root is in group root */
	T_MAP("root = admin\ndaemon = @root\n", "admin", "daemon");
	/* a name mapped to itself is no loop */
	T_MAP("root = root admin\n", "admin", "root");
}

static void errors(void)
{
	t_section("refused maps, with file and line");
	refused("root = admin\njust words\n", -EINVAL, ":2: no '='");
	refused("root =\n", -EINVAL, ":1: no SMB names after '=' for 'root'");
	refused(" = admin\n", -EINVAL, ":1: no Unix name before '='");
	refused("root = \"admin\n", -EINVAL, ":1: a quote is not closed");
	refused("root = admin\n\nnosuchuser-rdax = x\n", -EINVAL,
		":3: no Unix user 'nosuchuser-rdax'");
	refused("root = @nosuchgroup-rdax\n", -EINVAL, ":1: no Unix group 'nosuchgroup-rdax'");
	refused("root = @\n", -EINVAL, ":1: an empty group name");
	refused("root = &ng\n", -EINVAL, ":1: '&ng': NIS netgroups are not supported");
	/* the line an entry started on, after a continuation */
	refused("root = a \\\n b\nnosuchuser-rdax = c\n", -EINVAL,
		":3: no Unix user 'nosuchuser-rdax'");
	refused("# c\nroot = daemon\ndaemon = root\n", -ELOOP,
		":2: names map to each other in a loop: daemon -> root (line 2) -> daemon (line 3)");
	refused("root = x\nbin = daemon\nsys = bin\ndaemon = sys\n", -ELOOP,
		":2: names map to each other in a loop: daemon -> bin (line 2) -> sys (line 3) -> daemon (line 4)");
	/* case does not hide one */
	refused("root = DAEMON\ndaemon = Root\n", -ELOOP, "in a loop");
	{
		struct usermap *m = NULL;

		T_EQ(usermap_load("/no/such/dir/map", &m, err, sizeof(err)), -ENOENT);
		T_ASSERT(strstr(err, "/no/such/dir/map: No such file") != NULL);
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * 100000 lines. The old check walked every simple path from every edge,
 * scanning all edges at each step: quadratic at best, exponential at
 * worst; this must take a blink. The bound is a liveness check (far
 * above the expected time), not a measurement.
 */
static void large(void)
{
	static const char *sysusers[] = { "daemon", "bin", "sys", "sync", "games", "man",
					  "lp", "mail", "news", "uucp", "proxy", "backup" };
	const int nsys = (int)(sizeof(sysusers) / sizeof(sysusers[0]));
	const int lines = 100000;
	struct usermap *m = NULL;
	char out[64];
	double t0, dt;
	FILE *f;
	int i, j, ret;

	t_section("a large map");
	f = fopen(path, "w");
	T_REQUIRE(f != NULL);
	for (i = 0; i < lines; i++)
		fprintf(f, "%s = smbuser%06d\n", sysusers[i % nsys], i);
	/* every system account maps to each later one: many paths, no loop */
	for (i = 0; i < nsys; i++)
		for (j = i + 1; j < nsys; j++)
			fprintf(f, "%s = %s\n", sysusers[j], sysusers[i]);
	fclose(f);
	t0 = now();
	ret = usermap_load(path, &m, err, sizeof(err));
	dt = now() - t0;
	printf("  %d lines loaded in %.3f s\n", usermap_lines(m), dt);
	T_EQ(ret, 0);
	T_EQ(usermap_lines(m), lines + nsys * (nsys - 1) / 2);
	T_ASSERT(dt < 30);
	T_EQ(usermap_apply(m, "smbuser000001", out, sizeof(out)), 0);
	T_ASSERT(!strcmp(out, sysusers[nsys - 1]));	/* chained to the last */
	usermap_free(&m);
	/* ... and one more line closes a loop through all of them */
	f = fopen(path, "a");
	T_REQUIRE(f != NULL);
	fprintf(f, "%s = %s\n", sysusers[0], sysusers[nsys - 1]);
	fclose(f);
	t0 = now();
	ret = usermap_load(path, &m, err, sizeof(err));
	dt = now() - t0;
	printf("  with a loop: %.3f s: %s\n", dt, err);
	T_EQ(ret, -ELOOP);
	T_ASSERT(strstr(err, "names map to each other in a loop: daemon -> ") != NULL);
	T_ASSERT(dt < 30);
}

int main(void)
{
	if (!mkdtemp(dir))
		T_SKIP("mkdtemp failed");
	snprintf(path, sizeof(path), "%s/map", dir);
	syntax();
	wildcard_group_stop();
	chaining();
	errors();
	large();
	unlink(path);
	rmdir(dir);
	return t_done();
}
