// SPDX-License-Identifier: GPL-2.0
/*
 * Sockets Direct Protocol -- socket options: SOL_SDP, and the SOL_TCP
 * options that programs written for TCP set.
 *
 * Copyright (C) 2026 The SDP for Linux authors
 *
 * A program moved from TCP to SDP (natively or by libsdp) sets the TCP
 * options it always set, and some treat an error as fatal.  Every option
 * below is therefore accepted with TCP's argument checks and errors, and
 * reads back as TCP would read it back; what it means on SDP is in the
 * table of sdp(7) and Documentation/networking/sdp.rst:
 *   TCP_NODELAY, TCP_CORK      batching of small sends (sdp_tx.c);
 *   TCP_INFO                   struct tcp_info with the fields that have
 *                              an SDP meaning (sdp_tcp_info());
 *   TCP_MAXSEG                 reads the payload of one SDP message;
 *                              a value set is checked and kept;
 *   TCP_NOTSENT_LOWAT          bounds the bytes not yet posted, as TCP
 *                              bounds those not yet sent (sdp_tx.c);
 *   TCP_CONGESTION             reads "sdp" (credit-based flow control,
 *                              no congestion control); a name set is
 *                              accepted and has no effect on SDP (a
 *                              fallback's TCP socket gets it);
 *   TCP_KEEPIDLE, TCP_KEEPINTVL, TCP_KEEPCNT, TCP_USER_TIMEOUT
 *                              dead-peer detection (sdp_keepalive.c);
 *   TCP_INQ                    receives carry the bytes left to read
 *                              (sdp_recvmsg());
 *   TCP_LINGER2                how long a closed socket waits for its
 *                              peer (net.sdp.fin_timeout's value for
 *                              it; sdp_close.c);
 *   TCP_QUICKACK, TCP_DEFER_ACCEPT, TCP_SYNCNT, TCP_FASTOPEN,
 *   TCP_FASTOPEN_CONNECT       checked and kept, no effect on SDP.
 * And of the IP levels (sdp_setsockopt_ip()):
 *   IP_TOS, IPV6_TCLASS        the traffic class of the next connect
 *                              (rdma_set_service_type());
 *   IPV6_V6ONLY                before bind(): a listener on :: takes
 *                              IPv6 peers only (rdma_set_afonly()).
 * Other SOL_TCP, SOL_IP and SOL_IPV6 names fail with ENOPROTOOPT.  All
 * values are under lock_sock(); an accepted socket inherits its
 * listener's.
 */
#include <linux/in6.h>
#include <linux/tcp.h>
#include <net/inet_ecn.h>
#include <net/tcp.h>
#include <rdma/rdma_cm.h>

#include "sdp.h"
#include "sdp_conn.h"
#include "sdp_fallback.h"
#include "sdp_ka.h"
#include "sdp_msgzc.h"
#include "sdp_net.h"
#include "sdp_proto.h"
#include "sdp_sockopt.h"
#include "sdp_stats.h"
#include "sdp_tx.h"
#include "sdp_wire.h"

#define SDP_HDR			sizeof(struct sdp_bsdh)
/* What TCP_CONGESTION reads: no TCP congestion control runs. */
static const char sdp_congestion_name[TCP_CA_NAME_MAX] = "sdp";
static_assert(SDP_CA_NAME_MAX == TCP_CA_NAME_MAX);

/* Payload bytes of one message: what TCP_MAXSEG and TCP_INFO report. */
static u32 sdp_payload_size(const struct sdp_sock *ssk)
{
	u32 max = READ_ONCE(ssk->conn.tx_max);

	return (max > SDP_HDR ? max : SDP_BUF_SIZE) - SDP_HDR;
}

/*
 * TCP_DEFER_ACCEPT is kept as TCP keeps it, a number of SYN-ACK
 * retransmissions, so that it reads back rounded as on TCP: from @secs
 * with a 1 s first timeout doubling up to TCP_RTO_MAX.
 */
static u8 sdp_secs_to_retrans(int secs)
{
	int timeout = TCP_TIMEOUT_INIT / HZ, period = timeout;
	u8 res = 0;

	if (secs <= 0)
		return 0;
	res = 1;
	while (secs > period && res < 255) {
		res++;
		timeout <<= 1;
		if (timeout > TCP_RTO_MAX / HZ)
			timeout = TCP_RTO_MAX / HZ;
		period += timeout;
	}
	return res;
}

