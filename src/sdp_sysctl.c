// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol -- run-time tunables: /proc/sys/net/sdp, one
 * set per network namespace, and the module parameter that gives them
 * their initial value.
 *
 * Copyright (C) 2026 The SDP for Linux authors
 *
 * The sysctls are listed once, with their ranges and initial values, in
 * sdp_sysctls.h; the table, its ranges and a namespace's first values are
 * made from that list here, each entry pointing at its field of struct
 * sdp_net by name.
 *
 * Writes outside the range fail with EINVAL and change nothing.  A
 * namespace starts with the defaults, not with its creator's values (as
 * most of net.ipv4 does).
 */
#include <linux/kernel.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/sysctl.h>
#include <net/net_namespace.h>

#include "sdp_conn.h"
#include "sdp_fallback.h"
#include "sdp_mem.h"
#include "sdp_net.h"

/* Each sysctl's index in the table: SDP_SYSCTL_<name>. */
enum sdp_sysctl_id {
#define SDP_SYSCTL(name, min, max, init) SDP_SYSCTL_##name,
#define SDP_SYSCTL_MEM(name) SDP_SYSCTL_##name,
#include "sdp_sysctls.h"
#undef SDP_SYSCTL
#undef SDP_SYSCTL_MEM
	SDP_SYSCTL_NR
};

/* Where each sysctl is in struct sdp_net. */
static const u16 sdp_sysctl_off[SDP_SYSCTL_NR] = {
#define SDP_SYSCTL(name, min, max, init) \
	[SDP_SYSCTL_##name] = offsetof(struct sdp_net, name),
#define SDP_SYSCTL_MEM(name) \
	[SDP_SYSCTL_##name] = offsetof(struct sdp_net, name),
#include "sdp_sysctls.h"
#undef SDP_SYSCTL
#undef SDP_SYSCTL_MEM
};

/* The range of each int sysctl: extra1 and extra2 of its table entry. */
static const int sdp_sysctl_range[SDP_SYSCTL_NR][2] = {
#define SDP_SYSCTL(name, min, max, init) \
	[SDP_SYSCTL_##name] = { min, max },
#define SDP_SYSCTL_MEM(name)
#include "sdp_sysctls.h"
#undef SDP_SYSCTL
#undef SDP_SYSCTL_MEM
};

/*
 * The value each int sysctl of a new namespace starts with.  Those of
 * recv_poll and zcopy_thresh are also module parameters, range-checked
 * as the sysctls are.
 */
static unsigned int sdp_sysctl_first[SDP_SYSCTL_NR] = {
#define SDP_SYSCTL(name, min, max, init) \
	[SDP_SYSCTL_##name] = init,
#define SDP_SYSCTL_MEM(name)
#include "sdp_sysctls.h"
#undef SDP_SYSCTL
#undef SDP_SYSCTL_MEM
};

static int sdp_param_set_bounded(const char *val,
				 const struct kernel_param *kp)
{
	unsigned int i = (unsigned int *)kp->arg - sdp_sysctl_first;
	unsigned int v;
	int err;

	err = kstrtouint(val, 0, &v);
	if (err)
		return err;
	if (v < sdp_sysctl_range[i][0] || v > sdp_sysctl_range[i][1])
		return -EINVAL;
	*(unsigned int *)kp->arg = v;
	return 0;
}

static const struct kernel_param_ops sdp_bounded_ops = {
	.set = sdp_param_set_bounded,
	.get = param_get_uint,
};

module_param_cb(recv_poll, &sdp_bounded_ops,
		&sdp_sysctl_first[SDP_SYSCTL_recv_poll], 0444);
MODULE_PARM_DESC(recv_poll,
		 "initial net.sdp.recv_poll of every network namespace: microseconds a blocking receive polls the CQ before it sleeps, unless SO_BUSY_POLL is set (default 700, 0 disables, at most 100000)");
module_param_cb(zcopy_thresh, &sdp_bounded_ops,
		&sdp_sysctl_first[SDP_SYSCTL_zcopy_thresh], 0444);
MODULE_PARM_DESC(zcopy_thresh,
		 "initial net.sdp.zcopy_thresh of every network namespace: blocking sends of at least this many bytes go zero-copy (default 65536, 0 disables, at most 1073741824)");

/* Template; each namespace gets a copy pointing at its struct sdp_net. */
static const struct ctl_table sdp_sysctl_template[SDP_SYSCTL_NR + 1] = {
#define SDP_SYSCTL(name, min, max, init)				\
	[SDP_SYSCTL_##name] = {						\
		.procname = #name,					\
		.maxlen = sizeof(int),					\
		.mode = 0644,						\
		.proc_handler = proc_dointvec_minmax,			\
		.extra1 = (void *)&sdp_sysctl_range[SDP_SYSCTL_##name][0], \
		.extra2 = (void *)&sdp_sysctl_range[SDP_SYSCTL_##name][1], \
	},
#define SDP_SYSCTL_MEM(name)						\
	[SDP_SYSCTL_##name] = {						\
		.procname = #name,					\
		.maxlen = sizeof(unsigned long) * 3,			\
		.mode = 0644,						\
		.proc_handler = proc_doulongvec_minmax,			\
	},
#include "sdp_sysctls.h"
#undef SDP_SYSCTL
#undef SDP_SYSCTL_MEM
	{ }
};

int sdp_sysctl_net_init(struct net *net, struct sdp_net *sn)
{
	struct ctl_table *tbl;
	unsigned int i;

	/* What else keeps to the list. */
	BUILD_BUG_ON(sdp_sysctl_range[SDP_SYSCTL_tcp_fallback_timeout_ms][1] !=
		     SDP_FB_TIMEOUT_MS_MAX);
	BUILD_BUG_ON(sdp_sysctl_range[SDP_SYSCTL_rx_init_bufs][0] <
		     SDP_RX_INIT_BUFS);

	for (i = 0; i < SDP_SYSCTL_NR; i++)
		if (i != SDP_SYSCTL_mem)
			*(int *)((void *)sn + sdp_sysctl_off[i]) =
				sdp_sysctl_first[i];
	sdp_mem_net_init(sn);
	if (!IS_ENABLED(CONFIG_SYSCTL))
		return 0;

	tbl = kmemdup(sdp_sysctl_template, sizeof(sdp_sysctl_template),
		      GFP_KERNEL);
	if (!tbl)
		return -ENOMEM;
	for (i = 0; i < SDP_SYSCTL_NR; i++)
		tbl[i].data = (void *)sn + sdp_sysctl_off[i];

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
