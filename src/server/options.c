// SPDX-License-Identifier: MIT
/*
 * rdaxd's option table (options.h): smb.conf parameters and command-line
 * options, parsed, documented and defaulted from the same rows.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proto/smb2.h"
#include "server/options.h"
#include "server/server.h"
#include "util/log.h"

#define G(f) .g = { offsetof(struct srv_config, f), sizeof(((struct srv_config *)0)->f) }
#define S(f) .s = { offsetof(struct srv_share, f), sizeof(((struct srv_share *)0)->f) }
#define S_SET(f) .s_set = { offsetof(struct srv_share, f), sizeof(bool) }
#define DOS(f) G(dos.f), S(dos.f)

static const struct srv_opt_word w_protocol[] = {
	{ "SMB2_02", SMB2_DIALECT_202 }, { "SMB2_10", SMB2_DIALECT_210 },
	{ "SMB2", SMB2_DIALECT_210 }, { "SMB3_00", SMB2_DIALECT_300 },
	{ "SMB3_02", SMB2_DIALECT_302 }, { "SMB3_11", SMB2_DIALECT_311 },
	{ "SMB3", SMB2_DIALECT_311 }, { NULL, 0 }
};

static const struct srv_opt_word w_signing[] = {
	{ "auto", SRV_SIGN_AUTO }, { "default", SRV_SIGN_AUTO },
	{ "if_required", SRV_SIGN_AUTO }, { "mandatory", SRV_SIGN_MANDATORY },
	{ "required", SRV_SIGN_MANDATORY }, { "disabled", SRV_SIGN_DISABLED },
	{ "no", SRV_SIGN_DISABLED }, { NULL, 0 }
};

static const struct srv_opt_word w_encrypt[] = {
	{ "off", SRV_ENC_OFF }, { "no", SRV_ENC_OFF }, { "disabled", SRV_ENC_OFF },
	{ "auto", SRV_ENC_AUTO }, { "default", SRV_ENC_AUTO },
	{ "if_required", SRV_ENC_AUTO }, { "desired", SRV_ENC_DESIRED },
	{ "required", SRV_ENC_REQUIRED }, { "mandatory", SRV_ENC_REQUIRED }, { NULL, 0 }
};

static const struct srv_opt_word w_numa[] = {
	{ "auto", SRV_NUMA_AUTO }, { "off", SRV_NUMA_OFF }, { "no", SRV_NUMA_OFF }, { NULL, 0 }
};

static const struct srv_opt_word w_poll[] = {
	{ "event", SRV_POLL_EVENT }, { "adaptive", SRV_POLL_ADAPTIVE }, { "busy", SRV_POLL_BUSY },
	{ NULL, 0 }
};

static const struct srv_opt_word w_map_to_guest[] = {
	{ "never", 0 }, { "bad user", 1 }, { NULL, 0 }
};

static const struct srv_opt_word w_store[] = {
	{ "auto", SRV_STORE_AUTO }, { "dax", SRV_STORE_DAX }, { "posix", SRV_STORE_POSIX },
	{ NULL, 0 }
};

static const struct srv_opt_word w_rung[] = {
	{ "auto", MEM_RUNG_AUTO }, { "direct", MEM_RUNG_DIRECT }, { "odp", MEM_RUNG_ODP },
	{ "bounce", MEM_RUNG_BOUNCE }, { NULL, 0 }
};

static const struct srv_opt_word w_map_ro[] = {
	{ "no", SRV_MAP_RO_NO }, { "false", SRV_MAP_RO_NO }, { "off", SRV_MAP_RO_NO },
	{ "0", SRV_MAP_RO_NO }, { "yes", SRV_MAP_RO_YES }, { "true", SRV_MAP_RO_YES },
	{ "on", SRV_MAP_RO_YES }, { "1", SRV_MAP_RO_YES },
	{ "permissions", SRV_MAP_RO_PERMS }, { NULL, 0 }
};

static const struct srv_opt_word w_case[] = {
	{ "auto", SRV_CASE_AUTO }, { "yes", SRV_CASE_YES }, { "true", SRV_CASE_YES },
	{ "on", SRV_CASE_YES }, { "1", SRV_CASE_YES }, { "no", SRV_CASE_NO },
	{ "false", SRV_CASE_NO }, { "off", SRV_CASE_NO }, { "0", SRV_CASE_NO }, { NULL, 0 }
};

static const struct srv_opt_word w_bool[] = {
	{ "yes", 1 }, { "true", 1 }, { "on", 1 }, { "1", 1 },
	{ "no", 0 }, { "false", 0 }, { "off", 0 }, { "0", 0 }, { NULL, 0 }
};

/* for each token of a list: fn(c, token) */
static int each_token(struct srv_opt_ctx *c, const char *v,
		      int (*fn)(struct srv_opt_ctx *c, const char *tok))
{
	char *dup = strdup(v), *tok, *save = NULL;
	int ret = 0;

	if (!dup)
		return -ENOMEM;
	for (tok = strtok_r(dup, ", \t", &save); tok && !ret;
	     tok = strtok_r(NULL, ", \t", &save))
		ret = fn(c, tok);
	free(dup);
	return ret;
}

