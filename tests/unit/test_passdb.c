// SPDX-License-Identifier: MIT
/* Password database: create/replace/remove, permissions, parsing, lookup. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crypto/auth.h"
#include "crypto/crypto.h"
#include "crypto/ntlm.h"
#include "crypto/passdb.h"
#include "t.h"

static char dir[] = "/tmp/rdax-passdb-XXXXXX";
static char path[256];

static void put_file(const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	T_REQUIRE(fd >= 0);
	T_EQ(write(fd, text, strlen(text)), (long long)strlen(text));
	T_EQ(fchmod(fd, mode), 0);
	close(fd);
}

static char *get_file(void)
{
	static char buf[4096];
	int fd = open(path, O_RDONLY);
	ssize_t n;

	T_REQUIRE(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = 0;
	close(fd);
	return buf;
}

static int count_dir(void)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	int n = 0;

	T_REQUIRE(d != NULL);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' || e->d_name[1] != 0)
			if (strcmp(e->d_name, ".."))
				n++;
	closedir(d);
	return n;
}

static void basic(void)
{
	struct passdb *db;
	uint8_t h[16], want[16];
	struct stat st;

	t_section("create, lookup, replace (case-insensitive), mode 0600");
	T_EQ(passdb_load(path, &db), -ENOENT);
	T_EQ(passdb_set(path, "alice", "Secret1"), 0);
	T_EQ(stat(path, &st), 0);
	T_EQ(st.st_mode & 07777, 0600);
	T_EQ(passdb_set(path, "Bob", "Password"), 0);
	T_ASSERT(strstr(get_file(), "Bob:A4F49C406510BDCAB6824EE7C30FD852\n"));
	T_EQ(passdb_load(path, &db), 0);
	T_EQ(passdb_count(db), 2);
	T_EQ(ntlm_nt_hash("Secret1", want), 0);
	T_EQ(passdb_lookup(db, "alice", h), 0);
	T_MEMEQ(h, want, 16);
	T_EQ(passdb_lookup(db, "ALICE", h), 0);
	T_EQ(passdb_lookup(db, "bob", h), 0);
	T_HEXEQ(h, 16, "a4f49c406510bdcab6824ee7c30fd852");
	T_EQ(passdb_lookup(db, "carol", h), -ENOENT);
	T_EQ(passdb_lookup(db, "", h), -ENOENT);
	passdb_free(&db);
	T_ASSERT(db == NULL);
	passdb_free(&db);

	/* replace via a different spelling: still one entry */
	T_EQ(passdb_set(path, "ALICE", "New-pass"), 0);
	T_EQ(passdb_load(path, &db), 0);
	T_EQ(passdb_count(db), 2);
	T_EQ(ntlm_nt_hash("New-pass", want), 0);
	T_EQ(passdb_lookup(db, "alice", h), 0);
	T_MEMEQ(h, want, 16);
	passdb_free(&db);
	T_EQ(count_dir(), 1); /* no temp files left */

	/* non-ASCII names fold too */
	T_EQ(passdb_set(path, "j\xc3\xb6rg", "x"), 0);
	T_EQ(passdb_load(path, &db), 0);
	T_EQ(passdb_lookup(db, "J\xc3\x96RG", h), 0);
	passdb_free(&db);

	T_EQ(passdb_remove(path, "JÖRG"), 0);
	T_EQ(passdb_remove(path, "jörg"), -ENOENT);
	T_EQ(passdb_load(path, &db), 0);
	T_EQ(passdb_count(db), 2);
	passdb_free(&db);
}

static void perms(void)
{
	struct passdb *db;
	struct stat st;

	t_section("permissions");
	T_EQ(chmod(path, 0644), 0);
	T_EQ(passdb_load(path, &db), -EPERM);
	T_ASSERT(db == NULL);
	T_EQ(chmod(path, 0620), 0);
	T_EQ(passdb_load(path, &db), -EPERM);
	T_EQ(chmod(path, 0602), 0);
	T_EQ(passdb_load(path, &db), -EPERM);
	T_EQ(chmod(path, 0700), 0);
	T_EQ(passdb_load(path, &db), 0);
	passdb_free(&db);
	/* set() rewrites with 0600 */
	T_EQ(chmod(path, 0644), 0);
	T_EQ(passdb_set(path, "alice", "Secret1"), 0);
	T_EQ(stat(path, &st), 0);
	T_EQ(st.st_mode & 07777, 0600);
	T_EQ(passdb_load(dir, &db), -EINVAL); /* a directory */
}

