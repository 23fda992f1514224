// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol -- run-time tunables: /proc/sys/net/sdp, one
 * set per network namespace, and the module parameter that gives them
 * their initial value.
 *
 * Copyright (C) 2026 The SDP for Linux authors
 *
 *   recv_poll           int, microseconds, 0..100000, default: the
 *                       recv_poll module parameter (700)
 *   fin_timeout         int, seconds, 1..3600, default 60
 *   resolve_timeout_ms  int, milliseconds, 100..60000, default 2000
 *   zcopy_thresh        int, bytes, 0..1073741824, default: the
 *                       zcopy_thresh module parameter (65536)
 *   mem                 3 longs, pages: min, pressure, max of the
 *                       connection buffers (sdp_mem.c); default 1/8,
 *                       3/16 and 1/4 of RAM
 *   max_half_open       int, 0..65536, default 256: connection requests
 *                       held before they are established
 *   rx_init_bufs        int, 4..1024, default 4: receive buffers a
 *                       connection posts before its peer has sent
 *                       faster than they come back (then all of its ring)
 *   tx_idle_ms          int, milliseconds, 0..3600000, default 1000: a
 *                       connection that sent nothing for this long gives
 *                       its send buffers back (0: keeps them)
 *   rx_idle_ms          int, milliseconds, 0..3600000, default 1000: a
 *                       connection whose receive ring grew and that
 *                       received no data for this long shrinks it back
 *                       to rx_init_bufs small buffers (0: keeps it)
 *   tcp_fallback        int, 0..1, default 0: 1 lets a connect() whose
 *                       SDP connection cannot be made go on over TCP
 *                       (sockets may override it: SDP_TCP_FALLBACK)
 *   tcp_fallback_cache_s int, seconds, 0..86400, default 60: how long a
 *                       destination a connect() fell back to TCP for
 *                       sends the next connect()s to TCP at once (0:
 *                       no negative cache)
 *   tcp_fallback_timeout_ms int, milliseconds, 0..600000, default 3000:
 *                       with fallback on, how long the SDP attempt of a
 *                       connect() may take before it goes on over TCP
 *                       (0: as long as the RDMA CM tries; sockets may
 *                       override it: SDP_TCP_FALLBACK_TIMEOUT)
 *   netfilter           int, 0..1, default 1: show each connection
 *                       request to the host's input hook as a TCP SYN,
 *                       refused unless accepted (sdp_filter.c)
 *
 * Writes outside the range fail with EINVAL and change nothing.  A
 * namespace starts with the defaults, not with its creator's values (as
 * most of net.ipv4 does).
 */
#include <linux/kernel.h>
#include <linux/moduleparam.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/sysctl.h>
#include <net/net_namespace.h>

#include "sdp.h"
#include "sdp_fallback.h"

#define SDP_RECV_POLL_MAX	100000
#define SDP_FIN_TIMEOUT_MAX	3600
#define SDP_RESOLVE_MS_MIN	100
#define SDP_RESOLVE_MS_MAX	60000
#define SDP_ZCOPY_THRESH_MAX	SZ_1G

static int sdp_recv_poll_max = SDP_RECV_POLL_MAX;
static int sdp_fin_timeout_max = SDP_FIN_TIMEOUT_MAX;
static int sdp_resolve_ms_min = SDP_RESOLVE_MS_MIN;
static int sdp_resolve_ms_max = SDP_RESOLVE_MS_MAX;
static int sdp_zcopy_thresh_max = SDP_ZCOPY_THRESH_MAX;
static int sdp_half_open_max = 65536;
static int sdp_idle_ms_max = 3600000;
static int sdp_rx_init_min = SDP_RX_INIT_BUFS;
static int sdp_rx_init_max = 1024;
static int sdp_fb_cache_max = 86400;
static int sdp_fb_timeout_max = SDP_FB_TIMEOUT_MS_MAX;

/*
 * Module parameters that set the sysctls of new namespaces: recv_poll
 * and zcopy_thresh, range-checked as the sysctls are.
 */
static unsigned int recv_poll = 700;
static unsigned int zcopy_thresh = 65536;

static int sdp_param_set_bounded(const char *val,
				 const struct kernel_param *kp)
{
	unsigned int max = kp->arg == &recv_poll ? SDP_RECV_POLL_MAX :
			   SDP_ZCOPY_THRESH_MAX;
	unsigned int v;
	int err;

	err = kstrtouint(val, 0, &v);
	if (err)
		return err;
	if (v > max)
		return -EINVAL;
	*(unsigned int *)kp->arg = v;
	return 0;
}

static const struct kernel_param_ops sdp_bounded_ops = {
	.set = sdp_param_set_bounded,
	.get = param_get_uint,
};

module_param_cb(recv_poll, &sdp_bounded_ops, &recv_poll, 0444);
MODULE_PARM_DESC(recv_poll,
		 "initial net.sdp.recv_poll of every network namespace: microseconds a blocking receive polls the CQ before it sleeps, unless SO_BUSY_POLL is set (default 700, 0 disables, at most 100000)");
module_param_cb(zcopy_thresh, &sdp_bounded_ops, &zcopy_thresh, 0444);
MODULE_PARM_DESC(zcopy_thresh,
		 "initial net.sdp.zcopy_thresh of every network namespace: blocking sends of at least this many bytes go zero-copy (default 65536, 0 disables, at most 1073741824)");

