// iobench: the I/O loops of BenchmarkVolumeIO, timed inside the native
// tier (CLOCK_MONOTONIC around the loop only); prints the seconds taken.
//   iobench seqwrite FILE MIB   write MIB MiB in 1 MiB writes, then fsync
//   iobench seqread FILE        read FILE in 1 MiB reads
//   iobench randwrite FILE N    N 4 KiB pwrites at random 4 KiB offsets
//   iobench randread FILE N     N 4 KiB preads at random 4 KiB offsets
//   iobench create DIR N        N files of 100 bytes (open, write, close)
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what) {
	perror(what);
	exit(1);
}

// xorshift64: data that does not compress or dedupe, offsets that spread.
static unsigned long long rng = 88172645463325252ULL;
static unsigned long long next(void) {
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

int main(int argc, char **argv) {
	if (argc < 3) {
		fprintf(stderr, "usage: iobench MODE PATH [N]\n");
		return 2;
	}
	const char *mode = argv[1], *p = argv[2];
	long n = argc > 3 ? atol(argv[3]) : 0;
	static unsigned long long words[(1 << 20) / 8];
	char *buf = (char *)words;
	for (size_t i = 0; i < sizeof words / 8; i++)
		words[i] = next();
	double t0 = 0, t1 = 0;
	if (!strcmp(mode, "seqwrite")) {
		int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			die("open");
		t0 = now();
		for (long i = 0; i < n; i++) {
			words[i % (sizeof words / 8)] = next(); // no two MiB alike
			if (write(fd, buf, sizeof words) != (ssize_t)sizeof words)
				die("write");
		}
		if (fsync(fd) < 0)
			die("fsync");
		t1 = now();
		close(fd);
	} else if (!strcmp(mode, "seqread")) {
		int fd = open(p, O_RDONLY);
		if (fd < 0)
			die("open");
		t0 = now();
		ssize_t r;
		while ((r = read(fd, buf, sizeof words)) > 0)
			;
		if (r < 0)
			die("read");
		t1 = now();
		close(fd);
	} else if (!strcmp(mode, "randwrite") || !strcmp(mode, "randread")) {
		int w = mode[4] == 'w';
		int fd = open(p, w ? O_WRONLY : O_RDONLY);
		if (fd < 0)
			die("open");
		struct stat st;
		if (fstat(fd, &st) < 0 || st.st_size < 4096)
			die("fstat");
		long blocks = st.st_size / 4096;
		t0 = now();
		for (long i = 0; i < n; i++) {
			off_t off = (off_t)(next() % blocks) * 4096;
			ssize_t r = w ? pwrite(fd, buf + (i % 256) * 4096, 4096, off) : pread(fd, buf, 4096, off);
			if (r != 4096)
				die(w ? "pwrite" : "pread");
		}
		if (w && fsync(fd) < 0)
			die("fsync");
		t1 = now();
		close(fd);
	} else if (!strcmp(mode, "create")) {
		char name[4096];
		t0 = now();
		for (long i = 0; i < n; i++) {
			snprintf(name, sizeof name, "%s/f%ld", p, i);
			int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			if (fd < 0)
				die("open");
			if (write(fd, buf + i % 1000, 100) != 100)
				die("write");
			close(fd);
		}
		t1 = now();
	} else {
		fprintf(stderr, "iobench: unknown mode %s\n", mode);
		return 2;
	}
	printf("%.9f\n", t1 - t0);
	return 0;
}