static int listen_one(struct srv_opt_ctx *c, const char *url)
{
	return srv_config_parse_listen(c->cfg, url);
}

static int hook_listen(struct srv_opt_ctx *c, const struct srv_opt *o, const char *v, int64_t n)
{
	return each_token(c, v, listen_one);
}

static int port_one(struct srv_opt_ctx *c, const char *port)
{
	char url[64];

	snprintf(url, sizeof(url), "tcp://0.0.0.0:%s", port);
	return srv_config_parse_listen(c->cfg, url);
}

static int hook_smb_ports(struct srv_opt_ctx *c, const struct srv_opt *o, const char *v,
			  int64_t n)
{
	return each_token(c, v, port_one);
}

/* "vfs objects": rdaxd has none, but streams_xattr's streams it keeps. */
static int hook_vfs(struct srv_opt_ctx *c, const struct srv_opt *o, const char *v, int64_t n)
{
	const char *p = v;
	size_t len = strlen("streams_xattr");
	int8_t has = 0;

	while ((p = strcasestr(p, "streams_xattr"))) {
		if ((p == v || strchr(" ,\t", p[-1])) && (!p[len] || strchr(" ,\t", p[len]))) {
			has = 1;
			break;
		}
		p += len;
	}
	if (c->share)
		c->share->streams_want = has;
	else
		c->cfg->streams = has;
	return 0;
}

/* [global] guest ok: every share's default, and guests must log on */
static int hook_guest_ok(struct srv_opt_ctx *c, const struct srv_opt *o, const char *v,
			 int64_t n)
{
	if (c->share) {
		c->share->guest_ok = n;
		if (!c->dflt)
			c->share->guest_ok_set = true;
		return 0;
	}
	c->cfg->guest_ok_default = n;
	if (n)
		c->cfg->map_to_guest = true;
	return 0;
}

static int user_one(struct srv_opt_ctx *c, const char *tok)
{
	struct srv_share *sh = c->share;
	/* NULL-terminated: a reload swaps the whole array */
	char **nv = realloc(sh->valid_users, sizeof(char *) * (size_t)(sh->nvalid + 2));

	if (!nv)
		return -ENOMEM;
	sh->valid_users = nv;
	sh->valid_users[sh->nvalid] = strdup(tok);
	if (sh->valid_users[sh->nvalid])
		sh->nvalid++;
	sh->valid_users[sh->nvalid] = NULL;
	return 0;
}

static int hook_valid_users(struct srv_opt_ctx *c, const struct srv_opt *o, const char *v,
			    int64_t n)
{
	return each_token(c, v, user_one);
}

static int hook_force_group(struct srv_opt_ctx *c, const struct srv_opt *o, const char *v,
			    int64_t n)
{
	struct srv_share *sh = c->share;
	bool member = *v == '+';

	v += member;
	if (!*v || strlen(v) >= sizeof(sh->force_group))
		return -EINVAL;
	sh->force_group_member = member;
	strcpy(sh->force_group, v);
	return 0;
}

static int hook_dax_name(struct srv_opt_ctx *c, const struct srv_opt *o, const char *v,
			 int64_t n)
{
	struct srv_share *sh = c->share;

	if (!*v || strpbrk(v, "/\\:*?\"<>|") || strlen(v) >= sizeof(sh->dax_name) ||
	    !strcmp(v, ".") || !strcmp(v, ".."))
		return -EINVAL;
	strcpy(sh->dax_name, v);
	return 0;
}

/* "" or "none": no control socket; a sockaddr_un path otherwise */
static int hook_control(struct srv_opt_ctx *c, const struct srv_opt *o, const char *v,
			int64_t n)
{
	if (!strcasecmp(v, "none"))
		v = "";
	if ((*v && *v != '/') || strlen(v) >= 108)
		return -EINVAL;
	strcpy(c->cfg->control_path, v);
	c->cfg->control_set = !c->dflt;
	return 0;
}

static int hook_log_level(struct srv_opt_ctx *c, const struct srv_opt *o, const char *v,
			  int64_t n)
{
	c->cfg->log_level = n >= 3 ? LOG_DEBUG : n >= 1 ? LOG_INFO : LOG_NOTICE;
	return 0;
}

static int hook_rdma_keepalive(struct srv_opt_ctx *c, const struct srv_opt *o,
			       const char *v, int64_t n)
{
	c->cfg->smbd.keepalive_ms = (int)n * 1000;
	return 0;
}

#define GLOBAL SRV_OPT_GLOBAL
#define SHARE SRV_OPT_SHARE
#define BOTH (SRV_OPT_GLOBAL | SRV_OPT_SHARE)
#define CLI SRV_OPT_CLI
#define RESTART SRV_OPT_RESTART
#define NOONLY SRV_OPT_NOONLY
#define SAMBA_KSMBD "Samba, ksmbd"

