// SPDX-License-Identifier: GPL-2.0
/*
 * The knobs: the net.sdp sysctls (bounds, per namespace, what
 * fin_timeout does), busy polling (net.sdp.recv_poll, SO_BUSY_POLL) and
 * the module parameters.  Every test puts the sysctls back.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/sdp.h>

#include "net.h"
#include "ops.h"
#include "tap.h"
#include "util.h"

/* ---- sysctls ---- */

struct knob {
	const char *name;
	long min, max, dflt;
};

/* Every int sysctl, as the module lists them (net.sdp.mem aside). */
static const struct knob knobs[] = {
#define SDP_SYSCTL(name, min, max, init) { #name, min, max, init },
#define SDP_SYSCTL_MEM(name)
#include "../src/sdp_sysctls.h"
#undef SDP_SYSCTL
#undef SDP_SYSCTL_MEM
};

#define NKNOBS (sizeof(knobs) / sizeof(knobs[0]))

static int sysctl_write(const char *name, long v)
{
	char path[128], val[32];
	int fd, n, err = 0;

	snprintf(path, sizeof(path), "/proc/sys/net/sdp/%s", name);
	n = snprintf(val, sizeof(val), "%ld\n", v);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, val, n) != n)
		err = -errno;
	close(fd);
	return err;
}

static long sysctl_read(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/proc/sys/net/sdp/%s", name);
	return read_ull(path);
}

static void sysctl_defaults(void)
{
	size_t i;

	for (i = 0; i < NKNOBS; i++)
		sysctl_write(knobs[i].name, knobs[i].dflt);
}

/* Each knob: default, both bounds accepted, one beyond each refused. */
static void test_sysctl_bounds(void)
{
	size_t i;

	sysctl_defaults();
	for (i = 0; i < NKNOBS; i++) {
		const struct knob *k = &knobs[i];
		int err;

		CHECK(sysctl_read(k->name) == k->dflt, "%s is %ld, want %ld",
		      k->name, sysctl_read(k->name), k->dflt);
		err = sysctl_write(k->name, k->min - 1);
		CHECK(err == -EINVAL, "%s=%ld: %s", k->name, k->min - 1,
		      err ? strerror(-err) : "accepted");
		err = sysctl_write(k->name, k->max + 1);
		CHECK(err == -EINVAL, "%s=%ld: %s", k->name, k->max + 1,
		      err ? strerror(-err) : "accepted");
		CHECK(sysctl_read(k->name) == k->dflt,
		      "%s changed to %ld by refused writes", k->name,
		      sysctl_read(k->name));
		CHECK_OK(sysctl_write(k->name, k->min));
		CHECK(sysctl_read(k->name) == k->min, "%s min", k->name);
		CHECK_OK(sysctl_write(k->name, k->max));
		CHECK(sysctl_read(k->name) == k->max, "%s max", k->name);
		CHECK_OK(sysctl_write(k->name, k->dflt));
	}
}

/* A new namespace has its own knobs, starting from the defaults. */
static void test_sysctl_per_netns(void)
{
	int status;
	pid_t pid;

	sysctl_defaults();
	CHECK_OK(sysctl_write("fin_timeout", 123));
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		if (unshare(CLONE_NEWNET))
			_exit(2);
		if (sysctl_read("fin_timeout") != 60)
			_exit(3);
		if (sysctl_write("fin_timeout", 7) || sysctl_read("fin_timeout") != 7)
			_exit(4);
		if (sysctl_write("recv_poll", 100001) != -EINVAL)
			_exit(5);
		_exit(0);
	}
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0, "child namespace check failed: %d",
	      WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	CHECK(sysctl_read("fin_timeout") == 123, "fin_timeout here is %ld",
	      sysctl_read("fin_timeout"));
	sysctl_defaults();
}

/*
 * net.sdp.fin_timeout bounds how long an orphaned socket waits for the
 * peer's close: with 1 s, a client closed while its peer keeps the
 * connection open is aborted after about a second.
 */
