// SPDX-License-Identifier: MIT
/* SMB-Direct credits, negotiation and reassembly ([MS-SMBD] 3.1.5). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "transport/smbd_flow.h"

static int flow_err(struct smbd_flow *f, int err, const char *why)
{
	f->why = why;
	return err;
}

static uint32_t min32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

static int cap_credits(int n)
{
	return n > SMBD_CREDITS_MAX ? SMBD_CREDITS_MAX : n;
}

/*
 * What we can reassemble: half of what all our receives could carry,
 * and never below the least a peer must accept ([MS-SMBD] 3.1.5.6/7).
 */
static uint32_t frag_recv_size(const struct smbd_flow *f, uint32_t recv_size)
{
	uint32_t n = (uint32_t)f->recv_max * recv_size / 2;

	return n < SMBD_MIN_FRAGMENTED_SIZE ? SMBD_MIN_FRAGMENTED_SIZE : n;
}

void smbd_flow_init(struct smbd_flow *f, const struct smbd_params *p)
{
	memset(f, 0, sizeof(*f));
	f->recv_max = p->recv_credit_max;
	f->credit_target = p->send_credit_target;
	f->pref_send_size = p->max_send_size;
	f->pref_recv_size = p->max_recv_size;
	f->pref_rw_size = p->max_read_write_size;
	f->recv_idle = f->recv_max;
}

void smbd_flow_free(struct smbd_flow *f)
{
	free(f->reasm);
	f->reasm = NULL;
	f->reasm_cap = 0;
	f->reasm_len = 0;
	f->reasm_active = false;
}

/* ---- negotiation ---- */

void smbd_flow_neg_request(const struct smbd_flow *f, struct smbd_neg_req *r)
{
	memset(r, 0, sizeof(*r));
	r->min_version = SMBD_VERSION;
	r->max_version = SMBD_VERSION;
	r->credits_requested = f->credit_target;
	r->preferred_send_size = f->pref_send_size;
	r->max_receive_size = f->pref_recv_size;
	r->max_fragmented_size = frag_recv_size(f, f->pref_recv_size);
}

int smbd_flow_server_negotiate(struct smbd_flow *f, const uint8_t *buf,
			       uint32_t len, struct smbd_neg_rsp *rsp)
{
	struct smbd_neg_req r;

	memset(rsp, 0, sizeof(*rsp));
	if (smbd_neg_req_decode(buf, len, &r))
		return flow_err(f, -EPROTO, "short negotiate request");
	rsp->min_version = SMBD_VERSION;
	rsp->max_version = SMBD_VERSION;
	rsp->credits_requested = f->credit_target;
	if (r.min_version > SMBD_VERSION || r.max_version < SMBD_VERSION) {
		rsp->status = SMBD_STATUS_NOT_SUPPORTED;
		return flow_err(f, -EPROTONOSUPPORT,
				"peer does not speak SMB-Direct 1.0");
	}
	if (!r.credits_requested || r.max_receive_size < SMBD_MIN_RECEIVE_SIZE ||
	    r.max_fragmented_size < SMBD_MIN_FRAGMENTED_SIZE)
		return flow_err(f, -EPROTO, "negotiate request out of range");
	f->max_recv_size = min32(f->pref_recv_size, r.preferred_send_size);
	if (f->max_recv_size < SMBD_MIN_RECEIVE_SIZE)
		f->max_recv_size = SMBD_MIN_RECEIVE_SIZE;
	f->max_send_size = min32(f->pref_send_size, r.max_receive_size);
	f->max_frag_send = r.max_fragmented_size;
	f->max_frag_recv = frag_recv_size(f, f->max_recv_size);
	f->max_rw = f->pref_rw_size;
	f->recv_target = min32(r.credits_requested, f->recv_max);
	/* the receive that carried the request is not posted: not grantable */
	f->peer_credits = cap_credits(smbd_flow_recv_ungranted(f));
	f->send_credits = 0;		/* until the peer grants some */
	rsp->negotiated_version = SMBD_VERSION;
	rsp->credits_granted = (uint16_t)f->peer_credits;
	rsp->max_read_write_size = f->max_rw;
	rsp->preferred_send_size = f->max_send_size;
	rsp->max_receive_size = f->max_recv_size;
	rsp->max_fragmented_size = f->max_frag_recv;
	return 0;
}

int smbd_flow_client_negotiated(struct smbd_flow *f, const uint8_t *buf,
				uint32_t len)
{
	struct smbd_neg_rsp r;

	if (smbd_neg_rsp_decode(buf, len, &r))
		return flow_err(f, -EPROTO, "short negotiate response");
	if (r.negotiated_version != SMBD_VERSION || r.status)
		return flow_err(f, -EPROTO, "server refused SMB-Direct 1.0");
	if (!r.credits_requested || !r.credits_granted)
		return flow_err(f, -EPROTO, "server granted no credits");
	if (r.preferred_send_size > f->pref_recv_size ||
	    r.max_receive_size < SMBD_MIN_RECEIVE_SIZE ||
	    r.max_fragmented_size < SMBD_MIN_FRAGMENTED_SIZE)
		return flow_err(f, -EPROTO, "negotiate response out of range");
	f->max_recv_size = r.preferred_send_size;
	f->max_send_size = min32(f->pref_send_size, r.max_receive_size);
	f->max_frag_send = r.max_fragmented_size;
	f->max_frag_recv = frag_recv_size(f, f->pref_recv_size);
	f->max_rw = r.max_read_write_size;
	f->send_credits = r.credits_granted;
	f->recv_target = min32(r.credits_requested, f->recv_max);
	return 0;
}