const struct srv_opt srv_opts[] = {
	/* the command line only */
	{ .lopt = "share", .sopt = 's', .arg = "NAME=PATH", .type = SRV_OPT_STRING, .scope = CLI,
	  .help = "export PATH as share NAME (read-write); repeat for more" },
	{ .lopt = "config", .sopt = 'C', .arg = "FILE", .type = SRV_OPT_STRING, .scope = CLI,
	  .help = "smb.conf-syntax configuration (rdax.conf(5)), read before the options" },
	{ .lopt = "guest", .sopt = 'g', .type = SRV_OPT_FLAG, .scope = CLI,
	  .help = "every share guest ok; unknown users become guests" },
	{ .lopt = "option", .sopt = 'o', .arg = "'NAME=VALUE'", .type = SRV_OPT_STRING,
	  .scope = CLI,
	  .help = "any smb.conf parameter; a share parameter applies to the --share shares" },
	{ .lopt = "test-config", .sopt = 't', .type = SRV_OPT_FLAG, .scope = CLI,
	  .help = "check the configuration and exit" },
	{ .lopt = "verbose", .sopt = 'v', .type = SRV_OPT_FLAG, .scope = CLI,
	  .help = "more logging (repeat for debug)" },
	{ .lopt = "version", .sopt = 'V', .type = SRV_OPT_FLAG, .scope = CLI,
	  .help = "print the version and exit" },
	{ .lopt = "help", .sopt = 'h', .type = SRV_OPT_FLAG, .scope = CLI,
	  .help = "this help" },
	{ .lopt = "list-params", .type = SRV_OPT_FLAG, .scope = CLI,
	  .help = "print the smb.conf parameter table (tab-separated) and exit" },

	/* [global] */
	{ "listen", .lopt = "listen", .sopt = 'l', .arg = "URL", .type = SRV_OPT_LIST,
	  .scope = GLOBAL, .flags = RESTART, G(listen), .hook = hook_listen,
	  .def_doc = "tcp://0.0.0.0:445",
	  .help = "listen on tcp://ADDR:PORT or rdma://ADDR:PORT (SMB-Direct)" },
	{ "smb ports", .arg = "PORT", .type = SRV_OPT_LIST, .scope = GLOBAL,
	  .hook = hook_smb_ports, .def_doc = "445",
	  .help = "listen on tcp://0.0.0.0:PORT for each PORT", .peer = "Samba" },
	{ "passdb file", .lopt = "passdb", .sopt = 'p', .arg = "FILE", .type = SRV_OPT_STRING,
	  .scope = GLOBAL, G(passdb_path), .def_doc = "none",
	  .help = "NT-hash password file (see 'rdax passwd'); re-read by a reload" },
	{ "username map", .lopt = "username-map", .arg = "FILE", .type = SRV_OPT_STRING,
	  .scope = GLOBAL, G(usermap_path), .def_doc = "none",
	  .help = "SMB user names to Unix accounts; re-read by a reload", .peer = "Samba" },
	{ "rdax control socket", .lopt = "control", .arg = "PATH", .type = SRV_OPT_STRING,
	  .scope = GLOBAL, .hook = hook_control, .def = SRV_CONTROL_DEFAULT,
	  .help = "the unix socket rdaxctl(8) talks to; none: no socket" },
	{ "server signing", .lopt = "signing", .arg = "MODE", .type = SRV_OPT_ENUM,
	  .scope = GLOBAL, .flags = RESTART, .words = w_signing, G(signing), .def = "auto",
	  .help = "mandatory: every session is signed", .peer = SAMBA_KSMBD },
	{ "smb encrypt", { "server smb encrypt" }, .lopt = "encrypt", .arg = "MODE",
	  .type = SRV_OPT_ENUM, .scope = GLOBAL, .flags = RESTART, .words = w_encrypt,
	  G(encrypt), .def = "auto",
	  .help = "auto: clients may encrypt; desired: offered to all; required: or refused",
	  .peer = "Samba (ksmbd: smb3 encryption)" },
	{ "server max protocol", .lopt = "max-protocol", .arg = "PROTOCOL",
	  .type = SRV_OPT_ENUM, .scope = GLOBAL, .flags = RESTART, .words = w_protocol,
	  G(max_dialect), .def = "SMB3_11", .help = "the highest dialect accepted",
	  .peer = SAMBA_KSMBD },
	{ "server min protocol", .lopt = "min-protocol", .arg = "PROTOCOL",
	  .type = SRV_OPT_ENUM, .scope = GLOBAL, .flags = RESTART, .words = w_protocol,
	  G(min_dialect), .def = "SMB2_10", .help = "the lowest dialect accepted",
	  .peer = SAMBA_KSMBD },
	{ "workers", .lopt = "workers", .sopt = 'w', .arg = "N", .type = SRV_OPT_INT,
	  .scope = GLOBAL, .flags = RESTART, .min = 0, .max = 256, G(workers), .def = "0",
	  .def_doc = "0 (one per CPU)", .help = "worker threads; 0: one per online CPU" },
	{ "numa node", .arg = "N", .type = SRV_OPT_INT, .scope = GLOBAL, .flags = RESTART,
	  .min = 0, .max = 1023, .words = w_numa, G(numa_node), .def = "auto",
	  .help = "the node workers run and allocate on; auto: the listener devices' node" },
	{ "guest account", .arg = "USER", .type = SRV_OPT_STRING, .scope = GLOBAL,
	  .flags = SRV_OPT_NONEMPTY | RESTART, G(guest_account), .def = "nobody",
	  .help = "the Unix account guests act as", .peer = SAMBA_KSMBD },
	{ "map to guest", .arg = "MODE", .type = SRV_OPT_ENUM, .scope = GLOBAL,
	  .flags = RESTART, .words = w_map_to_guest, G(map_to_guest), .def = "never",
	  .help = "bad user: a logon as an unknown user becomes a guest session",
	  .peer = SAMBA_KSMBD },
	{ "interfaces", .arg = "ENTRY", .type = SRV_OPT_LIST, .scope = GLOBAL,
	  .flags = RESTART, G(interfaces), .def_doc = "every address a listener serves",
	  .help = "what network interface info tells clients (names, addresses, networks)",
	  .peer = SAMBA_KSMBD },
	{ "bind interfaces only", .type = SRV_OPT_BOOL, .scope = GLOBAL, .def_doc = "yes",
	  .help = "accepted: the listeners are always the ones given", .peer = SAMBA_KSMBD },
	{ "state directory", .arg = "DIR", .type = SRV_OPT_STRING, .scope = GLOBAL,
	  .flags = SRV_OPT_ABSPATH | RESTART, G(state_dir), .def = "/var/lib/rdax",
	  .help = "where the journals of continuously available shares live",
	  .peer = "Samba" },
	{ "server multi channel support", .type = SRV_OPT_BOOL, .scope = GLOBAL,
	  .flags = RESTART, G(multichannel), .def = "yes",
	  .help = "clients may bind more connections to a session", .peer = SAMBA_KSMBD },
	{ "server smb3 encryption over rdma", .type = SRV_OPT_BOOL, .scope = GLOBAL,
	  .flags = RESTART, G(rdma_transform), .def = "no",
	  .help = "SMB-Direct, SMB 3.1.1: the RDMA transform, signed/encrypted I/O by RDMA" },
	{ "smb2 leases", .type = SRV_OPT_BOOL, .scope = GLOBAL, .flags = RESTART, G(leases),
	  .def = "yes", .help = "grant SMB 2.1 and SMB 3 leases", .peer = SAMBA_KSMBD },
	{ "smb3 directory leases", .type = SRV_OPT_BOOL, .scope = GLOBAL, .flags = RESTART,
	  G(dir_leases), .def = "yes", .help = "grant leases on directories too",
	  .peer = "Samba" },
	{ "kernel oplocks", .type = SRV_OPT_BOOL, .scope = GLOBAL, .flags = NOONLY, .def_doc = "no",
	  .help = "no only: rdaxd keeps oplocks itself", .peer = "Samba" },
	{ "kernel share modes", .type = SRV_OPT_BOOL, .scope = GLOBAL, .flags = NOONLY,
	  .def_doc = "no", .help = "no only: rdaxd keeps share modes itself", .peer = "Samba" },
	{ "posix locking", .type = SRV_OPT_BOOL, .scope = GLOBAL, .flags = NOONLY, .def_doc = "no",
	  .help = "no only: rdaxd keeps byte-range locks itself", .peer = "Samba" },
	{ "io uring", .type = SRV_OPT_BOOL, .scope = GLOBAL, .flags = RESTART, G(io_uring),
	  .def = "yes", .help = "posix-store I/O through each worker's io_uring",
	  .peer = "Samba: vfs objects = io_uring" },
	{ "tcp async write", .type = SRV_OPT_BOOL, .scope = GLOBAL, .flags = RESTART,
	  G(tcp_async_write), .def = "no",
	  .help = "a lone unencrypted TCP WRITE of 64 KiB or more is stored by io_uring's "
		  "workers while the worker reads the next request (pays only with a spare CPU)" },
	{ "netbios name", .arg = "NAME", .type = SRV_OPT_STRING, .scope = GLOBAL,
	  .flags = RESTART, G(netbios_name), .def = "RDAX",
	  .help = "the server's name in NTLM messages", .peer = SAMBA_KSMBD },
	{ "workgroup", .arg = "NAME", .type = SRV_OPT_STRING, .scope = GLOBAL,
	  .flags = RESTART, G(workgroup), .def = "WORKGROUP",
	  .help = "the domain name in NTLM messages", .peer = SAMBA_KSMBD },
	{ "server string", .arg = "TEXT", .type = SRV_OPT_STRING, .scope = GLOBAL,
	  G(server_string), .def = "rdax " RDAX_VERSION,
	  .help = "the server's comment (NetServerGetInfo, IPC$)", .peer = SAMBA_KSMBD },
	{ "max connections", .arg = "N", .type = SRV_OPT_INT, .scope = GLOBAL,
	  .flags = RESTART, .min = 1, .max = 1000000, G(max_connections), .def = "1024",
	  .help = "connections beyond N are refused", .peer = "ksmbd (Samba: per share)" },
	{ "max open files", .arg = "N", .type = SRV_OPT_INT, .scope = GLOBAL,
	  .flags = RESTART, .min = 1, .max = 1000000, G(max_opens), .def = "16384",
	  .help = "open files per session", .peer = SAMBA_KSMBD },
	{ "max sessions per connection", .arg = "N", .type = SRV_OPT_INT, .scope = GLOBAL,
	  .flags = RESTART, .min = 1, .max = 65535, G(max_sessions), .def = "64",
	  .help = "sessions on one connection, those being set up included" },
	{ "receive timeout", .arg = "SECONDS", .type = SRV_OPT_INT, .scope = GLOBAL,
	  .flags = RESTART, .min = 0, .max = 65535, G(receive_timeout), .def = "30",
	  .help = "TCP: how long a message may take to arrive; 0: no limit" },
	{ "log level", .arg = "N", .type = SRV_OPT_INT, .scope = GLOBAL, .min = 0,
	  .max = 1000000, .hook = hook_log_level, .def = "0",
	  .help = "0 notices, 1-2 info, 3 and above debug; a reload applies it",
	  .peer = "Samba" },
	{ "smbd max io size", .arg = "SIZE", .type = SRV_OPT_SIZE, .scope = GLOBAL,
	  .flags = RESTART, .min = 512 << 10, .max = 16 << 20,
	  G(smbd.max_read_write_size), .def = "8M",
	  .help = "SMB-Direct: the largest RDMA transfer per request", .peer = "ksmbd" },
	{ "rdma keepalive", .arg = "SECONDS", .type = SRV_OPT_INT, .scope = GLOBAL,
	  .flags = RESTART, .min = 0, .max = 3600, .hook = hook_rdma_keepalive, .def = "120",
	  .help = "SMB-Direct: an idle channel is probed after SECONDS and dropped when "
		  "the probe is not answered in as many again; 0: never (MS-SMBD "
		  "KeepaliveInterval)" },
	{ "rdma bounce size", .arg = "SIZE", .type = SRV_OPT_SIZE, .scope = GLOBAL,
	  .flags = RESTART, .min = 1 << 20, .max = 16ll << 30, G(bounce_size), .def = "64M",
	  .help = "SMB-Direct: each worker's registered bounce buffer per device" },
	{ "rdma poll", .arg = "MODE", .type = SRV_OPT_ENUM, .scope = GLOBAL, .flags = RESTART,
	  .words = w_poll, G(poll_mode), .def = "adaptive",
	  .help = "how a worker waits for completions: event (sleep at once), adaptive (spin "
		  "on the completion queues and sockets for rdma poll spin, then sleep), busy "
		  "(never sleep)" },
	{ "rdma poll spin", .arg = "USEC", .type = SRV_OPT_INT, .scope = GLOBAL,
	  .flags = RESTART, .min = 1, .max = 100000, G(poll_spin_us), .def = "50",
	  .help = "adaptive polling: microseconds a worker spins after its last work" },

	/* [global] or a share (a [global] value is every share's default) */
	{ "guest ok", { "public" }, .type = SRV_OPT_BOOL, .scope = BOTH,
	  .hook = hook_guest_ok, .def = "no",
	  .help = "guests may use the share; in [global] also map to guest = bad user",
	  .peer = SAMBA_KSMBD },
	{ "oplocks", .type = SRV_OPT_BOOL, .scope = BOTH, G(oplocks), S(oplocks),
	  S_SET(oplocks_set), .def = "yes",
	  .help = "grant oplocks; no oplocks means no leases either", .peer = SAMBA_KSMBD },
	{ "smb3 unix extensions", .type = SRV_OPT_BOOL, .scope = BOTH, G(posix), S(posix),
	  S_SET(posix_set), .def = "no",
	  .help = "SMB3 POSIX extensions: modes, owners, symlinks, POSIX names (docs/posix.md)",
	  .peer = "Samba" },
	{ "use sendfile", .type = SRV_OPT_BOOL, .scope = BOTH, G(use_sendfile), S(use_sendfile),
	  S_SET(use_sendfile_set), .def = "yes",
	  .help = "a TCP READ of 16 KiB or more goes from the page cache to the socket by "
		  "sendfile(2); no: read into the response and sent from there (posix "
		  "store; a DAX share sends from its mapping either way)",
	  .peer = "Samba (default no)" },
	{ "vfs objects", .arg = "LIST", .type = SRV_OPT_LIST, .scope = BOTH, .hook = hook_vfs,
	  .def_doc = "streams_xattr",
	  .help = "only streams_xattr means anything: without it, no named streams",
	  .peer = SAMBA_KSMBD },
	{ "store dos attributes", .type = SRV_OPT_BOOL, .scope = BOTH, DOS(store),
	  .def_doc = "yes", .help = "DOS attributes in the user.DOSATTRIB xattr",
	  .peer = SAMBA_KSMBD },
	{ "map archive", .type = SRV_OPT_BOOL, .scope = BOTH, DOS(map_archive),
	  .def_doc = "yes", .help = "without the xattr, ARCHIVE is u+x", .peer = "Samba" },
	{ "map hidden", .type = SRV_OPT_BOOL, .scope = BOTH, DOS(map_hidden),
	  .def_doc = "no", .help = "without the xattr, HIDDEN is o+x", .peer = "Samba" },
	{ "map system", .type = SRV_OPT_BOOL, .scope = BOTH, DOS(map_system),
	  .def_doc = "no", .help = "without the xattr, SYSTEM is g+x", .peer = "Samba" },
	{ "map readonly", .arg = "MODE", .type = SRV_OPT_ENUM, .scope = BOTH,
	  .words = w_map_ro, DOS(map_readonly), .def_doc = "no",
	  .help = "READONLY from the owner's write bit (yes, permissions)", .peer = "Samba" },
	{ "hide dot files", .type = SRV_OPT_BOOL, .scope = BOTH, DOS(hide_dot),
	  .def_doc = "yes", .help = "names starting with a dot are HIDDEN",
	  .peer = SAMBA_KSMBD },
	{ "delete readonly", .type = SRV_OPT_BOOL, .scope = BOTH, DOS(delete_readonly),
	  .def_doc = "no", .help = "READONLY files may be deleted", .peer = "Samba" },
	{ "case sensitive", { "casesignames" }, .arg = "MODE", .type = SRV_OPT_ENUM,
	  .scope = BOTH, .words = w_case, DOS(case_sensitive), .def_doc = "auto",
	  .help = "auto, no: a name not found as given is looked up ignoring case "
		  "(POSIX opens: never); yes: names are the file system's",
	  .peer = "Samba" },
	{ "mangled names", .type = SRV_OPT_BOOL, .scope = BOTH, DOS(mangled_names),
	  .def_doc = "yes", .help = "8.3 short names (NAME~X.EXT) for long names", .peer = "Samba" },

	/* a share */
	{ "path", .arg = "DIR", .type = SRV_OPT_STRING, .scope = SHARE,
	  .flags = SRV_OPT_NONEMPTY, S(path), .def_doc = "none (required)",
	  .help = "the directory to export", .peer = SAMBA_KSMBD },
	{ "read only", .type = SRV_OPT_BOOL, .scope = SHARE, S(read_only), .def = "no",
	  .help = "refuse writes", .peer = SAMBA_KSMBD },
	{ "writable", { "writeable", "write ok" }, .type = SRV_OPT_BOOL, .scope = SHARE,
	  .flags = SRV_OPT_INVERT, S(read_only), .def_doc = "yes",
	  .help = "the opposite of read only", .peer = SAMBA_KSMBD },
	{ "valid users", .arg = "USERS", .type = SRV_OPT_LIST, .scope = SHARE,
	  .hook = hook_valid_users, .def_doc = "everyone",
	  .help = "only these users (@GROUP, +GROUP: its members) may use the share",
	  .peer = SAMBA_KSMBD },
	{ "comment", .arg = "TEXT", .type = SRV_OPT_STRING, .scope = SHARE, S(comment),
	  .def = "", .help = "the share's remark in share lists", .peer = SAMBA_KSMBD },
	{ "browseable", { "browsable" }, .type = SRV_OPT_BOOL, .scope = SHARE, S(browseable),
	  .def = "yes", .help = "listed in share lists", .peer = SAMBA_KSMBD },
	{ "available", .type = SRV_OPT_BOOL, .scope = SHARE, .def_doc = "yes",
	  .help = "accepted, and nothing more", .peer = SAMBA_KSMBD },
	{ "force user", .arg = "USER", .type = SRV_OPT_STRING, .scope = SHARE,
	  .flags = SRV_OPT_NONEMPTY, S(force_user), .def_doc = "none",
	  .help = "every file operation on the share acts as this Unix account",
	  .peer = SAMBA_KSMBD },
	{ "force group", { "group" }, .arg = "[+]GROUP", .type = SRV_OPT_STRING,
	  .scope = SHARE, .hook = hook_force_group, .def_doc = "none",
	  .help = "... with this primary group (+: only for its members)",
	  .peer = SAMBA_KSMBD },
	{ "rdax special files", .type = SRV_OPT_BOOL, .scope = SHARE, S(special_files),
	  .def = "no",
	  .help = "FSCTL_SET_REPARSE_POINT may make FIFOs and sockets from NFS reparse buffers" },
	{ "continuous availability", .type = SRV_OPT_BOOL, .scope = SHARE, S(ca),
	  .def = "no", .help = "persistent handles, kept in a journal across restarts",
	  .peer = "ksmbd" },
	{ "ca journal", .arg = "PATH", .type = SRV_OPT_STRING, .scope = SHARE,
	  .flags = SRV_OPT_ABSPATH, S(ca_journal),
	  .def_doc = "STATE-DIRECTORY/ca-NAME.journal",
	  .help = "where the journal of a continuously available share lives" },
	{ "store", .lopt = "store", .arg = "STORE", .type = SRV_OPT_ENUM, .scope = SHARE,
	  .words = w_store, S(store_want), .def = "auto",
	  .help = "auto: dax on a DAX mount, else posix" },
	{ "dax device", .arg = "DEVICE", .type = SRV_OPT_STRING, .scope = SHARE,
	  .flags = SRV_OPT_ABSPATH, S(dax_device), .def_doc = "none",
	  .help = "serve a device-DAX namespace as one file (instead of path)" },
	{ "dax file name", .arg = "NAME", .type = SRV_OPT_STRING, .scope = SHARE,
	  .hook = hook_dax_name, .def_doc = "the device's name",
	  .help = "the name of the dax device's file in the share" },
	{ "rdma registration", .arg = "RUNG", .type = SRV_OPT_ENUM, .scope = SHARE,
	  .words = w_rung, S(rung_want), .def = "auto",
	  .help = "how SMB-Direct I/O reaches the data: direct, odp or bounce" },
};

