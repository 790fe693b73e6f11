// echo prints its arguments, $GREETING and $PWD, copies stdin to stdout,
// and exits with the status given by "-exit N".
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
	int code = 0, i = 1;
	if (argc > 2 && strcmp(argv[1], "-exit") == 0) {
		code = atoi(argv[2]);
		i = 3;
	}
	printf("args=");
	for (; i < argc; i++) printf("[%s]", argv[i]);
	const char *g = getenv("GREETING"), *pwd = getenv("PWD");
	printf(" greeting=%s pwd=%s\n", g ? g : "", pwd ? pwd : "");
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, stdin)) > 0) fwrite(buf, 1, n, stdout);
	fprintf(stderr, "to stderr\n");
	return code;
}