/* ---- sending ---- */

int smbd_flow_recv_ungranted(const struct smbd_flow *f)
{
	int n = f->recv_posted - f->peer_credits;

	return n > 0 ? n : 0;
}

int smbd_flow_grant_now(const struct smbd_flow *f)
{
	int want = f->recv_target - f->peer_credits;
	int room = smbd_flow_recv_ungranted(f);

	if (want < 0)
		want = 0;
	/* spending our last credit needs a grant so the peer can answer */
	if (f->send_credits == 1 && want == 0)
		want = 1;
	return cap_credits(want < room ? want : room);
}

bool smbd_flow_can_send(const struct smbd_flow *f, int grant)
{
	if (f->send_credits <= 0)
		return false;
	return f->send_credits > 1 || grant > 0;
}

bool smbd_flow_refill_due(const struct smbd_flow *f, int grant)
{
	return grant > 0 && f->peer_credits <= f->recv_target / 4;
}

void smbd_flow_on_send(struct smbd_flow *f, int granted)
{
	f->send_credits--;
	f->peer_credits += granted;
}

/* ---- receiving ---- */

void smbd_flow_recv_done(struct smbd_flow *f)
{
	f->recv_posted--;
	f->recv_idle++;
}

void smbd_flow_reposted(struct smbd_flow *f, int n)
{
	f->recv_idle -= n;
	f->recv_posted += n;
}

int smbd_flow_on_data(struct smbd_flow *f, const struct smbd_data *d)
{
	if (f->peer_credits <= 0)
		return flow_err(f, -EPROTO, "peer sent a message without a credit");
	f->peer_credits--;
	if (f->send_credits + d->credits_granted > SMBD_CREDITS_MAX)
		return flow_err(f, -EPROTO, "peer granted more than 65535 credits");
	f->send_credits += d->credits_granted;
	f->recv_target = min32(d->credits_requested, f->recv_max);
	return 0;
}

static int reasm_start(struct smbd_flow *f, size_t total)
{
	uint8_t *p;

	if (total > f->reasm_cap) {
		p = realloc(f->reasm, total);
		if (!p)
			return flow_err(f, -ENOMEM, "out of memory for reassembly");
		f->reasm = p;
		f->reasm_cap = total;
	}
	f->reasm_total = total;
	f->reasm_len = 0;
	f->reasm_active = true;
	return 0;
}

int smbd_flow_reasm(struct smbd_flow *f, const struct smbd_data *d,
		    uint8_t *buf, uint8_t **msg, size_t *len)
{
	size_t total = (size_t)d->data_length + d->remaining;
	int ret;

	*msg = NULL;
	*len = 0;
	if (!d->data_length) {
		if (d->remaining)
			return flow_err(f, -EPROTO, "empty message with remaining data");
		return 0;		/* credits or a keep-alive only */
	}
	if (total > f->max_frag_recv)
		return flow_err(f, -EPROTO,
				"message above the negotiated max fragmented size");
	if (!f->reasm_active) {
		if (!d->remaining) {	/* whole message in one fragment */
			*msg = buf + d->data_offset;
			*len = d->data_length;
			return 0;
		}
		ret = reasm_start(f, total);
		if (ret)
			return ret;
	} else if (f->reasm_len + total != f->reasm_total) {
		return flow_err(f, -EPROTO, "fragment lengths do not add up");
	}
	memcpy(f->reasm + f->reasm_len, buf + d->data_offset, d->data_length);
	f->reasm_len += d->data_length;
	if (d->remaining)
		return 0;
	f->reasm_active = false;
	*msg = f->reasm;
	*len = f->reasm_len;
	return 0;
}

void smbd_flow_msg_done(struct smbd_flow *f)
{
	if (f->reasm_active || f->reasm_cap <= SMBD_REASM_KEEP)
		return;
	free(f->reasm);
	f->reasm = NULL;
	f->reasm_cap = 0;
}

int smbd_flow_recv(struct smbd_flow *f, uint8_t *buf, uint32_t len,
		   struct smbd_data *d, uint8_t **msg, size_t *msg_len)
{
	int ret;

	*msg = NULL;
	*msg_len = 0;
	/* the size limit apart, for a reason of its own */
	if (smbd_data_decode(buf, len, UINT32_MAX, d))
		return flow_err(f, -EPROTO, "malformed data transfer message");
	if ((uint64_t)d->data_length + d->remaining > f->max_frag_recv)
		return flow_err(f, -EPROTO,
				"message above the negotiated max fragmented size");
	ret = smbd_flow_on_data(f, d);
	if (ret)
		return ret;
	return smbd_flow_reasm(f, d, buf, msg, msg_len);
}