/* Template; each namespace gets a copy pointing at its struct sdp_net. */
static const struct ctl_table sdp_sysctl_template[] = {
	{
		.procname = "recv_poll",
		.maxlen = sizeof(int),
		.mode = 0644,
		.proc_handler = proc_dointvec_minmax,
		.extra1 = SYSCTL_ZERO,
		.extra2 = &sdp_recv_poll_max,
	},
	{
		.procname = "fin_timeout",
		.maxlen = sizeof(int),
		.mode = 0644,
		.proc_handler = proc_dointvec_minmax,
		.extra1 = SYSCTL_ONE,
		.extra2 = &sdp_fin_timeout_max,
	},
	{
		.procname = "resolve_timeout_ms",
		.maxlen = sizeof(int),
		.mode = 0644,
		.proc_handler = proc_dointvec_minmax,
		.extra1 = &sdp_resolve_ms_min,
		.extra2 = &sdp_resolve_ms_max,
	},
	{
		.procname = "zcopy_thresh",
		.maxlen = sizeof(int),
		.mode = 0644,
		.proc_handler = proc_dointvec_minmax,
		.extra1 = SYSCTL_ZERO,
		.extra2 = &sdp_zcopy_thresh_max,
	},
	{
		.procname = "mem",
		.maxlen = sizeof(unsigned long) * 3,
		.mode = 0644,
		.proc_handler = proc_doulongvec_minmax,
	},
	{
		.procname = "max_half_open",
		.maxlen = sizeof(int),
		.mode = 0644,
		.proc_handler = proc_dointvec_minmax,
		.extra1 = SYSCTL_ZERO,
		.extra2 = &sdp_half_open_max,
	},
	{
		.procname = "rx_init_bufs",
		.maxlen = sizeof(int),
		.mode = 0644,
		.proc_handler = proc_dointvec_minmax,
		.extra1 = &sdp_rx_init_min,
		.extra2 = &sdp_rx_init_max,
	},
	{
		.procname = "tx_idle_ms",
		.maxlen = sizeof(int),
		.mode = 0644,
		.proc_handler = proc_dointvec_minmax,
		.extra1 = SYSCTL_ZERO,
		.extra2 = &sdp_idle_ms_max,
	},
	{
		.procname = "rx_idle_ms",
		.maxlen = sizeof(int),
		.mode = 0644,
		.proc_handler = proc_dointvec_minmax,
		.extra1 = SYSCTL_ZERO,
		.extra2 = &sdp_idle_ms_max,
	},
	{
		.procname = "tcp_fallback",
		.maxlen = sizeof(int),
		.mode = 0644,
		.proc_handler = proc_dointvec_minmax,
		.extra1 = SYSCTL_ZERO,
		.extra2 = SYSCTL_ONE,
	},
	{
		.procname = "tcp_fallback_cache_s",
		.maxlen = sizeof(int),
		.mode = 0644,
		.proc_handler = proc_dointvec_minmax,
		.extra1 = SYSCTL_ZERO,
		.extra2 = &sdp_fb_cache_max,
	},
	{
		.procname = "tcp_fallback_timeout_ms",
		.maxlen = sizeof(int),
		.mode = 0644,
		.proc_handler = proc_dointvec_minmax,
		.extra1 = SYSCTL_ZERO,
		.extra2 = &sdp_fb_timeout_max,
	},
	{
		.procname = "netfilter",
		.maxlen = sizeof(int),
		.mode = 0644,
		.proc_handler = proc_dointvec_minmax,
		.extra1 = SYSCTL_ZERO,
		.extra2 = SYSCTL_ONE,
	},
	{ }
};

int sdp_sysctl_net_init(struct net *net, struct sdp_net *sn)
{
	struct ctl_table *tbl;

	sn->recv_poll = recv_poll;
	sn->fin_timeout = 60;
	sn->resolve_timeout_ms = 2000;
	sn->zcopy_thresh = zcopy_thresh;
	sn->tx_idle_ms = 1000;
	sn->rx_idle_ms = 1000;
	sn->rx_init_bufs = SDP_RX_INIT_BUFS;
	sn->tcp_fallback_cache_s = 60;
	sn->tcp_fallback_timeout_ms = SDP_FB_TIMEOUT_MS_DEFAULT;
	sn->netfilter = 1;
	sdp_mem_net_init(sn);
	if (!IS_ENABLED(CONFIG_SYSCTL))
		return 0;

	tbl = kmemdup(sdp_sysctl_template, sizeof(sdp_sysctl_template),
		      GFP_KERNEL);
	if (!tbl)
		return -ENOMEM;
	tbl[0].data = &sn->recv_poll;
	tbl[1].data = &sn->fin_timeout;
	tbl[2].data = &sn->resolve_timeout_ms;
	tbl[3].data = &sn->zcopy_thresh;
	tbl[4].data = &sn->mem;
	tbl[5].data = &sn->max_half_open;
	tbl[6].data = &sn->rx_init_bufs;
	tbl[7].data = &sn->tx_idle_ms;
	tbl[8].data = &sn->rx_idle_ms;
	tbl[9].data = &sn->tcp_fallback;
	tbl[10].data = &sn->tcp_fallback_cache_s;
	tbl[11].data = &sn->tcp_fallback_timeout_ms;
	tbl[12].data = &sn->netfilter;

#ifdef SDP_HAVE_NET_SYSCTL_SZ
	sn->sysctl_hdr = register_net_sysctl_sz(net, "net/sdp", tbl,
						ARRAY_SIZE(sdp_sysctl_template) - 1);
#else
	sn->sysctl_hdr = register_net_sysctl(net, "net/sdp", tbl);
#endif
	if (!sn->sysctl_hdr) {
		kfree(tbl);
		return -ENOMEM;
	}
	sn->sysctl_table = tbl;
	return 0;
}

void sdp_sysctl_net_exit(struct sdp_net *sn)
{
	unregister_net_sysctl_table(sn->sysctl_hdr);
	kfree(sn->sysctl_table);
}