static int sdp_retrans_to_secs(u8 retrans)
{
	int timeout = TCP_TIMEOUT_INIT / HZ, period = 0;

	while (retrans--) {
		period += timeout;
		timeout <<= 1;
		if (timeout > TCP_RTO_MAX / HZ)
			timeout = TCP_RTO_MAX / HZ;
	}
	return period;
}

/*
 * TCP_CONGESTION: accepted, no congestion control to choose; the name is
 * kept for the TCP socket of a fallback (sdp_fallback.c).
 */
static int sdp_set_congestion(struct sdp_sock *ssk, sockptr_t optval,
			      unsigned int optlen)
{
	char name[TCP_CA_NAME_MAX] = "";
	long n;

	if (optlen < 1)
		return -EINVAL;
	n = strncpy_from_sockptr(name, optval,
				 min_t(long, TCP_CA_NAME_MAX - 1, optlen));
	if (n < 0)
		return -EFAULT;
	name[n] = '\0';
	lock_sock(&ssk->sk);
	strscpy(ssk->tcp.congestion, name, sizeof(ssk->tcp.congestion));
	release_sock(&ssk->sk);
	return 0;
}

/* TCP's range check: @val into *@field if @lo <= @val <= @hi. */
static int sdp_opt_in(int val, int lo, int hi, int *field)
{
	if (val < lo || val > hi)
		return -EINVAL;
	*field = val;
	return 0;
}

static int sdp_setsockopt_sdp(struct sdp_sock *ssk, int optname, int val)
{
	switch (optname) {
	case SDP_ZCOPY_THRESH:
		if (val < 0)
			return -EINVAL;
		lock_sock(&ssk->sk);
		ssk->zc_thresh = val;
		release_sock(&ssk->sk);
		return 0;
	case SDP_TCP_FALLBACK:
		if (val < 0 || val > 1)
			return -EINVAL;
		lock_sock(&ssk->sk);
		set_bit(SDP_O_FB_SET, &ssk->opts);
		assign_bit(SDP_O_FB_ON, &ssk->opts, val);
		release_sock(&ssk->sk);
		return 0;
	case SDP_TCP_FALLBACK_TIMEOUT:
		if (val < 0 || val > SDP_FB_TIMEOUT_MS_MAX)
			return -EINVAL;
		lock_sock(&ssk->sk);
		sdp_fb_timeout_set(ssk, val);
		release_sock(&ssk->sk);
		return 0;
	case SDP_NO_IWARP:
		if (val < 0 || val > 1)
			return -EINVAL;
		lock_sock(&ssk->sk);
		assign_bit(SDP_O_NO_IWARP, &ssk->opts, val);
		release_sock(&ssk->sk);
		return 0;
	default:
		return -ENOPROTOOPT;	/* SDP_INFO is read-only */
	}
}

/* Options with an effect on the data path; lock_sock() held. */
static int sdp_setsockopt_tx(struct sdp_sock *ssk, int optname, int val)
{
	spin_lock_bh(&ssk->lock);
	switch (optname) {
	case TCP_NODELAY:
		assign_bit(SDP_O_NODELAY, &ssk->opts, val);
		if (val && test_bit(SDP_C_QP, &ssk->conn.flags))
			sdp_tx_flush(ssk);
		break;
	case TCP_CORK:
		assign_bit(SDP_O_CORK, &ssk->opts, val);
		if (!val && test_bit(SDP_C_QP, &ssk->conn.flags))
			sdp_tx_flush(ssk);
		break;
	case TCP_NOTSENT_LOWAT:
		WRITE_ONCE(ssk->tcp.notsent_lowat, val);
		/* Room it makes for a MSG_ZEROCOPY send in progress. */
		if (test_bit(SDP_C_QP, &ssk->conn.flags))
			sdp_tx_try_control(ssk);
		break;
	}
	spin_unlock_bh(&ssk->lock);
	/* A larger bound may let a waiting writer go on. */
	if (optname == TCP_NOTSENT_LOWAT)
		ssk->sk.sk_write_space(&ssk->sk);
	return 0;
}

