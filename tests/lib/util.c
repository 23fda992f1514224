// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers shared by the SDP test suites; see util.h.
 */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/capability.h>

#include "tap.h"
#include "util.h"

extern char **environ;

const char *env_or(const char *name, const char *dflt)
{
	const char *v = getenv(name);

	return v && *v ? v : dflt;
}

const char *errname(int err)
{
	const char *n = err ? strerrorname_np(err) : "0";

	return n ? n : "?";
}

volatile sig_atomic_t sigurgs;

static void on_sigurg(int sig)
{
	(void)sig;
	sigurgs++;
}

void sigurg_catch(struct sigaction *old)
{
	struct sigaction sa = { .sa_handler = on_sigurg };

	sigurgs = 0;
	CHECK(sigaction(SIGURG, &sa, old) == 0, "sigaction: %s",
	      strerror(errno));
}

bool got_sigurg(void *arg)
{
	(void)arg;
	return sigurgs > 0;
}

int read_file(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return 0;
}

void *xmalloc(size_t size)
{
	void *p = malloc(size);

	CHECK(p, "malloc(%zu)", size);
	return p;
}

int write_file(const char *path, const char *value)
{
	size_t len = strlen(value);
	int fd, err = 0;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, value, len) != (ssize_t)len)
		err = -errno;
	close(fd);
	return err;
}

bool tracefs_root(char *buf, size_t size)
{
	if (access("/sys/kernel/tracing/events", F_OK)) {
		mkdir("/sys/kernel/tracing", 0755);
		if (mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL) ||
		    access("/sys/kernel/tracing/events", F_OK))
			return false;
	}
	snprintf(buf, size, "/sys/kernel/tracing");
	return true;
}

const char *test_device(void)
{
	return env_or("SDP_TEST_DEVICE", env_or("SDP_TEST_IBDEV", "rxe0"));
}

bool test_provider_siw(void)
{
	return !strcmp(TEST_PROVIDER(), "siw");
}

bool test_provider_rxe(void)
{
	return !strcmp(TEST_PROVIDER(), "rxe");
}

bool test_device_iwarp(void)
{
	char path[256], type[32] = "";

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/node_type",
		 TEST_IBDEV());
	if (read_file(path, type, sizeof(type)))
		return test_provider_siw();
	return !strncmp(type, "4:", 2);	/* RNIC */
}

int test_device_comp_vectors(void)
{
	char cmd[128], line[256];
	int n = -1;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "ibv_devinfo -v -d %s 2>/dev/null",
		 TEST_IBDEV());
	f = popen(cmd, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, " num_comp_vectors: %d", &n) == 1)
			break;
	pclose(f);
	return n;
}

bool test_host_mode(void)
{
	return !strcmp(env_or("SDP_TEST_HOST", "0"), "1");
}

void test_need_own_module(void)
{
	if (test_host_mode() &&
	    strcmp(env_or("SDP_TEST_OWN_MODULE", "0"), "1"))
		tap_skip("host mode: unloads sdp, which this run did not load");
}

long long read_ull(const char *path)
{
	char buf[64];

	if (read_file(path, buf, sizeof(buf)))
		return -1;
	return strtoll(buf, NULL, 10);
}

long long port_read_ull(const char *rel)
{
	char path[256];

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/%s",
		 TEST_IBDEV(), rel);
	return read_ull(path);
}

long long port_hw_counter(const char *name)
{
	char rel[128];

	snprintf(rel, sizeof(rel), "hw_counters/%s", name);
	return port_read_ull(rel);
}

bool sdp_loaded(void)
{
	char state[32];

	return read_file("/sys/module/sdp/initstate", state, sizeof(state)) == 0 &&
	       strcmp(state, "live") == 0;
}

