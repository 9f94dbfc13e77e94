// A tool around `hand_attached.bpf.o`'s skeleton. Built with -DBY_SECTION it attaches
// every program by its section name (`hand_attached_bpf__attach()`, libbpf's
// `bpf_object__attach_skeleton()`); without, it attaches `handle_entry` to libc's
// `getaddrinfo` as a uprobe, as gethostlatency does, and `read_entry` not at all.
#include "hand_attached.skel.h"
#include <stdio.h>

int main(int argc, char **argv)
{
	struct hand_attached_bpf *skel = hand_attached_bpf__open_and_load();
	if (!skel)
		return 1;
#ifdef BY_SECTION
	int err = hand_attached_bpf__attach(skel);
#else
	const char *libc = argc > 1 ? argv[1] : "/lib/x86_64-linux-gnu/libc.so.6";
	struct bpf_link *link = bpf_program__attach_uprobe(skel->progs.handle_entry, false, -1, libc, 0);
	int err = link ? 0 : -1;
#endif
	printf("attached: %d\n", err);
	hand_attached_bpf__destroy(skel);
	return err ? 1 : 0;
}
