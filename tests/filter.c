// SPDX-License-Identifier: GPL-2.0
/*
 * The host's firewall for SDP (src/sdp_filter.c): a connection request to
 * an SDP listener is shown to the host's input hook as the TCP SYN a TCP
 * client would send, and refused unless the rules accept it.  Each test
 * loads a small nftables table of its own (table inet sdp_filter_test,
 * an input chain) with nft(8), and deletes it again; what the rules drop
 * or reject for TCP to a port, the SDP connect() to that port is refused
 * (ECONNREFUSED, PassiveFiltered), and a port the rules leave alone still
 * connects.  net.sdp.netfilter 0 turns the check off.  Over iWARP the
 * rules judge the connection's own TCP SYN instead, before the module
 * sees anything: a dropped one brings no answer, and the connect() times
 * out as a TCP client's would (dropped_errno()).  The test address
 * connects to itself (Soft-RoCE loops back), so the "peer" is the test
 * address too; tests/wire.c does the same across two hosts.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/sdp.h>

#include "net.h"
#include "ops.h"
#include "tap.h"
#include "util.h"

#define NETFILTER_SYSCTL	"/proc/sys/net/sdp/netfilter"
#define TABLE			"sdp_filter_test"

/* nft(8) with @args (NULL-terminated); its exit status. */
#define NFT(...) run((const char *const[]){ "nft", __VA_ARGS__, NULL })

/*
 * The test's table, with an input chain whose only rule is @rule.  Every
 * test loads one, before it connects: on a real host (host mode) each
 * skips here.
 */
static void rule_load(const char *rule)
{
	TAP_SKIP_IF_HOST("loads nftables rules into the host's firewall");
	/* One left by a test that failed: none, the usual case. */
	if (system("nft delete table inet " TABLE " 2>/dev/null")) {
	}
	CHECK(NFT("add", "table", "inet", TABLE) == 0 &&
	      NFT("add", "chain", "inet", TABLE, "input",
		  "{ type filter hook input priority 0; policy accept; }") == 0 &&
	      NFT("add", "rule", "inet", TABLE, "input", rule) == 0,
	      "nft could not load: %s", rule);
}

static void rule_unload(void)
{
	CHECK(NFT("delete", "table", "inet", TABLE) == 0, "nft delete table");
}

#define SYN_RETRIES	"/proc/sys/net/ipv4/tcp_syn_retries"

/*
 * An SDP connect() to @addr: 0, the errno it failed with, or EINPROGRESS
 * if no answer came within WAIT_MS.  Over soft-iWARP a connect whose SYN
 * gets no answer takes the kernel's SYN retries, and its resources stay
 * as long after a close() (siw makes its TCP connection within
 * rdma_connect(); sdp(7), "iWARP devices"): one retry, about 3 s, for
 * the test.
 */
static int try_connect(const struct sockaddr_storage *addr)
{
	int fd = CHECK_OK(socket(AF_INET_SDP, SOCK_STREAM | SOCK_NONBLOCK, 0));
	char retries[16] = "";
	int err = 0;

	if (test_provider_siw()) {
		CHECK_OK(read_file(SYN_RETRIES, retries, sizeof(retries)));
		CHECK_OK(write_file(SYN_RETRIES, "1"));
	}
	if (connect(fd, (const struct sockaddr *)addr,
		    addr->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
						  sizeof(struct sockaddr_in)))
		err = errno;
	if (err == EINPROGRESS && wait_fd(fd, POLLOUT, WAIT_MS))
		err = sockopt_get(fd, SOL_SOCKET, SO_ERROR);
	close(fd);
	if (retries[0])
		CHECK_OK(write_file(SYN_RETRIES, retries));
	return err;
}

/*
 * What a rule that drops the port does to an SDP connect(): over
 * InfiniBand and RoCE the module refuses the request (ECONNREFUSED,
 * PassiveFiltered); over iWARP the host's firewall drops the
 * connection's own TCP SYN before the module sees anything, and the
 * connect() times out, as a TCP client's would (sdp(7), "iWARP
 * devices").
 */
static int dropped_errno(void)
{
	return test_provider_siw() ? ETIMEDOUT : ECONNREFUSED;
}

static long long filtered_per_drop(void)
{
	return test_provider_siw() ? 0 : 1;
}

/* An SDP listener on the test address; its address in @addr. */
static int listener(struct sockaddr_storage *addr)
{
	return net_listener(addr, 8, 0);
}

/* Take and close what a listener accepted. */
static void drain(int l)
{
	int s;

	while (wait_fd(l, POLLIN, 100) > 0) {
		s = accept(l, NULL, NULL);
		CHECK(s >= 0, "accept: %s", strerror(errno));
		close(s);
	}
}

/*
 * A rule that drops TCP to one port refuses SDP to that port, counted in
 * PassiveFiltered (and PassiveRefused); SDP to another port, which the
 * rule leaves alone, connects; without the rule, the first port connects
 * again.  The rule's counter shows that netfilter judged the request.
 */
static void test_filter_drop_port(void)
{
	struct sockaddr_storage a, b;
	struct stats before, after;
	int la = listener(&a), lb = listener(&b), err;
	char rule[128], *out, *pkts;

	snprintf(rule, sizeof(rule), "tcp dport %u counter drop",
		 sockaddr_port(&a));
	rule_load(rule);
	stats_read(&before);
	err = try_connect(&a);
	CHECK(err == dropped_errno(), "connect to a dropped port: %s",
	      err ? strerror(err) : "connected");
	err = try_connect(&b);
	CHECK(err == 0, "connect to a port the rule leaves alone: %s",
	      strerror(err));
	stats_read(&after);
	CHECK(stat_of(&after, "PassiveFiltered") -
	      stat_of(&before, "PassiveFiltered") == filtered_per_drop(),
	      "PassiveFiltered +%lld", stat_of(&after, "PassiveFiltered") -
	      stat_of(&before, "PassiveFiltered"));
	out = run_capture("nft list table inet " TABLE, &err);
	pkts = strstr(out, "counter packets ");
	CHECK(pkts && (test_provider_siw() ? atoi(pkts + 16) >= 1 :
					     atoi(pkts + 16) == 1),
	      "the rule did not see the request:\n%s", out);
	free(out);
	rule_unload();
	err = try_connect(&a);
	CHECK(err == 0, "connect once the rule is gone: %s", strerror(err));
	drain(la);
	drain(lb);
	close(la);
	close(lb);
}

