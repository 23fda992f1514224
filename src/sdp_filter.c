// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol -- the host's firewall for SDP connection
 * requests.
 *
 * Copyright (C) 2026 The SDP for Linux authors
 *
 * SDP's packets are RDMA's: netfilter sees neither its connections nor
 * their data, so an admin's rules for TCP port 6379 would not hold for an
 * SDP listener on port 6379.  With net.sdp.netfilter 1 (the default) a
 * connection request is shown to the host's input hook (NF_INET_LOCAL_IN:
 * the "input" chains of nftables and iptables) before anything is made
 * for it (sdp_cm_request()), as the TCP SYN that a TCP client at the same
 * address and port would send to the same port, arriving on the netdev
 * through which the RDMA CM received the request.  Any verdict but accept
 * refuses it: drop, reject, and also a queue (NFQUEUE), whose verdict
 * would come after the request was answered.  The CM then rejects the
 * request (the client's connect() fails with ECONNREFUSED, as with no
 * listener), PassiveFiltered counts it, and a rate-limited line says whom.
 *
 * What the rules see: the IP addresses, protocol tcp, the ports, the TCP
 * flag SYN, the input interface; no socket, no mark, and no connection
 * tracking: the SYN is untracked ("ct state untracked"), so that no
 * conntrack entry is made for a connection whose packets conntrack never
 * sees.  A rule set that accepts new connections only by "ct state new"
 * refuses SDP until it accepts "ct state untracked" for the SDP ports.
 * Targets that answer (REJECT) answer the peer's host over IP, as they
 * would a SYN.  Only connection requests are shown: the data path costs
 * nothing.  Over soft-iWARP none is: its connections are the kernel's
 * own TCP ones, which the hook judges as they come.
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/netdevice.h>
#include <linux/netfilter.h>
#include <linux/skbuff.h>
#include <linux/tcp.h>
#include <net/ip.h>
#include <net/ip6_checksum.h>
#include <net/ipv6.h>
#include <net/tcp.h>
#if IS_ENABLED(CONFIG_NF_CONNTRACK)
#include <net/netfilter/nf_conntrack.h>
#endif
#include <rdma/rdma_cm.h>

#include "sdp.h"
#include "sdp_filter.h"
#include "sdp_net.h"
#include "sdp_stats.h"

#define SDP_FILTER_HEAD	(MAX_HEADER + sizeof(struct ipv6hdr) + \
			 sizeof(struct tcphdr))

/* A TCP header from @peer's port to @local's, SYN. */
static struct tcphdr *sdp_filter_tcp(struct sk_buff *skb, __be16 peer,
				     __be16 local)
{
	struct tcphdr *th;

	skb_set_transport_header(skb, skb->len);
	th = skb_put_zero(skb, sizeof(*th));
	th->source = peer;
	th->dest = local;
	th->doff = sizeof(*th) / 4;
	th->syn = 1;
	th->window = htons(U16_MAX);
	return th;
}

/* The SYN from @peer to @local, IPv4. */
static void sdp_filter_syn4(struct sk_buff *skb,
			    const struct sockaddr_in *peer,
			    const struct sockaddr_in *local)
{
	struct tcphdr *th;
	struct iphdr *iph;

	skb_reset_network_header(skb);
	iph = skb_put_zero(skb, sizeof(*iph));
	iph->version = 4;
	iph->ihl = sizeof(*iph) / 4;
	iph->tot_len = htons(sizeof(*iph) + sizeof(*th));
	iph->ttl = IPDEFTTL;
	iph->protocol = IPPROTO_TCP;
	iph->saddr = peer->sin_addr.s_addr;
	iph->daddr = local->sin_addr.s_addr;
	ip_send_check(iph);
	th = sdp_filter_tcp(skb, peer->sin_port, local->sin_port);
	th->check = tcp_v4_check(sizeof(*th), iph->saddr, iph->daddr,
				 csum_partial(th, sizeof(*th), 0));
	skb->protocol = htons(ETH_P_IP);
}