/*
 * IP_TOS, IPV6_TCLASS and IPV6_V6ONLY, with the argument checks and
 * errors of TCP on IPv4 and IPv6: IP_TOS takes an int or a char, and a
 * stream socket's ECN bits are not the program's to set; IPV6_TCLASS
 * takes -1 (the default, 0) to 255; IPV6_V6ONLY only before the socket
 * has a port.  The traffic class goes to the CM when the socket
 * connects; set later, it is kept and read back and the connection
 * keeps the class it was made with.
 */
static int sdp_setsockopt_ip(struct sdp_sock *ssk, int level, int optname,
			     sockptr_t optval, unsigned int optlen)
{
	int val = 0, err = 0;
	u8 c;

	if (level == SOL_IP && optname != IP_TOS)
		return -ENOPROTOOPT;
	if (level == SOL_IPV6 && optname != IPV6_TCLASS &&
	    optname != IPV6_V6ONLY)
		return -ENOPROTOOPT;
	if (optlen >= sizeof(int)) {
		if (copy_from_sockptr(&val, optval, sizeof(val)))
			return -EFAULT;
	} else if (level == SOL_IPV6) {
		return -EINVAL;
	} else if (optlen) {
		if (copy_from_sockptr(&c, optval, sizeof(c)))
			return -EFAULT;
		val = c;
	}
	lock_sock(&ssk->sk);
	if (optname == IP_TOS && level == SOL_IP) {
		ssk->tcp.tos = val & ~INET_ECN_MASK;
	} else if (optname == IPV6_V6ONLY) {
		if (test_bit(SDP_O_BOUND, &ssk->opts))
			err = -EINVAL;
		else
			ssk->tcp.v6only = val;
	} else if (val < -1 || val > 0xff) {
		err = -EINVAL;
	} else {
		ssk->tcp.tclass = val == -1 ? 0 : val & ~INET_ECN_MASK;
	}
	release_sock(&ssk->sk);
	return err;
}

int sdp_setsockopt(struct socket *sock, int level, int optname,
		   sockptr_t optval, unsigned int optlen)
{
	struct sock *sk = sock->sk;
	struct sdp_sock *ssk = sdp_sk(sk);
	struct sdp_tcp_opts *t = &ssk->tcp;
	int val, err = 0;

	if (level == SOL_SOCKET) {
		err = sdp_msgzc_setsockopt(sock, optname, optval, optlen);
		/* Once over TCP, the TCP socket takes it too. */
		if (!err && sdp_fb(ssk))
			err = sdp_fb_setsockopt(ssk, level, optname, optval,
						optlen);
		return err;
	}
	if (sdp_fb(ssk) && level != SOL_SDP)
		return sdp_fb_setsockopt(ssk, level, optname, optval, optlen);
	if (level == SOL_IP || level == SOL_IPV6)
		return sdp_setsockopt_ip(ssk, level, optname, optval, optlen);
	if (level != SOL_TCP && level != SOL_SDP)
		return -ENOPROTOOPT;
	if (level == SOL_TCP && optname == TCP_CONGESTION)
		return sdp_set_congestion(ssk, optval, optlen);
	if (optlen < sizeof(int))
		return -EINVAL;
	if (copy_from_sockptr(&val, optval, sizeof(val)))
		return -EFAULT;
	if (level == SOL_SDP)
		return sdp_setsockopt_sdp(ssk, optname, val);

	lock_sock(sk);
	switch (optname) {
	case TCP_NODELAY:
	case TCP_CORK:
	case TCP_NOTSENT_LOWAT:
		err = sdp_setsockopt_tx(ssk, optname, val);
		break;
	case TCP_MAXSEG:	/* 0: none */
		err = sdp_opt_in(val, val ? TCP_MIN_MSS : 0, MAX_TCP_WINDOW,
				 &t->maxseg);
		break;
	case TCP_QUICKACK:
		t->quickack_off = !val;
		break;
	case TCP_INQ:
		if (val < 0 || val > 1)
			err = -EINVAL;
		else
			t->inq = val;
		break;
	case TCP_LINGER2:	/* as TCP: -1, or up to TCP_FIN_TIMEOUT_MAX */
		t->linger2 = val < 0 ? -1 :
			     min_t(long, val, TCP_FIN_TIMEOUT_MAX / HZ) * HZ;
		break;
	case TCP_DEFER_ACCEPT:
		t->defer_accept = sdp_secs_to_retrans(val);
		break;
	case TCP_KEEPIDLE:
		err = sdp_opt_in(val, 1, MAX_TCP_KEEPIDLE, &t->keepidle);
		break;
	case TCP_KEEPINTVL:
		err = sdp_opt_in(val, 1, MAX_TCP_KEEPINTVL, &t->keepintvl);
		break;
	case TCP_KEEPCNT:
		err = sdp_opt_in(val, 1, MAX_TCP_KEEPCNT, &t->keepcnt);
		break;
	case TCP_USER_TIMEOUT:
		err = sdp_opt_in(val, 0, INT_MAX, &t->user_timeout);
		break;
	case TCP_SYNCNT:
		err = sdp_opt_in(val, 1, MAX_TCP_SYNCNT, &t->syncnt);
		break;
	case TCP_FASTOPEN:
		err = sdp_opt_in(val, 0, INT_MAX, &t->fastopen);
		break;
	case TCP_FASTOPEN_CONNECT:
		if (val > 1 || val < 0)
			err = -EINVAL;
		else if (sk->sk_state != TCP_CLOSE)
			err = -EINVAL;
		else
			t->fastopen_connect = val;
		break;
	default:
		err = -ENOPROTOOPT;
		break;
	}
	/* Keepalive and the user timeout take the new values now. */
	if (!err && (optname == TCP_KEEPIDLE || optname == TCP_KEEPINTVL ||
		     optname == TCP_KEEPCNT || optname == TCP_USER_TIMEOUT))
		sdp_ka_changed(sk);
	release_sock(sk);
	return err;
}