static void test_sysctl_fin_timeout_applies(void)
{
	struct stats before, after;
	unsigned long cino;
	long long t0;
	ssize_t r;
	char ch;
	int c, s;

	sysctl_defaults();
	wait_no_sockets();
	CHECK_OK(sysctl_write("fin_timeout", 1));
	stats_read(&before);
	net_pair(&c, &s);
	cino = inode_of(c);
	close(c);		/* DisConn; the server never closes */
	CHECK(read(s, &ch, 1) == 0, "no end of stream");
	t0 = now_ms();
	/* The orphan is aborted: the server sees the AbortConn. */
	CHECK(wait_fd(s, POLLERR, 8000) > 0, "no abort after 8 s");
	r = send(s, "x", 1, MSG_NOSIGNAL);
	CHECK(r == -1, "send after the abort: %zd", r);
	CHECK(now_ms() - t0 < 8000, "abort took %lld ms", now_ms() - t0);
	stats_read(&after);
	CHECK(DELTA("AbortOnTimeout") == 1, "AbortOnTimeout moved by %lld",
	      DELTA("AbortOnTimeout"));
	CHECK(!proc_net_sdp_has_inode(cino), "closed client still listed");
	close(s);
	sysctl_defaults();
}

/* ---- busy polling ---- */

struct echo {
	int fd;
	int rounds;
	int cpu;
	int err;
};

/* Run the calling thread on @cpu alone. */
static void pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	CHECK_OK(sched_setaffinity(0, sizeof(set), &set));
}

/* The first @n CPUs this process may run on, in @cpus; false if fewer. */
static bool allowed_cpus(int *cpus, int n)
{
	cpu_set_t set;
	int cpu, i = 0;

	CHECK_OK(sched_getaffinity(0, sizeof(set), &set));
	for (cpu = 0; cpu < CPU_SETSIZE && i < n; cpu++)
		if (CPU_ISSET(cpu, &set))
			cpus[i++] = cpu;
	return i == n;
}

/* On CPU e->cpu, send back each byte that arrives, @rounds times. */
static void *echo_fn(void *arg)
{
	struct echo *e = arg;
	char ch;
	int i;

	pin_to_cpu(e->cpu);
	for (i = 0; i < e->rounds; i++) {
		if (read_all(e->fd, &ch, 1) != 1 ||
		    write_all(e->fd, &ch, 1) != 1) {
			e->err = errno ? errno : EIO;
			break;
		}
	}
	return NULL;
}

/*
 * @rounds one-byte round trips from @c, the caller pinned to @cpu_c, to
 * an echo thread on @s pinned to @cpu_s; returns how long they took in
 * microseconds.  Each blocking read waits for the other side.
 */
static long long ping_pong(int c, int cpu_c, int s, int cpu_s, int rounds)
{
	struct echo e = { .fd = s, .rounds = rounds, .cpu = cpu_s };
	long long t0, t;
	pthread_t thr;
	char ch = 'p';
	int i, err;

	pin_to_cpu(cpu_c);
	err = pthread_create(&thr, NULL, echo_fn, &e);
	CHECK(!err, "pthread_create: %s", strerror(err));
	t0 = now_us();
	for (i = 0; i < rounds; i++) {
		CHECK(write_all(c, &ch, 1) == 1, "write: %s", strerror(errno));
		CHECK(read_all(c, &ch, 1) == 1, "read: %s", strerror(errno));
	}
	t = now_us() - t0;
	pthread_join(thr, NULL);
	CHECK(!e.err, "echo: %s", strerror(e.err));
	return t;
}

/*
 * The CPUs on which the kernel runs unbound work (6.12's Soft-RoCE does
 * its packet processing in an unbound workqueue), a hex mask.
 */
#define WQ_CPUMASK "/sys/devices/virtual/workqueue/cpumask"

/*
 * Round trips, @batches of 50 at most, until a receive finds its data by
 * polling; the BusyPollHits of them all.  The ends swap CPUs from one
 * batch to the next: soft-iWARP sends each kernel QP's messages from a
 * kthread bound to a CPU it picked for the QP (siw_sq_start()), and an
 * end that polls on its own QP's CPU yields to that kthread every time,
 * before its message has even gone.  One of the two placements keeps
 * each end off its own QP's CPU.
 */
static long long poll_hits(int c, int cpu_c, int s, int cpu_s, int batches)
{
	struct stats before, after;
	long long hits = 0;
	int b;

	for (b = 0; b < batches && !hits; b++) {
		stats_read(&before);
		if (b % 2)
			ping_pong(c, cpu_s, s, cpu_c, 50);
		else
			ping_pong(c, cpu_c, s, cpu_s, 50);
		stats_read(&after);
		hits = DELTA("BusyPollHits");
	}
	tap_diag("%lld hits in batch %d of %d (%s placement)", hits, b,
		 batches, b % 2 ? "first" : "swapped");
	return hits;
}