/* The SYN from @peer to @local, IPv6. */
static void sdp_filter_syn6(struct sk_buff *skb,
			    const struct sockaddr_in6 *peer,
			    const struct sockaddr_in6 *local)
{
	struct ipv6hdr *ip6h;
	struct tcphdr *th;

	skb_reset_network_header(skb);
	ip6h = skb_put_zero(skb, sizeof(*ip6h));
	ip6h->version = 6;
	ip6h->payload_len = htons(sizeof(*th));
	ip6h->nexthdr = IPPROTO_TCP;
	ip6h->hop_limit = IPV6_DEFAULT_HOPLIMIT;
	ip6h->saddr = peer->sin6_addr;
	ip6h->daddr = local->sin6_addr;
	th = sdp_filter_tcp(skb, peer->sin6_port, local->sin6_port);
	th->check = tcp_v6_check(sizeof(*th), &ip6h->saddr, &ip6h->daddr,
				 csum_partial(th, sizeof(*th), 0));
	skb->protocol = htons(ETH_P_IPV6);
}

/* An IPv4 address as IPv4, and an IPv4-mapped IPv6 one too. */
static bool sdp_filter_v4(const struct sockaddr *sa, struct sockaddr_in *sin)
{
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)sa;

	if (sa->sa_family == AF_INET) {
		*sin = *(const struct sockaddr_in *)sa;
		return true;
	}
	if (!ipv6_addr_v4mapped(&sin6->sin6_addr))
		return false;
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = sin6->sin6_port;
	sin->sin_addr.s_addr = sin6->sin6_addr.s6_addr32[3];
	return true;
}

/* The hook's verdict was given (accepted): the SYN goes. */
static int sdp_filter_okfn(struct net *net, struct sock *sk,
			   struct sk_buff *skb)
{
	kfree_skb(skb);
	return 0;
}

/**
 * sdp_filter_request() - may the host's firewall let this request in?
 * @net: the listener's network namespace
 * @id: the RDMA CM id of the connection request
 *
 * Return: true to go on with it; false if the input hook did not accept
 * the SYN it stands for (or no SYN could be made: refused, fail-closed).
 */
bool sdp_filter_request(struct net *net, struct rdma_cm_id *id)
{
	const struct sockaddr *peer = (struct sockaddr *)&id->route.addr.dst_addr;
	const struct sockaddr *local = (struct sockaddr *)&id->route.addr.src_addr;
	struct sockaddr_in p4, l4;
	struct net_device *dev;
	struct sk_buff *skb;
	u8 pf;
	int ret;

	if (!sdp_sysctl_netfilter(net))
		return true;
	/*
	 * Soft-iWARP makes each connection over a TCP socket of the
	 * kernel's: the input hook judged its real SYN already, as it came
	 * in (on the loopback device for an address of this host).  iWARP
	 * adapters offload that TCP, which the host never sees.
	 */
	if (id->device->ops.driver_id == RDMA_DRIVER_SIW)
		return true;
	skb = alloc_skb(SDP_FILTER_HEAD, GFP_KERNEL);
	if (!skb)
		return false;
	skb_reserve(skb, MAX_HEADER);
	if (sdp_filter_v4(peer, &p4) && sdp_filter_v4(local, &l4)) {
		pf = NFPROTO_IPV4;
		sdp_filter_syn4(skb, &p4, &l4);
	} else if (peer->sa_family == AF_INET6 &&
		   local->sa_family == AF_INET6) {
		pf = NFPROTO_IPV6;
		sdp_filter_syn6(skb, (const struct sockaddr_in6 *)peer,
				(const struct sockaddr_in6 *)local);
	} else {
		kfree_skb(skb);
		return false;
	}
	skb->ip_summed = CHECKSUM_UNNECESSARY;
	skb->pkt_type = PACKET_HOST;
#if IS_ENABLED(CONFIG_NF_CONNTRACK)
	nf_ct_set(skb, NULL, IP_CT_UNTRACKED);
#endif
	/*
	 * The interface it came in on, for the rules; without one (none
	 * found), the rules see none, and targets that answer (REJECT, which
	 * takes the namespace from skb->dev) see the loopback device.
	 */
	dev = dev_get_by_index(net, id->route.addr.dev_addr.bound_dev_if);
	skb->dev = dev ?: net->loopback_dev;
	/* As for a packet that came in: in softirq context, BHs off. */
	local_bh_disable();
	ret = nf_hook(pf, NF_INET_LOCAL_IN, net, NULL, skb, dev, NULL,
		      sdp_filter_okfn);
	local_bh_enable();
	if (ret == 1)
		kfree_skb(skb);	/* accepted: ours to free */
	dev_put(dev);
	if (ret == 1)
		return true;
	SDP_INC_STATS(net, SDP_MIB_PASSIVE_FILTERED);
	net_info_ratelimited("%pISpc: connection request to port %u refused by the host's firewall\n",
			     peer, ntohs(sdp_addr_port(local)));
	return false;
}
