// BTF-typed tracing programs whose arguments changed between Debian 6.1 and 6.12
// (server/tests/bpf_kernel.rs): do_dentry_open lost its third parameter, the
// sched_switch tracepoint gained a fourth.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";
long out[8];

SEC("fentry/do_dentry_open")
int BPF_PROG(open3, struct file *f, struct inode *inode, void *open)
{
	out[0] = (long)open;
	return 0;
}

SEC("fexit/do_dentry_open")
int BPF_PROG(open3_exit, struct file *f, struct inode *inode, void *open, int ret)
{
	out[1] = ret;
	return 0;
}

SEC("fexit/do_dentry_open")
int BPF_PROG(open2_exit, struct file *f, void *open, int ret)
{
	out[2] = ret;
	return 0;
}

SEC("fentry/vfs_read")
int BPF_PROG(read3, struct file *f, char *buf, size_t count)
{
	out[3] = count;
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(switch4, bool preempt, struct task_struct *prev, struct task_struct *next, unsigned int prev_state)
{
	out[4] = prev_state;
	return 0;
}

SEC("fentry/do_dentry_open")
int open_guarded(unsigned long long *ctx)
{
	struct file *f = (void *)ctx[0];
	if (bpf_core_field_exists(f->f_version))
		out[5] = ctx[2];
	return 0;
}

SEC("fentry/do_dentry_open")
int BPF_PROG(open_fn, struct file *f, void *open)
{
	out[6] = (long)open;
	return 0;
}
