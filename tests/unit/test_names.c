// SPDX-License-Identifier: MIT
/*
 * names.c on a real directory tree: 8.3 names, case folding, and
 * srv_name_resolve (case variants, short names, a missing component, the
 * directory cache seeing changes, a symlink out of the root never read,
 * "case sensitive = yes").
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/server.h"
#include "t.h"

static char top[64];

static void touch(const char *rel)
{
	char p[256];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", top, rel);
	fd = open(p, O_CREAT | O_WRONLY, 0644);
	T_REQUIRE(fd >= 0);
	close(fd);
}

static void mkd(const char *rel)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", top, rel);
	T_REQUIRE(!mkdir(p, 0755));
}

/* resolve in into out; the return value */
static int res(struct srv_share *sh, const char *in, char *out)
{
	snprintf(out, 256, "%s", in);
	return srv_name_resolve(sh, out, 256);
}

static void test_short(void)
{
	char sn[13], sn2[13];

	t_section("8.3 names");
	T_ASSERT(srv_name_is_8_3("README.TXT"));
	T_ASSERT(srv_name_is_8_3("a.b"));
	T_ASSERT(srv_name_is_8_3("NOEXT"));
	T_ASSERT(!srv_name_is_8_3("toolongname.txt"));
	T_ASSERT(!srv_name_is_8_3("a.text"));
	T_ASSERT(!srv_name_is_8_3("a b.txt"));
	T_ASSERT(!srv_name_is_8_3("a.b.c"));
	T_ASSERT(!srv_name_is_8_3(".profile"));
	T_ASSERT(!srv_name_is_8_3(""));
	T_EQ(srv_name_short("short.txt", sn), 0);
	T_ASSERT(!strcmp(sn, "short.txt"));
	T_EQ(srv_name_short("torture_smb2_getfinfo_access", sn), 1);
	T_EQ(strlen(sn), 8u);
	T_EQ(sn[0], 'T');
	T_EQ(sn[6], '~');
	T_EQ(srv_name_short("Torture_SMB2_getfinfo_ACCESS", sn2), 1);
	T_ASSERT(!strcmp(sn, sn2));		/* case does not change it */
	T_EQ(srv_name_short("a long name.txt", sn), 1);
	T_EQ(strlen(sn), 12u);
	T_ASSERT(!strcmp(sn + 8, ".TXT"));
	T_EQ(srv_name_short(".bashrc", sn), 1);
	T_EQ(sn[0], 'B');
	T_ASSERT(!strchr(sn, '.'));		/* "bashrc" is no extension of a dot name */
	T_EQ(srv_name_short("\xc3\xa9t\xc3\xa9.dat", sn), 1);
	T_EQ(sn[0], 'T');			/* the first valid character */
	T_ASSERT(!strcmp(sn + 8, ".DAT"));

	t_section("case folding");
	T_ASSERT(srv_name_fold_eq("MixedCase.TXT", "mixedcase.txt"));
	T_ASSERT(srv_name_fold_eq("\xc3\x89t\xc3\xa9", "\xc3\xa9T\xc3\x89"));	/* Été */
	T_ASSERT(srv_name_fold_eq("\xd0\x90\xd0\xb1", "\xd0\xb0\xd0\x91"));	/* Аб */
	T_ASSERT(!srv_name_fold_eq("abc", "abd"));
	T_ASSERT(!srv_name_fold_eq("abc", "abcd"));
	T_ASSERT(srv_name_fold_eq("\xff\xfe", "\xff\xfe"));	/* bytes that are no UTF-8 */
}

