// SPDX-License-Identifier: MIT
/*
 * The client's SMB2 credit window. Every PDU spends CreditCharge
 * credits (at least one) and as many consecutive MessageIds; every
 * response grants CreditResponse credits back. The client asks for
 * enough to keep about CLI_CREDIT_TARGET in hand.
 */
#include <errno.h>

#include "client/credits.h"
#include "proto/smb2.h"

void cli_credits_init(struct cli_credits *cr)
{
	/* a new connection's window is MessageId 0 */
	cr->next_mid = 0;
	cr->held = 1;
}

static uint16_t pdu_charge(uint16_t charge)
{
	return charge ? charge : 1;
}

uint32_t cli_credits_chain_charge(const uint16_t *charge, int n)
{
	uint32_t total = 0;
	int i;

	for (i = 0; i < n; i++)
		total += pdu_charge(charge[i]);
	return total;
}

uint16_t cli_credits_ask(const struct cli_credits *cr, uint16_t charge)
{
	uint32_t ask = pdu_charge(charge);

	if (cr->held < CLI_CREDIT_TARGET)
		ask += CLI_CREDIT_TARGET - cr->held > CLI_CREDIT_ASK_MAX ?
		       CLI_CREDIT_ASK_MAX : CLI_CREDIT_TARGET - cr->held;
	return ask > UINT16_MAX ? UINT16_MAX : (uint16_t)ask;
}

int cli_credits_take(struct cli_credits *cr, const uint16_t *charge, int n,
		     uint64_t *mid, uint16_t *ask)
{
	int i;

	if (cli_credits_chain_charge(charge, n) > cr->held)
		return -EAGAIN;
	for (i = 0; i < n; i++) {
		uint16_t k = pdu_charge(charge[i]);

		ask[i] = cli_credits_ask(cr, k);
		mid[i] = cr->next_mid;
		cr->next_mid += k;
		cr->held -= k;
	}
	return 0;
}

/* using fewer credits than granted is always allowed */
static void add_held(struct cli_credits *cr, uint32_t n)
{
	uint32_t room = cr->held < CLI_CREDIT_MAX ? CLI_CREDIT_MAX - cr->held : 0;

	cr->held += n < room ? n : room;
}

int cli_credits_return(struct cli_credits *cr, const uint16_t *charge, int n,
		       const uint64_t *mid)
{
	uint32_t total = cli_credits_chain_charge(charge, n);

	if (n <= 0 || cr->next_mid != mid[0] + total)
		return -EINVAL;
	cr->next_mid = mid[0];
	add_held(cr, total);
	return 0;
}

void cli_credits_grant(struct cli_credits *cr, uint16_t granted)
{
	add_held(cr, granted);
}

int cli_credits_check(const struct cli_credits *cr, uint32_t need, bool outstanding)
{
	if (need <= cr->held || outstanding)
		return 0;
	return -EAGAIN;
}

uint64_t cli_credits_io_max(const struct cli_credits *cr)
{
	return (uint64_t)(cr->held ? cr->held : 1) * SMB2_CREDIT_UNIT;
}
