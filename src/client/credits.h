/* SPDX-License-Identifier: MIT */
/*
 * The client's SMB2 credit window, [MS-SMB2] 3.2.4.1.5 and 3.2.5.1.4:
 * credits held, the next MessageId, the CreditRequest of each PDU and
 * the largest I/O the window carries. Bookkeeping only: the engine
 * calls it for every PDU it sends and every response it reads.
 */
#ifndef RDAX_CLIENT_CREDITS_H
#define RDAX_CLIENT_CREDITS_H

#include <stdbool.h>
#include <stdint.h>

#define CLI_CREDIT_TARGET 512		/* credits the client asks to hold */
#define CLI_CREDIT_ASK_MAX 256		/* most one PDU asks beyond its charge */
#define CLI_CREDIT_MAX 65535		/* most held; a grant beyond is dropped */

struct cli_credits {
	uint64_t next_mid;		/* MessageId of the next PDU */
	uint32_t held;			/* granted, not yet spent */
};

void cli_credits_init(struct cli_credits *cr);
/* CreditCharge of n PDUs (a charge of 0 counts as 1) */
uint32_t cli_credits_chain_charge(const uint16_t *charge, int n);
/* CreditRequest of a PDU of this charge sent now */
uint16_t cli_credits_ask(const struct cli_credits *cr, uint16_t charge);
/*
 * Take the credits of a chain of n PDUs: MessageIds into mid[] and
 * CreditRequests into ask[]. -EAGAIN, nothing taken, when the window
 * does not cover the chain.
 */
int cli_credits_take(struct cli_credits *cr, const uint16_t *charge, int n,
		     uint64_t *mid, uint16_t *ask);
/*
 * Give back what the last take took for a chain that never reached the
 * wire, so its MessageIds are not skipped. -EINVAL if it was not last.
 */
int cli_credits_return(struct cli_credits *cr, const uint16_t *charge, int n,
		       const uint64_t *mid);
/* The CreditResponse of one response PDU; held stays <= CLI_CREDIT_MAX. */
void cli_credits_grant(struct cli_credits *cr, uint16_t granted);
/*
 * Can need credits be had, now or (outstanding) once the responses in
 * flight are in? 0, or -EAGAIN when they never will be.
 */
int cli_credits_check(const struct cli_credits *cr, uint32_t need, bool outstanding);
/*
 * Largest READ/WRITE (bytes) to build now: what the credits held carry,
 * or one credit's worth when none are (it is sent once one comes back).
 */
uint64_t cli_credits_io_max(const struct cli_credits *cr);

#endif