/*
 * TCP_INFO: the fields that have an SDP meaning, the rest 0.  A message
 * plays the part of a segment: the MSS is its payload, unacked counts
 * messages posted whose send has not completed, the congestion window is
 * the peer's credits (its posted receive buffers), the RTT that of sends
 * to their completion (sdp_conn::rtt), the bytes acknowledged and
 * received the stream positions.
 */
static void sdp_tcp_info(struct sdp_sock *ssk, struct tcp_info *ti)
{
	const struct sdp_sock_stats *st = &ssk->stats;

	memset(ti, 0, sizeof(*ti));
	ti->tcpi_state = inet_sk_state_load(&ssk->sk);
	ti->tcpi_snd_mss = sdp_payload_size(ssk);
	ti->tcpi_rcv_mss = SDP_BUF_SIZE - SDP_HDR;
	ti->tcpi_advmss = SDP_BUF_SIZE - SDP_HDR;
	ti->tcpi_pmtu = SDP_BUF_SIZE;
	ti->tcpi_snd_ssthresh = TCP_INFINITE_SSTHRESH;
	ti->tcpi_rcv_ssthresh = TCP_INFINITE_SSTHRESH;
	ti->tcpi_reordering = 0;
	if (!test_bit(SDP_C_QP, &ssk->conn.flags))
		return;

	spin_lock_bh(&ssk->lock);
	ti->tcpi_unacked = ssk->conn.tx_post - ssk->conn.tx_tail +
			   test_bit(SDP_C_TX_PIECE, &ssk->conn.flags);
	ti->tcpi_snd_cwnd = max(ssk->conn.tx_credits, 0);
	ti->tcpi_rcv_space = ssk->conn.rx_count * (SDP_BUF_SIZE - SDP_HDR);
	ti->tcpi_notsent_bytes = sdp_tx_notsent(ssk);
	/* As TCP's: microseconds; no sample yet: 0, and min_rtt ~0U. */
	ti->tcpi_rtt = ssk->conn.rtt.srtt8 >> 3;
	ti->tcpi_rttvar = ssk->conn.rtt.mdev4 >> 2;
	ti->tcpi_min_rtt = ssk->conn.rtt.srtt8 ? ssk->conn.rtt.min : ~0U;
	ti->tcpi_bytes_sent = st->cnt[SDP_SC_BCOPY_TX_BYTES] +
			      st->cnt[SDP_SC_ZCOPY_TX_BYTES];
	/* The stream positions, as TCP's are snd_una and rcv_nxt. */
	ti->tcpi_bytes_acked = ssk->conn.snd_una;
	ti->tcpi_bytes_received = ssk->conn.rx_seq;
	ti->tcpi_data_segs_out = st->cnt[SDP_SC_BCOPY_TX_MSGS] +
				 st->cnt[SDP_SC_SRCAVAIL_TX];
	ti->tcpi_data_segs_in = st->cnt[SDP_SC_BCOPY_RX_MSGS] +
				st->cnt[SDP_SC_SRCAVAIL_RX];
	ti->tcpi_segs_out = ti->tcpi_data_segs_out +
			    st->cnt[SDP_SC_CREDIT_UPDATES_TX];
	ti->tcpi_segs_in = ti->tcpi_data_segs_in +
			   st->cnt[SDP_SC_CREDIT_UPDATES_RX];
	spin_unlock_bh(&ssk->lock);
}