/*
 * net.sdp.recv_poll and SO_BUSY_POLL decide whether a blocking receive
 * polls: with either set, receives that wait for the reply find it while
 * polling (BusyPollHits moves); with the sysctl at 0 and no SO_BUSY_POLL,
 * nothing polls.
 *
 * A poll stops early when another task wants the poller's CPU, so a
 * kworker of the device woken there ends it without a hit.  The
 * device's unbound work is kept on the other CPU for the test, and a
 * setting gets six batches of round trips, three in each placement of
 * the ends, to show a hit: one that is ignored gets none in any of them.
 */
static void test_busy_poll_settings(void)
{
	long long hits_default, hits_off, yields_off, hits_sockopt;
	char wq_mask[256], mask[32];
	struct stats before, after;
	int c, s, cpu[2], err;

	TAP_SKIP_IF_HOST("writes the unbound-workqueue cpumask, a setting of the host's");
	/* Each end on a CPU of its own, so that neither poll yields. */
	if (!allowed_cpus(cpu, 2))
		tap_skip("needs two CPUs");
	if (cpu[1] >= 64)
		tap_skip("CPU %d: the test writes a 64-bit cpumask", cpu[1]);
	CHECK_OK(read_file(WQ_CPUMASK, wq_mask, sizeof(wq_mask)));
	snprintf(mask, sizeof(mask), "%llx", 1ULL << cpu[1]);
	CHECK_OK(write_file(WQ_CPUMASK, mask));
	sysctl_defaults();
	net_pair(&c, &s);

	/*
	 * The longest poll: a round trip in a loaded guest (6.12's
	 * Soft-RoCE works in kworkers) can take longer than the default
	 * 700 us, and then no receive finds its data by polling.
	 */
	CHECK_OK(sysctl_write("recv_poll", 100000));
	hits_default = poll_hits(c, cpu[0], s, cpu[1], 6);

	CHECK_OK(sysctl_write("recv_poll", 0));
	stats_read(&before);
	ping_pong(c, cpu[0], s, cpu[1], 50);
	stats_read(&after);
	hits_off = DELTA("BusyPollHits");
	yields_off = DELTA("BusyPollYields");

	/* SO_BUSY_POLL on the client only, the sysctl still 0. */
	sockopt_set(c, SOL_SOCKET, SO_BUSY_POLL, 100000);
	CHECK(sockopt_get(c, SOL_SOCKET, SO_BUSY_POLL) == 100000,
	      "SO_BUSY_POLL reads back %d",
	      sockopt_get(c, SOL_SOCKET, SO_BUSY_POLL));
	hits_sockopt = poll_hits(c, cpu[0], s, cpu[1], 6);
	sysctl_defaults();
	close(c);
	close(s);
	err = write_file(WQ_CPUMASK, wq_mask);

	CHECK(!err, "restoring %s to %s: %s", WQ_CPUMASK, wq_mask,
	      strerror(-err));
	CHECK(hits_default > 0,
	      "recv_poll 100000: no receive found data by polling");
	CHECK(hits_off == 0 && yields_off == 0,
	      "recv_poll 0: BusyPollHits +%lld, BusyPollYields +%lld",
	      hits_off, yields_off);
	CHECK(hits_sockopt > 0,
	      "SO_BUSY_POLL 100000: no receive found data by polling");
}

/*
 * The fastest of three runs of @rounds round trips, both ends on @cpu: a
 * host stall in one run does not count.
 */
static long long ping_pong_best(int c, int s, int cpu, int rounds)
{
	long long best = 0, t;
	int i;

	for (i = 0; i < 3; i++) {
		t = ping_pong(c, cpu, s, cpu, rounds);
		if (!i || t < best)
			best = t;
	}
	return best;
}

/*
 * Both ends on one CPU and a busy-poll time of 100 ms: a reader must stop
 * polling as soon as the peer it waits for is runnable on its CPU
 * (BusyPollYields moves), so that a round trip costs about what it costs
 * without polling.  A reader that kept the CPU would delay every reply
 * until the scheduler took the CPU away from it (a tick or more).
 */
static void test_busy_poll_yields_cpu(void)
{
	long long t_off, t_poll, yields;
	struct stats before, after;
	int c, s, cpu;

	allowed_cpus(&cpu, 1);
	sysctl_defaults();
	net_pair(&c, &s);

	CHECK_OK(sysctl_write("recv_poll", 0));
	ping_pong(c, cpu, s, cpu, 10);	/* warm up */
	t_off = ping_pong_best(c, s, cpu, 50);

	sockopt_set(c, SOL_SOCKET, SO_BUSY_POLL, 100000);
	sockopt_set(s, SOL_SOCKET, SO_BUSY_POLL, 100000);
	stats_read(&before);
	t_poll = ping_pong_best(c, s, cpu, 50);
	stats_read(&after);
	yields = DELTA("BusyPollYields");
	sysctl_defaults();
	close(c);
	close(s);

	tap_diag("one CPU, 50 round trips (best of 3): %lld us without polling, %lld us with SO_BUSY_POLL 100 ms; %lld yields",
		 t_off, t_poll, yields);
	CHECK(yields > 0, "the pollers never gave the CPU up");
	CHECK(t_poll < 3 * t_off, "polling made round trips %.1f times slower",
	      (double)t_poll / t_off);
}

