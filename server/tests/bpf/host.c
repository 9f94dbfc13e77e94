// A tool in the libbpf skeleton style: the BPF object is embedded in the executable
// (`bpftool gen skeleton drift.bpf.o > drift.skel.h`); server/tests/bpf_check.rs checks
// the binary.
#include "drift.skel.h"
#include <stdio.h>

int main(void)
{
	struct drift_bpf *skel = drift_bpf__open();
	if (!skel)
		return 1;
	printf("opened\n");
	drift_bpf__destroy(skel);
	return 0;
}