int sdp_refcnt(void)
{
	return (int)read_ull("/sys/module/sdp/refcnt");
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

int sdp_unload(int timeout_ms)
{
	int waited = 0;

	for (;;) {
		if (syscall(SYS_delete_module, "sdp", O_NONBLOCK) == 0)
			return 0;
		if (errno == ENOENT)
			return 0;
		if (errno != EWOULDBLOCK || waited >= timeout_ms)
			return -errno;
		/* Sockets are freed asynchronously after close(); poll. */
		sleep_ms(10);
		waited += 10;
	}
}

int sdp_load(const char *params)
{
	const char *ko = env_or("SDP_KO", "sdp.ko");
	int fd, ret = 0;

	fd = open(ko, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (syscall(SYS_finit_module, fd, params, 0))
		ret = -errno;
	close(fd);
	return ret;
}

int sdp_ensure_loaded(void)
{
	int ret;

	if (sdp_loaded())
		return 0;
	ret = sdp_load("");
	return ret == -EEXIST ? 0 : ret;
}

static int proc_net_sdp_scan(unsigned long want_ino, bool *found)
{
	char line[512];
	int count = 0;
	FILE *f;

	f = fopen("/proc/net/sdp", "re");
	if (!f)
		return -1;
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long ino;
		unsigned int uid;

		/* ... st tx:rx uid inode; the last two fields matter here. */
		if (sscanf(line, "%*s %*s %*x %*s %u %lu", &uid, &ino) != 2) {
			fclose(f);
			return -1;
		}
		if (found && ino == want_ino)
			*found = true;
		count++;
	}
	fclose(f);
	return count;
}

int proc_net_sdp_count(void)
{
	return proc_net_sdp_scan(0, NULL);
}

bool proc_net_sdp_has_inode(unsigned long ino)
{
	bool found = false;

	return proc_net_sdp_scan(ino, &found) >= 0 && found;
}

void diag_sdp_sockets(void)
{
	char line[512];
	FILE *p;

	fflush(stdout);
	p = popen("cat /proc/net/sdp; tools/bin/sdpstat -a -e 2>&1", "r");
	if (!p) {
		tap_diag("popen sdpstat: %s", strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), p)) {
		line[strcspn(line, "\n")] = '\0';
		tap_diag("%s", line);
	}
	pclose(p);
}

long long sdp_stat(const char *name)
{
	char line[256], key[128];
	long long v, found = -1;
	FILE *f = fopen("/proc/net/sdp_stats", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%127s %lld", key, &v) == 2 &&
		    !strcmp(key, name))
			found = v;
	fclose(f);
	return found;
}

int kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	return fd;
}

bool kmsg_read(int fd, bool (*fn)(void *arg, const char *text, size_t len),
	       void *arg)
{
	char rec[8192];
	ssize_t n;

	for (;;) {
		const char *text;

		n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0) {
			if (errno == EPIPE)	/* overwritten records */
				continue;
			return false;	/* EAGAIN: nothing more */
		}
		rec[n] = '\0';
		/* "prio,seq,usec,flags;text\n" (then continuation lines) */
		text = strchr(rec, ';');
		text = text ? text + 1 : rec;
		if (fn(arg, text, strcspn(text, "\n")))
			return true;
	}
}

static bool has_needle(void *arg, const char *text, size_t len)
{
	return memmem(text, len, arg, strlen(arg)) != NULL;
}

bool kmsg_find(int fd, const char *needle)
{
	return kmsg_read(fd, has_needle, (void *)needle);
}

long vm_pin_kb(void)
{
	char buf[4096], *p;

	if (read_file("/proc/self/status", buf, sizeof(buf)))
		return -1;
	p = strstr(buf, "VmPin:");
	return p ? strtol(p + 6, NULL, 10) : -1;
}

int rdma_res_read(struct rdma_res *r)
{
	static const struct {
		const char *name;
		size_t off;
	} keys[] = {
		{ "pd", offsetof(struct rdma_res, pd) },
		{ "cq", offsetof(struct rdma_res, cq) },
		{ "qp", offsetof(struct rdma_res, qp) },
		{ "cm_id", offsetof(struct rdma_res, cm_id) },
		{ "mr", offsetof(struct rdma_res, mr) },
	};
	char line[512];
	FILE *f;
	int st;

	memset(r, 0, sizeof(*r));
	f = popen("rdma resource show 2>/dev/null", "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *save = NULL, *tok, *prev = NULL;

		/* "0: rxe0: pd 1 cq 2 ...": pairs of a name and a count. */
		for (tok = strtok_r(line, " \t\n", &save); tok;
		     prev = tok, tok = strtok_r(NULL, " \t\n", &save)) {
			size_t i;

			if (!prev)
				continue;
			for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
				if (!strcmp(prev, keys[i].name))
					*(long *)((char *)r + keys[i].off) +=
						strtol(tok, NULL, 10);
		}
	}
	st = pclose(f);
	return st == 0 ? 0 : -1;
}

