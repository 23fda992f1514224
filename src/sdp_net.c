// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol -- a network namespace's part of the module
 * (struct sdp_net, sdp_net.h): made when the namespace is, in this
 * order, and gone in the reverse one when it goes: the counters, the
 * net.sdp sysctls, /proc/net/sdp_stats, /proc/net/sdp, the TCP
 * fallback's negative cache with /proc/net/sdp_fallback, and the resume
 * listener's table (sdp_resume.c).
 *
 * Copyright (C) 2026 The SDP for Linux authors
 */
#include <linux/percpu.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>

#include "sdp_diag.h"
#include "sdp_fallback.h"
#include "sdp_net.h"
#include "sdp_resume.h"
#include "sdp_stats.h"

unsigned int sdp_net_id __read_mostly;

static int __net_init sdp_net_init(struct net *net)
{
	struct sdp_net *sn = sdp_net(net);
	int err;

	sn->mib = alloc_percpu(struct sdp_mib);
	if (!sn->mib)
		return -ENOMEM;
	err = sdp_sysctl_net_init(net, sn);
	if (err)
		goto err_mib;
	err = sdp_stats_proc_init(net);
	if (err)
		goto err_sysctl;
	err = sdp_proc_net_init(net);
	if (err)
		goto err_stats_proc;
	err = sdp_fb_net_init(net);
	if (err)
		goto err_proc;
	sdp_rsm_net_init(net, &sn->rsm);
	return 0;

err_proc:
	sdp_proc_net_exit(net);
err_stats_proc:
	sdp_stats_proc_exit(net);
err_sysctl:
	sdp_sysctl_net_exit(sn);
err_mib:
	free_percpu(sn->mib);
	return err;
}

static void __net_exit sdp_net_exit(struct net *net)
{
	struct sdp_net *sn = sdp_net(net);

	sdp_rsm_net_exit(&sn->rsm);
	sdp_fb_net_exit(net);
	sdp_proc_net_exit(net);
	sdp_stats_proc_exit(net);
	sdp_sysctl_net_exit(sn);
	free_percpu(sn->mib);
}

static struct pernet_operations sdp_net_ops = {
	.init = sdp_net_init,
	.exit = sdp_net_exit,
	.id = &sdp_net_id,
	.size = sizeof(struct sdp_net),
};

/* Module init: every namespace, the ones to come too. */
int sdp_net_register(void)
{
	return register_pernet_subsys(&sdp_net_ops);
}

void sdp_net_unregister(void)
{
	unregister_pernet_subsys(&sdp_net_ops);
}
