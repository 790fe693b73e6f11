// grow allocates memory until malloc fails, then aborts like most programs.
// The blocks are kept and read back so the compiler cannot drop them.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *blocks[1024];

int main(void) {
	unsigned long sum = 0;
	for (int i = 0; i < 1024; i++) {
		blocks[i] = malloc(8 << 20);
		if (!blocks[i]) {
			fprintf(stderr, "out of memory after %d MiB (%lu)\n", i * 8, sum);
			abort();
		}
		memset(blocks[i], i, 8 << 20);
		sum += (unsigned char)blocks[i][i];
		if (i == 0) printf("MiB 8\n");
	}
	printf("never limited: %lu\n", sum);
	return 0;
}