const size_t srv_nopts = sizeof(srv_opts) / sizeof(srv_opts[0]);

const struct srv_opt *srv_opt_find(const char *name)
{
	size_t i, k;

	for (i = 0; i < srv_nopts; i++) {
		const struct srv_opt *o = &srv_opts[i];

		if (!o->name)
			continue;
		if (!strcasecmp(o->name, name))
			return o;
		for (k = 0; k < 3 && o->alias[k]; k++)
			if (!strcasecmp(o->alias[k], name))
				return o;
	}
	return NULL;
}

static int word_value(const struct srv_opt_word *w, const char *v, int64_t *n)
{
	for (; w && w->word; w++)
		if (!strcasecmp(w->word, v)) {
			*n = w->value;
			return 0;
		}
	return -EINVAL;
}

/* 123, 64K, 8M, 2G (binary units, as smb.conf and ksmbd take them) */
static int parse_size(const char *v, int64_t *out)
{
	unsigned long long n;
	unsigned int shift = 0;
	char *end;

	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno || end == v || *v == '-')
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	default: break;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end || n > (unsigned long long)INT64_MAX >> shift)
		return -EINVAL;
	*out = (int64_t)(n << shift);
	return 0;
}

static int parse_value(const struct srv_opt *o, const char *v, int64_t *n)
{
	char *end;

	*n = 0;
	switch (o->type) {
	case SRV_OPT_BOOL:
		if (word_value(w_bool, v, n) || (*n && (o->flags & SRV_OPT_NOONLY)))
			return -EINVAL;
		return 0;
	case SRV_OPT_ENUM:
		return word_value(o->words, v, n);
	case SRV_OPT_INT:
		if (!word_value(o->words, v, n))
			return 0;
		errno = 0;
		*n = strtoll(v, &end, 10);
		if (errno || end == v || *end)
			return -EINVAL;
		break;
	case SRV_OPT_SIZE:
		if (parse_size(v, n))
			return -EINVAL;
		break;
	default:
		return 0;
	}
	return *n < o->min || *n > o->max ? -EINVAL : 0;
}