/*
 * A reader asleep for data is handed the CQ's event when the device
 * reports it from a thread (6.12's Soft-RoCE, from its workqueue) and
 * handles the CQ itself, sparing the softirq's wakeup of ksoftirqd
 * (CqHandoffs); where the device reports it in interrupt context (6.1's
 * Soft-RoCE, from a tasklet) nothing is handed over.  Nothing polls
 * (recv_poll 0), so every receive sleeps.
 */
static void test_cq_handoff(void)
{
	struct stats before, after;
	long long handoffs;
	int c, s, cpu[2];
	bool thread;

	if (test_provider_siw())
		tap_skip("siw completes both from softirqs and from a thread");
	if (!test_provider_rxe())
		tap_skip("what is expected is Soft-RoCE's completion context, not %s's",
			 TEST_PROVIDER());
	thread = kernel_at_least(6, 4);
	if (!allowed_cpus(cpu, 2))
		cpu[1] = cpu[0];
	sysctl_defaults();
	net_pair(&c, &s);
	CHECK_OK(sysctl_write("recv_poll", 0));
	ping_pong(c, cpu[0], s, cpu[1], 10);	/* warm up */
	stats_read(&before);
	ping_pong(c, cpu[0], s, cpu[1], 100);
	stats_read(&after);
	handoffs = DELTA("CqHandoffs");
	sysctl_defaults();
	close(c);
	close(s);

	tap_diag("100 round trips, nothing polling: CqHandoffs +%lld", handoffs);
	if (thread)
		CHECK(handoffs >= 100,
		      "Soft-RoCE completes from its workqueue here, but only %lld of 200 receives were handed the CQ's event",
		      handoffs);
	else
		CHECK(handoffs == 0,
		      "Soft-RoCE completes in a tasklet here, yet %lld events were handed to a reader",
		      handoffs);
}

/* ---- module parameters ---- */

/* recv_poll is bounds-checked at load and seeds net.sdp.recv_poll. */
static void test_module_parameters(void)
{
	static const char *const params[] = { "family", "recv_poll" };
	char line[512], *out;
	size_t i;
	FILE *p;
	int ret;

	test_need_own_module();
	wait_no_sockets();
	CHECK_OK(sdp_unload(10000));
	ret = sdp_load("recv_poll=100001");
	CHECK(ret == -EINVAL, "recv_poll=100001: %s",
	      ret ? strerror(-ret) : "loaded");
	CHECK(!sdp_loaded(), "loaded with an out-of-range recv_poll");
	CHECK_OK(sdp_load("recv_poll=250"));
	CHECK(sysctl_read("recv_poll") == 250, "net.sdp.recv_poll %ld",
	      sysctl_read("recv_poll"));
	CHECK_OK(sdp_unload(10000));
	CHECK_OK(sdp_ensure_loaded());
	CHECK(sysctl_read("recv_poll") == 700, "default recv_poll %ld",
	      sysctl_read("recv_poll"));

	/* modinfo: every parameter has a description. */
	snprintf(line, sizeof(line), "modinfo -p %s", env_or("SDP_KO", "sdp.ko"));
	p = popen(line, "r");
	CHECK(p, "modinfo");
	out = xmalloc(8192);
	out[fread(out, 1, 8191, p)] = '\0';
	pclose(p);
	for (i = 0; i < 2; i++) {
		char *at;

		snprintf(line, sizeof(line), "%s:", params[i]);
		at = strstr(out, line);
		CHECK(at && at[strlen(line)] && at[strlen(line)] != '\n' &&
		      strstr(at, "default"), "parameter %s has no description",
		      params[i]);
	}
	free(out);
}

static const struct tap_test tests[] = {
	TAP_TEST(test_sysctl_bounds),
	TAP_TEST(test_sysctl_per_netns),
	TAP_TEST(test_sysctl_fin_timeout_applies),
	TAP_TEST(test_busy_poll_settings),
	TAP_TEST(test_busy_poll_yields_cpu),
	TAP_TEST(test_cq_handoff),
	TAP_TEST(test_module_parameters),
};

TAP_MAIN(tests)