static int sdp_put_opt(char __user *optval, int __user *optlen,
		       const void *val, unsigned int size, int len)
{
	len = min_t(unsigned int, len, size);
	if (put_user(len, optlen) || copy_to_user(optval, val, len))
		return -EFAULT;
	return 0;
}

static int sdp_getsockopt_sdp(struct sdp_sock *ssk, int optname,
			      char __user *optval, int __user *optlen, int len)
{
	struct sdp_info info;
	int val;

	switch (optname) {
	case SDP_ZCOPY_THRESH:
		val = READ_ONCE(ssk->zc_thresh);
		return sdp_put_opt(optval, optlen, &val, sizeof(val), len);
	case SDP_INFO:
		spin_lock_bh(&ssk->lock);
		sdp_stats_to_info(&ssk->stats, &info);
		if (sdp_fb(ssk)) {
			info.sdpi_transport = SDP_TRANSPORT_TCP;
			info.sdpi_fallback_reason = sdp_fb_reason(ssk);
		} else {
			info.sdpi_rx_seq = ssk->conn.rx_seq;
			info.sdpi_snd_una = ssk->conn.snd_una;
			info.sdpi_snd_nxt = ssk->conn.snd_nxt;
		}
		spin_unlock_bh(&ssk->lock);
		return sdp_put_opt(optval, optlen, &info, sizeof(info), len);
	case SDP_TCP_FALLBACK:
		val = sdp_fb_enabled(ssk);
		return sdp_put_opt(optval, optlen, &val, sizeof(val), len);
	case SDP_TCP_FALLBACK_TIMEOUT:
		val = sdp_fb_timeout_ms(ssk);
		return sdp_put_opt(optval, optlen, &val, sizeof(val), len);
	case SDP_NO_IWARP:
		val = test_bit(SDP_O_NO_IWARP, &ssk->opts);
		return sdp_put_opt(optval, optlen, &val, sizeof(val), len);
	default:
		return -ENOPROTOOPT;
	}
}