static void store_num(void *p, size_t size, int64_t n)
{
	switch (size) {
	case 1: *(int8_t *)p = (int8_t)n; break;
	case 2: *(uint16_t *)p = (uint16_t)n; break;
	case 4: *(int32_t *)p = (int32_t)n; break;
	case 8: *(int64_t *)p = n; break;
	}
}

int srv_opt_set(struct srv_opt_ctx *c, const struct srv_opt *o, const char *v)
{
	const struct srv_opt_field *f = c->share ? &o->s : &o->g;
	char *base = c->share ? (char *)c->share : (char *)c->cfg;
	int64_t n;
	int ret;

	if (!(o->scope & (c->share ? SRV_OPT_SHARE : SRV_OPT_GLOBAL)))
		return -ENOENT;
	ret = parse_value(o, v, &n);
	if (ret)
		return ret;
	if (o->flags & SRV_OPT_INVERT)
		n = !n;
	if (o->type == SRV_OPT_STRING || o->type == SRV_OPT_LIST) {
		if (((o->flags & SRV_OPT_NONEMPTY) && !*v) ||
		    ((o->flags & SRV_OPT_ABSPATH) && *v != '/'))
			return -EINVAL;
	}
	if (o->hook)
		return o->hook(c, o, v, n);
	if (!f->size)
		return 0;		/* accepted, nothing to keep */
	if (o->type == SRV_OPT_STRING || o->type == SRV_OPT_LIST) {
		if (strlen(v) >= f->size)
			return -EINVAL;
		strcpy(base + f->off, v);
	} else {
		store_num(base + f->off, f->size, n);
	}
	if (c->share && o->s_set.size && !c->dflt)
		*(bool *)(base + o->s_set.off) = true;
	return 0;
}

