// __weak kfuncs missing on Debian 6.1 (server/tests/bpf_kernel.rs): libbpf leaves them
// unresolved; a reachable call is refused by the verifier, one in dead code is not.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

extern struct task_struct *bpf_task_from_pid(s32 pid) __ksym __weak;
extern void bpf_task_release(struct task_struct *p) __ksym __weak;

// In 6.12's BTF (open-coded iterators), not in 6.1's.
struct bpf_iter_num___new { int x; } __attribute__((preserve_access_index));

SEC("tp_btf/sched_process_fork")
int BPF_PROG(weak_guarded)
{
	if (bpf_core_type_exists(struct bpf_iter_num___new)) {
		struct task_struct *t = bpf_task_from_pid(1);
		if (t)
			bpf_task_release(t);
	}
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(weak_unguarded)
{
	struct task_struct *t = bpf_task_from_pid(1);
	if (t)
		bpf_task_release(t);
	return 0;
}
