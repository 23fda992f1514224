/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Names of the values of include/uapi/linux/sdp.h that the tools print,
 * as sdp(7) spells them: shared by sdpstat and libsdp's log.
 */
#ifndef SDP_NAMES_H
#define SDP_NAMES_H

#include <linux/sdp.h>

/* enum sdp_fallback_reason: "-" for none, "?" for one not known here. */
static inline const char *sdp_fallback_reason_name(unsigned int why)
{
	static const char *const names[] = {
		[SDP_FB_NONE] = "-",
		[SDP_FB_NO_DEVICE] = "no-device",
		[SDP_FB_ADDR_ERROR] = "addr-error",
		[SDP_FB_ROUTE_ERROR] = "route-error",
		[SDP_FB_UNREACHABLE] = "unreachable",
		[SDP_FB_REJECTED] = "rejected",
		[SDP_FB_TCP_CLIENT] = "tcp-client",
		[SDP_FB_CACHED] = "cached",
		[SDP_FB_IWARP] = "iwarp",
	};

	return why < sizeof(names) / sizeof(names[0]) && names[why] ?
	       names[why] : "?";
}

#endif /* SDP_NAMES_H */
