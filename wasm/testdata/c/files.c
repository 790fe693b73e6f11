// files writes, renames, links and lists files, then tries to leave the
// sandbox through "..", an absolute symlink and /proc.
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void check(int ok, const char *what) {
	if (!ok) {
		perror(what);
		exit(1);
	}
}

static void cat(const char *label, const char *path) {
	char buf[256] = {0};
	FILE *f = fopen(path, "r");
	if (!f) {
		printf("%s=ERR\n", label);
		return;
	}
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = 0;
	fclose(f);
	printf("%s=%s", label, buf);
}

int main(void) {
	check(mkdir("/out", 0755) == 0, "mkdir /out");
	check(mkdir("/out/sub", 0755) == 0, "mkdir /out/sub");
	FILE *f = fopen("/out/sub/a.txt", "w");
	check(f != NULL, "create");
	fputs("from wasm\n", f);
	fclose(f);
	f = fopen("/out/sub/a.txt", "a");
	check(f != NULL, "append");
	fputs("appended\n", f);
	fclose(f);
	check(rename("/out/sub/a.txt", "/out/b.txt") == 0, "rename");
	check(symlink("/etc", "/out/etc-link") == 0, "symlink");
	const char *pwd = getenv("PWD");
	check(pwd && chdir(pwd) == 0, "chdir $PWD");
	f = fopen("rel.txt", "w");
	check(f != NULL, "relative create");
	fputs("relative\n", f);
	fclose(f);
	cat("given", "/in/given.txt");
	DIR *d = opendir("/out");
	check(d != NULL, "opendir");
	int count = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.') count++;
	closedir(d);
	printf("out entries=%d\n", count);
	cat("dotdot", "/out/../../../../etc/hostname");
	cat("symlink", "/out/etc-link/hostname");
	cat("proc", "/proc/self/environ");
	int fd = open("/out/b.txt", O_RDONLY);
	check(fd >= 0, "open");
	char buf[5] = {0};
	lseek(fd, 5, SEEK_SET);
	read(fd, buf, 4);
	close(fd);
	printf("seek=%s\n", buf);
	return 0;
}