void srv_opt_defaults(struct srv_config *cfg, struct srv_share *sh)
{
	struct srv_opt_ctx c = { .cfg = cfg, .share = sh, .dflt = true };
	size_t i;

	for (i = 0; i < srv_nopts; i++) {
		const struct srv_opt *o = &srv_opts[i];

		if (o->def && (o->scope & (sh ? SRV_OPT_SHARE : SRV_OPT_GLOBAL)) &&
		    srv_opt_set(&c, o, o->def))
			log_msg(LOG_ERR, "option table: bad default '%s' for '%s'", o->def,
				o->name);
	}
}

/* "auto|default, mandatory|required": words of one value joined by | */
void srv_opt_words(const struct srv_opt *o, char *buf, size_t len)
{
	const struct srv_opt_word *w, *p;
	size_t n = 0;

	buf[0] = 0;
	for (w = o->words; w && w->word && n < len; w++) {
		for (p = o->words; p != w && p->value != w->value; p++)
			;
		n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? (p == w ? ", " : "|") : "",
				     w->word);
	}
}

static const char *type_name(const struct srv_opt *o)
{
	static const char *const names[] = {
		[SRV_OPT_FLAG] = "flag", [SRV_OPT_BOOL] = "bool", [SRV_OPT_INT] = "int",
		[SRV_OPT_SIZE] = "size", [SRV_OPT_ENUM] = "enum", [SRV_OPT_STRING] = "string",
		[SRV_OPT_LIST] = "list",
	};

	return names[o->type];
}