static void test_resolve(void)
{
	struct srv_share *sh = calloc(1, sizeof(*sh));
	char out[256], sn[13], p[256];

	T_REQUIRE(sh);
	T_REQUIRE(mkdtemp(strcpy(top, "/tmp/rdax-names.XXXXXX")));
	mkd("Dir");
	mkd("Dir/Sub");
	touch("Dir/Sub/File.Txt");
	touch("Dir/a long file name.txt");
	mkd("outside");
	touch("outside/secret");
	T_REQUIRE(!mkdir(strcat(strcpy(p, top), "/root"), 0755));
	T_REQUIRE(!rename(strcat(strcpy(p, top), "/Dir"), strcat(strcpy(out, top), "/root/Dir")));
	T_REQUIRE(!symlink("../outside", strcat(strcpy(p, top), "/root/Link")));
	T_REQUIRE(!store_root_open(strcat(strcpy(p, top), "/root"), &sh->root));
	sh->dos.case_sensitive = SRV_CASE_AUTO;
	sh->dos.mangled_names = 1;

	t_section("case-insensitive lookup");
	T_EQ(res(sh, "Dir/Sub/File.Txt", out), 0);
	T_ASSERT(!strcmp(out, "Dir/Sub/File.Txt"));
	T_EQ(res(sh, "dir/SUB/file.txt", out), 0);
	T_ASSERT(!strcmp(out, "Dir/Sub/File.Txt"));
	T_EQ(res(sh, "DIR/sub/new.txt", out), 0);
	T_ASSERT(!strcmp(out, "Dir/Sub/new.txt"));	/* a new name: as given */
	T_EQ(res(sh, "dir/none/FILE.TXT", out), 0);
	T_ASSERT(!strcmp(out, "Dir/none/FILE.TXT"));	/* the rest as given */
	T_EQ(res(sh, "", out), 0);
	T_ASSERT(!strcmp(out, ""));

	t_section("the cache sees changes");
	touch("root/Dir/Sub/Later.txt");		/* just after a scan of Sub */
	T_EQ(res(sh, "dir/sub/LATER.TXT", out), 0);
	T_ASSERT(!strcmp(out, "Dir/Sub/Later.txt"));
	T_REQUIRE(!rename(strcat(strcpy(p, top), "/root/Dir/Sub/Later.txt"),
			  strcat(strcpy(out, top), "/root/Dir/Sub/Renamed.txt")));
	T_EQ(res(sh, "dir/sub/LATER.TXT", out), 0);
	T_ASSERT(!strcmp(out, "Dir/Sub/LATER.TXT"));	/* gone */
	T_EQ(res(sh, "dir/sub/RENAMED.TXT", out), 0);
	T_ASSERT(!strcmp(out, "Dir/Sub/Renamed.txt"));

	t_section("short names");
	T_EQ(srv_name_short("a long file name.txt", sn), 1);
	snprintf(p, sizeof(p), "DIR/%s", sn);
	T_EQ(res(sh, p, out), 0);
	T_ASSERT(!strcmp(out, "Dir/a long file name.txt"));
	sh->dos.mangled_names = 0;
	T_EQ(res(sh, p, out), 0);
	T_ASSERT(!strcmp(out + 4, sn));		/* mangled names = no: not matched */
	sh->dos.mangled_names = 1;

	t_section("confinement");
	T_EQ(res(sh, "link/SECRET", out), 0);
	T_ASSERT(!strcmp(out, "Link/SECRET"));	/* beneath Link is outside: not read */
	T_EQ(res(sh, "../outside/SECRET", out), 0);
	T_ASSERT(!strcmp(out, "../outside/SECRET"));
	T_EQ(res(sh, "Dir/../dir/SUB", out), 0);
	T_ASSERT(strcmp(out, "Dir/../Dir/Sub") == 0 || strcmp(out, "Dir/../dir/SUB") == 0);

	t_section("case sensitive = yes");
	sh->dos.case_sensitive = SRV_CASE_YES;
	T_EQ(res(sh, "dir/SUB/file.txt", out), 0);
	T_ASSERT(!strcmp(out, "dir/SUB/file.txt"));

	store_root_close(&sh->root);
	free(sh);
	snprintf(p, sizeof(p), "rm -rf '%s'", top);
	T_ASSERT(!system(p));
}

int main(void)
{
	test_short();
	test_resolve();
	return t_done();
}