static void parsing(void)
{
	struct passdb *db;
	unsigned int line = 99;
	uint8_t h[16];

	t_section("parsing, comments, malformed lines");
	put_file("# rdax passdb\n"
		 "\n"
		 "   \t\n"
		 "  # indented comment\n"
		 "alice:7c4fe5eada682714a036e39378362bab\r\n"
		 "bob:A4F49C406510BDCAB6824EE7C30FD852   \n"
		 "carol:31d6cfe0d16ae931b73c59d7e0c089c0",
		 0600);
	T_EQ(passdb_load_ex(path, &db, &line), 0);
	T_EQ(line, 0);
	T_EQ(passdb_count(db), 3);
	T_EQ(passdb_lookup(db, "Carol", h), 0);
	T_HEXEQ(h, 16, "31d6cfe0d16ae931b73c59d7e0c089c0");
	passdb_free(&db);

	/* set() keeps comments and other lines verbatim */
	T_EQ(passdb_set(path, "bob", "Password01!"), 0);
	T_ASSERT(strstr(get_file(), "# rdax passdb\n\n   \t\n  # indented"));
	T_ASSERT(strstr(get_file(),
			"bob:7C4FE5EADA682714A036E39378362BAB\ncarol:"));
	T_ASSERT(strstr(get_file(), "carol:31d6cfe0d16ae931b73c59d7e0c089c0\n"));

	static const struct {
		const char *text;
		unsigned int line;
	} bad[] = {
		{ "alice:7c4fe5eada682714a036e39378362ba\n", 1 },   /* 31 */
		{ "a:b\nalice:7c4fe5eada682714a036e39378362bab0\n", 1 },
		{ "#\nalice 7c4fe5eada682714a036e39378362bab\n", 2 },
		{ "\n\n:7c4fe5eada682714a036e39378362bab\n", 3 },
		{ "x:7c4fe5eada682714a036e39378362bag\n", 1 },
		{ "x:7c4fe5eada682714a036e39378362bab\nX:7c4fe5eada682714a036e39378362bab\n", 2 },
		{ "x:y:7c4fe5eada682714a036e39378362bab\n", 1 },
		{ "\xff:7c4fe5eada682714a036e39378362bab\n", 1 },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		put_file(bad[i].text, 0600);
		line = 0;
		T_EQ(passdb_load_ex(path, &db, &line), -EINVAL);
		T_EQ(line, bad[i].line);
		T_ASSERT(db == NULL);
	}
	/* embedded NUL */
	{
		int fd = open(path, O_WRONLY | O_TRUNC);

		T_EQ(write(fd, "ok:7c4fe5eada682714a036e39378362bab\nx\0y:1\n",
			   42), 42);
		close(fd);
		T_EQ(passdb_load_ex(path, &db, &line), -EINVAL);
		T_EQ(line, 2);
	}
	/* empty file */
	put_file("", 0600);
	T_EQ(passdb_load(path, &db), 0);
	T_EQ(passdb_count(db), 0);
	T_EQ(passdb_lookup(db, "a", h), -ENOENT);
	passdb_free(&db);
}

static void names(void)
{
	static const char *bad[] = {
		"", "a:b", "a\nb", "a\rb", "#x", " x", "x ", "\tx", "\xc3",
		"a\x7f",
	};
	size_t i;

	t_section("user names refused by passdb_set");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		T_EQ(passdb_set(path, bad[i], "pw"), -EINVAL);
	T_EQ(passdb_set("/nonexistent-dir/passdb", "a", "pw"), -ENOENT);
}

/* passdb as the auth server's lookup */
static void with_auth(void)
{
	static uint8_t a[AUTH_TOKEN_MAX], b[AUTH_TOKEN_MAX];
	struct auth_client_cfg cc = { .user = "Alice", .password = "S3cret",
				      .spnego = true };
	struct auth_server_cfg sc = { .netbios_name = "RDAX",
				      .lookup = passdb_lookup_cb };
	struct auth_server *s;
	struct auth_client *c;
	struct auth_result r;
	struct passdb *db;
	size_t al, bl;

	t_section("auth server with passdb_lookup_cb");
	put_file("", 0600);
	T_EQ(passdb_set(path, "alice", "S3cret"), 0);
	T_EQ(passdb_load(path, &db), 0);
	sc.lookup_arg = db;
	T_EQ(auth_server_new(&s, &sc), 0);
	T_EQ(auth_client_new(&c, &cc), 0);
	T_EQ(auth_client_step(c, NULL, 0, a, sizeof(a), &al), 1);
	T_EQ(auth_server_step(s, a, al, b, sizeof(b), &bl), 1);
	T_EQ(auth_client_step(c, b, bl, a, sizeof(a), &al), 0);
	T_EQ(auth_server_step(s, a, al, b, sizeof(b), &bl), 0);
	T_EQ(auth_client_finish(c, b, bl), 0);
	T_EQ(auth_server_result(s, &r), 0);
	T_ASSERT(!strcmp(r.user, "Alice") && r.have_key);
	auth_server_delete(&s);
	auth_client_delete(&c);
	passdb_free(&db);
}

int main(void)
{
	/* OpenSSL, its legacy provider (MD4, RC4) included, is a build dependency */
	T_REQUIRE(crypto_init() == 0);
	/* a setup error is a failure, not a skip */
	T_REQUIRE(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/passdb", dir);
	basic();
	perms();
	parsing();
	names();
	with_auth();
	unlink(path);
	if (rmdir(dir))
		printf("warning: %s not empty\n", dir);
	return t_done();
}