static const char *def_text(const struct srv_opt *o)
{
	return o->def_doc ? o->def_doc : o->def ? o->def : "";
}

/* What values it takes, for --help and the manual. */
static void values_text(const struct srv_opt *o, char *buf, size_t len)
{
	size_t n;

	switch (o->type) {
	case SRV_OPT_BOOL:
		snprintf(buf, len, "%s", o->flags & SRV_OPT_NOONLY ? "no|false|off|0" :
			 "yes|true|on|1, no|false|off|0");
		break;
	case SRV_OPT_ENUM:
		srv_opt_words(o, buf, len);
		break;
	case SRV_OPT_INT:
		srv_opt_words(o, buf, len);
		n = strlen(buf);
		snprintf(buf + n, len - n, "%s%lld..%lld", n ? ", " : "", (long long)o->min,
			 (long long)o->max);
		break;
	case SRV_OPT_SIZE:
		snprintf(buf, len, "%lldK..%lldK", (long long)o->min >> 10, (long long)o->max >> 10);
		break;
	default:
		buf[0] = 0;
	}
}

/* text wrapped at column 79, every line from column 28 */
static void usage_text(FILE *f, const char *p)
{
	int n;

	while (*p) {
		n = (int)strlen(p);
		if (n > 79 - 28) {
			n = 79 - 28;
			while (n > 0 && p[n] != ' ')
				n--;
			if (!n)
				n = 79 - 28;
		}
		fprintf(f, "%.*s\n", n, p);
		p += n;
		while (*p == ' ')
			p++;
		if (*p)
			fprintf(f, "%28s", "");
	}
}