/*
 * The rules see the peer's address and the input interface as for TCP:
 * a reject by source address refuses, and one for another source does
 * not; a drop of everything that does not come in on the test's netdev
 * leaves the request alone (it came in on that netdev).  Over iWARP the
 * rules see the connection's own SYN, which to the host's own address
 * comes in on the loopback device.
 */
static void test_filter_addr_and_interface(void)
{
	const char *in_dev = test_provider_siw() ? "lo" : TEST_NETDEV();
	struct sockaddr_storage a;
	char rule[256];
	int l = listener(&a), err;

	snprintf(rule, sizeof(rule), "ip saddr %s tcp dport %u reject",
		 TEST_ADDR(), sockaddr_port(&a));
	rule_load(rule);
	err = try_connect(&a);
	CHECK(err == ECONNREFUSED, "rejected by source address: %s",
	      err ? strerror(err) : "connected");
	snprintf(rule, sizeof(rule), "ip saddr 192.0.2.1 tcp dport %u drop",
		 sockaddr_port(&a));
	rule_load(rule);
	err = try_connect(&a);
	CHECK(err == 0, "a rule for another source refused it: %s",
	      strerror(err));
	snprintf(rule, sizeof(rule), "iifname != \"%s\" tcp dport %u drop",
		 in_dev, sockaddr_port(&a));
	rule_load(rule);
	err = try_connect(&a);
	CHECK(err == 0, "the request did not come in on %s: %s",
	      in_dev, strerror(err));
	rule_unload();
	drain(l);
	close(l);
}

/*
 * A dual-stack listener (bound to ::) and a client that connects to the
 * v4-mapped test address: the rules see IPv4 (an ip rule of the inet
 * table drops it), as they would the TCP SYN.
 */
static void test_filter_v4_mapped(void)
{
	struct sockaddr_in6 any = { .sin6_family = AF_INET6 };
	struct sockaddr_storage la, dst;
	struct sockaddr_in6 *d6 = (struct sockaddr_in6 *)&dst;
	char rule[128];
	int l, err;

	if (access("/proc/sys/net/ipv6", F_OK))
		tap_skip("no IPv6 in this kernel");
	l = CHECK_OK(socket(AF_INET_SDP, SOCK_STREAM, 0));
	CHECK_OK(bind(l, (struct sockaddr *)&any, sizeof(any)));
	CHECK_OK(listen(l, 4));
	local_addr(l, &la);
	memset(&dst, 0, sizeof(dst));
	d6->sin6_family = AF_INET6;
	d6->sin6_port = htons(sockaddr_port(&la));
	d6->sin6_addr.s6_addr[10] = 0xff;
	d6->sin6_addr.s6_addr[11] = 0xff;
	CHECK(inet_pton(AF_INET, TEST_ADDR(), &d6->sin6_addr.s6_addr[12]) == 1,
	      "SDP_TEST_ADDR %s is not IPv4", TEST_ADDR());
	snprintf(rule, sizeof(rule), "ip daddr %s tcp dport %u drop",
		 TEST_ADDR(), sockaddr_port(&la));
	rule_load(rule);
	err = try_connect(&dst);
	CHECK(err == dropped_errno(), "v4-mapped, dropped by an ip rule: %s",
	      err ? strerror(err) : "connected");
	rule_unload();
	err = try_connect(&dst);
	CHECK(err == 0, "v4-mapped, no rule: %s", strerror(err));
	drain(l);
	close(l);
}

/*
 * net.sdp.netfilter 0: the rules are not asked (the harness resets it).
 * Over iWARP they judge the connection's own TCP SYN all the same.
 */
static void test_filter_off(void)
{
	struct sockaddr_storage a;
	int l = listener(&a), err;
	char rule[128];

	snprintf(rule, sizeof(rule), "tcp dport %u drop", sockaddr_port(&a));
	rule_load(rule);
	CHECK(write_file(NETFILTER_SYSCTL, "0") == 0, "write %s",
	      NETFILTER_SYSCTL);
	err = try_connect(&a);
	CHECK(err == (test_provider_siw() ? ETIMEDOUT : 0),
	      "net.sdp.netfilter 0: %s", err ? strerror(err) : "connected");
	CHECK(write_file(NETFILTER_SYSCTL, "1") == 0, "write %s",
	      NETFILTER_SYSCTL);
	err = try_connect(&a);
	CHECK(err == dropped_errno(), "net.sdp.netfilter 1 again: %s",
	      err ? strerror(err) : "connected");
	rule_unload();
	drain(l);
	close(l);
}

static const struct tap_test tests[] = {
	TAP_TEST(test_filter_drop_port),
	TAP_TEST(test_filter_addr_and_interface),
	TAP_TEST(test_filter_v4_mapped),
	TAP_TEST(test_filter_off),
};

int main(int argc, char **argv)
{
	if (!test_is_sdp()) {
		printf("1..0 # SKIP SDP only\n");
		return 0;
	}
	return tap_main(tests, sizeof(tests) / sizeof(tests[0]), argc, argv);
}