bool rdma_res_equal(const struct rdma_res *a, const struct rdma_res *b)
{
	return a->pd == b->pd && a->cq == b->cq && a->qp == b->qp &&
	       a->cm_id == b->cm_id && a->mr == b->mr;
}

bool rdma_res_within(const struct rdma_res *r, const struct rdma_res *max)
{
	return r->pd <= max->pd && r->cq <= max->cq && r->qp <= max->qp &&
	       r->cm_id <= max->cm_id && r->mr <= max->mr;
}

const char *rdma_res_str(const struct rdma_res *r, char *buf, size_t size)
{
	snprintf(buf, size, "pd %ld cq %ld qp %ld cm_id %ld mr %ld", r->pd,
		 r->cq, r->qp, r->cm_id, r->mr);
	return buf;
}

bool rdma_res_wait(const struct rdma_res *max, struct rdma_res *now,
		   int timeout_ms)
{
	struct timespec ts;
	long long end;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	end = ts.tv_sec * 1000LL + ts.tv_nsec / 1000000 + timeout_ms;
	for (;;) {
		if (rdma_res_read(now) == 0 && rdma_res_within(now, max))
			return true;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		if (ts.tv_sec * 1000LL + ts.tv_nsec / 1000000 >= end)
			return false;
		poll(NULL, 0, 20);
	}
}

int run(const char *const argv[])
{
	int status;
	pid_t pid;

	if (posix_spawnp(&pid, argv[0], NULL, NULL, (char *const *)argv,
			 environ))
		return -1;
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int join_ms(pthread_t t, int timeout_ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += timeout_ms / 1000;
	ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	return pthread_timedjoin_np(t, NULL, &ts);
}

static void *closer_fn(void *arg)
{
	struct closer *c = arg;

	c->err = close(c->fd) ? errno : 0;
	atomic_store(&c->done, true);
	return NULL;
}

void closer_start(struct closer *c, int fd)
{
	c->fd = fd;
	c->err = 0;
	atomic_store(&c->done, false);
	CHECK(!pthread_create(&c->t, NULL, closer_fn, c), "pthread_create");
}

int closer_join(struct closer *c)
{
	CHECK(join_ms(c->t, 30000) == 0, "close() did not return in 30 s");
	return c->err;
}

bool sdp_release_delay_available(void)
{
	return !access(SDP_RELEASE_DELAY, W_OK);
}

void sdp_release_delay(int ms)
{
	char v[16];

	snprintf(v, sizeof(v), "%d", ms);
	CHECK(write_file(SDP_RELEASE_DELAY, v) == 0, "write %s: %s",
	      SDP_RELEASE_DELAY, strerror(errno));
}

bool has_cap(int cap)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data))
		return false;
	return data[cap / 32].effective & (1U << (cap % 32));
}

int drop_cap(int cap)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	if (syscall(SYS_capget, &hdr, data))
		return -1;
	data[cap / 32].effective &= ~(1U << (cap % 32));
	return syscall(SYS_capset, &hdr, data);
}

bool task_sleeping(void *tid)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", *(pid_t *)tid);
	if (read_file(path, buf, sizeof(buf)))
		return false;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] == 'S';
}

bool kernel_at_least(int major, int minor)
{
	struct utsname u;
	int ma = 0, mi = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		return false;
	return ma > major || (ma == major && mi >= minor);
}

bool kernel_has_kasan(void)
{
	static int has = -1;
	char line[256], name[200];
	FILE *f;

	if (has >= 0)
		return has;
	has = 0;
	f = fopen("/proc/kallsyms", "r");
	if (!f)
		return false;
	while (!has && fgets(line, sizeof(line), f))
		has = sscanf(line, "%*s %*s %199s", name) == 1 &&
		      !strcmp(name, "kasan_report");
	fclose(f);
	return has;
}
