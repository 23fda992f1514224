// SPDX-License-Identifier: GPL-2.0
/* TCP_INFO through the kernel's own struct tcp_info (see tcpinfo.h). */
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <linux/tcp.h>

#include "tcpinfo.h"

int test_tcp_info(int fd, struct test_tcp_info *ti)
{
	struct tcp_info k;
	socklen_t len = sizeof(k);

	memset(&k, 0, sizeof(k));
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &k, &len))
		return -1;
	ti->state = k.tcpi_state;
	ti->snd_mss = k.tcpi_snd_mss;
	ti->rcv_mss = k.tcpi_rcv_mss;
	ti->unacked = k.tcpi_unacked;
	ti->bytes_acked = k.tcpi_bytes_acked;
	ti->bytes_received = k.tcpi_bytes_received;
	ti->bytes_sent = k.tcpi_bytes_sent;
	ti->segs_out = k.tcpi_segs_out;
	ti->segs_in = k.tcpi_segs_in;
	ti->data_segs_in = k.tcpi_data_segs_in;
	ti->notsent_bytes = k.tcpi_notsent_bytes;
	ti->rtt = k.tcpi_rtt;
	ti->rttvar = k.tcpi_rttvar;
	ti->min_rtt = k.tcpi_min_rtt;
	return 0;
}