void srv_opt_usage(FILE *f)
{
	char head[96], text[512], vals[256];
	size_t i;
	int n;

	for (i = 0; i < srv_nopts; i++) {
		const struct srv_opt *o = &srv_opts[i];

		if (!o->lopt)
			continue;
		if (o->sopt)
			n = snprintf(head, sizeof(head), "  -%c, --%s%s%s", o->sopt, o->lopt,
				     o->arg ? " " : "", o->arg ? o->arg : "");
		else
			n = snprintf(head, sizeof(head), "      --%s%s%s", o->lopt,
				     o->arg ? " " : "", o->arg ? o->arg : "");
		values_text(o, vals, sizeof(vals));
		snprintf(text, sizeof(text), "%s%s%s%s%s%s%s%s", o->help,
			 vals[0] ? " (" : "", vals, vals[0] ? ")" : "",
			 def_text(o)[0] ? "; default " : "", def_text(o),
			 o->name ? "; smb.conf: " : "", o->name ? o->name : "");
		if (n >= 27)
			fprintf(f, "%s\n%28s", head, "");
		else
			fprintf(f, "%s%*s", head, 28 - n, "");
		usage_text(f, text);
	}
}

void srv_opt_list(FILE *f)
{
	char vals[256], alias[128];
	size_t i, k, n;

	for (i = 0; i < srv_nopts; i++) {
		const struct srv_opt *o = &srv_opts[i];

		if (!o->name)
			continue;
		values_text(o, vals, sizeof(vals));
		alias[0] = 0;
		for (k = n = 0; k < 3 && o->alias[k]; k++)
			n += (size_t)snprintf(alias + n, sizeof(alias) - n, "%s%s", n ? ", " : "",
					      o->alias[k]);
		fprintf(f, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", o->name, alias,
			o->scope == (SRV_OPT_GLOBAL | SRV_OPT_SHARE) ? "global,share" :
			o->scope & SRV_OPT_SHARE ? "share" : "global",
			type_name(o), o->arg ? o->arg : "", vals, def_text(o),
			o->lopt ? o->lopt : "", o->peer ? o->peer : "rdax only", o->help,
			o->flags & SRV_OPT_RESTART ? "restart" : "");
	}
}