/* The int-valued SOL_TCP options, as TCP reads them back. */
static int sdp_getsockopt_int(struct sdp_sock *ssk, int optname, int *val)
{
	const struct sdp_tcp_opts *t = &ssk->tcp;
	struct net *net = sock_net(&ssk->sk);
	int state = inet_sk_state_load(&ssk->sk);

	switch (optname) {
	case TCP_NODELAY:
		*val = test_bit(SDP_O_NODELAY, &ssk->opts);
		break;
	case TCP_CORK:
		*val = test_bit(SDP_O_CORK, &ssk->opts);
		break;
	case TCP_MAXSEG:
		*val = sdp_payload_size(ssk);
		if (t->maxseg && ((1 << state) & (TCPF_CLOSE | TCPF_LISTEN)))
			*val = t->maxseg;
		break;
	case TCP_NOTSENT_LOWAT:
		*val = READ_ONCE(t->notsent_lowat);
		break;
	case TCP_QUICKACK:
		*val = !t->quickack_off;
		break;
	case TCP_DEFER_ACCEPT:
		*val = sdp_retrans_to_secs(t->defer_accept);
		break;
	case TCP_KEEPIDLE:
		*val = t->keepidle ? :
		       READ_ONCE(net->ipv4.sysctl_tcp_keepalive_time) / HZ;
		break;
	case TCP_KEEPINTVL:
		*val = t->keepintvl ? :
		       READ_ONCE(net->ipv4.sysctl_tcp_keepalive_intvl) / HZ;
		break;
	case TCP_KEEPCNT:
		*val = t->keepcnt ? :
		       READ_ONCE(net->ipv4.sysctl_tcp_keepalive_probes);
		break;
	case TCP_USER_TIMEOUT:
		*val = t->user_timeout;
		break;
	case TCP_SYNCNT:
		*val = t->syncnt ? :
		       READ_ONCE(net->ipv4.sysctl_tcp_syn_retries);
		break;
	case TCP_INQ:
		*val = t->inq;
		break;
	case TCP_LINGER2:
		*val = t->linger2 < 0 ? -1 :
		       (t->linger2 ? : sdp_sysctl_fin_timeout(net)) / HZ;
		break;
	case TCP_FASTOPEN:
		*val = t->fastopen;
		break;
	case TCP_FASTOPEN_CONNECT:
		*val = t->fastopen_connect;
		break;
	default:
		return -ENOPROTOOPT;
	}
	return 0;
}

/*
 * IP_TOS, IPV6_TCLASS, IPV6_V6ONLY read back as on TCP: IP_TOS as one
 * byte to a caller with room for less than an int.  The checks come in
 * TCP's order: at SOL_IP a negative length before the name, at SOL_IPV6
 * the name first.
 */
static int sdp_getsockopt_ip(struct sdp_sock *ssk, int level, int optname,
			     char __user *optval, int __user *optlen, int len)
{
	int val;
	u8 c;

	if (level == SOL_IP && len < 0)
		return -EINVAL;
	if (level == SOL_IP && optname == IP_TOS)
		val = READ_ONCE(ssk->tcp.tos);
	else if (level == SOL_IPV6 && optname == IPV6_TCLASS)
		val = READ_ONCE(ssk->tcp.tclass);
	else if (level == SOL_IPV6 && optname == IPV6_V6ONLY)
		val = READ_ONCE(ssk->tcp.v6only);
	else
		return -ENOPROTOOPT;
	if (len < 0)
		return -EINVAL;
	if (level == SOL_IP && len > 0 && len < (int)sizeof(int)) {
		c = val;
		return sdp_put_opt(optval, optlen, &c, sizeof(c), len);
	}
	return sdp_put_opt(optval, optlen, &val, sizeof(val), len);
}

int sdp_getsockopt(struct socket *sock, int level, int optname,
		   char __user *optval, int __user *optlen)
{
	struct sdp_sock *ssk = sdp_sk(sock->sk);
	struct tcp_info info;
	int val, len, err;

	if (sdp_fb(ssk) && level != SOL_SDP)
		return sdp_fb_getsockopt(ssk, level, optname, optval, optlen);
	if (level != SOL_TCP && level != SOL_SDP && level != SOL_IP &&
	    level != SOL_IPV6)
		return -ENOPROTOOPT;
	if (get_user(len, optlen))
		return -EFAULT;
	if (level == SOL_IP || level == SOL_IPV6)
		return sdp_getsockopt_ip(ssk, level, optname, optval, optlen,
					 len);
	if (len < 0)
		return -EINVAL;
	if (level == SOL_SDP)
		return sdp_getsockopt_sdp(ssk, optname, optval, optlen, len);

	switch (optname) {
	case TCP_INFO:
		sdp_tcp_info(ssk, &info);
		return sdp_put_opt(optval, optlen, &info, sizeof(info), len);
	case TCP_CONGESTION:
		/* As TCP: the whole zero-padded name buffer. */
		return sdp_put_opt(optval, optlen, sdp_congestion_name,
				   sizeof(sdp_congestion_name), len);
	}
	lock_sock(sock->sk);
	err = sdp_getsockopt_int(ssk, optname, &val);
	release_sock(sock->sk);
	if (err)
		return err;
	return sdp_put_opt(optval, optlen, &val, sizeof(val), len);
}
