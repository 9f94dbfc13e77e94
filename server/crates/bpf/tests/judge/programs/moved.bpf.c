// Members that moved, vanished or were renamed between Debian 6.1 and 6.12, read with and
// without `___flavour` types and existence guards; bitfields, enums, type relocations.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

struct task_struct___old { long state; } __attribute__((preserve_access_index));
struct task_struct___new { unsigned int __state; } __attribute__((preserve_access_index));
struct file___x { const struct file_operations *f_op; } __attribute__((preserve_access_index));
struct file___small { unsigned short f_flags; } __attribute__((preserve_access_index));
struct file___signed { long f_pos; int f_flags; } __attribute__((preserve_access_index));

enum bpf_prog_type___new { BPF_PROG_TYPE_NETFILTER___new = 99 };

char LICENSE[] SEC("license") = "GPL";
long out[32];

SEC("kprobe/vfs_read")
int BPF_KPROBE(read_probe, struct file *file)
{
	struct task_struct *t = (void *)bpf_get_current_task();
	out[0] = BPF_CORE_READ(t, pid);
	if (bpf_core_field_exists(((struct task_struct___old *)t)->state))
		out[1] = BPF_CORE_READ((struct task_struct___old *)t, state);
	else
		out[1] = BPF_CORE_READ((struct task_struct___new *)t, __state);
	out[2] = BPF_CORE_READ(file, f_op, read) != 0;
	out[3] = bpf_core_type_exists(struct bpf_iter_num);
	out[4] = bpf_core_type_size(struct task_struct);
	out[5] = bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_map_lookup_elem);
	out[6] = bpf_core_enum_value(enum bpf_func_id, BPF_FUNC_ktime_get_ns);
	out[7] = BPF_CORE_READ_BITFIELD_PROBED(file, f_mode);
	out[8] = bpf_core_field_size(t->comm);
	out[9] = BPF_CORE_READ((struct file___x *)file, f_op) != 0;
	out[10] = __builtin_preserve_field_info(t->pid, BPF_FIELD_SIGNED);
	out[11] = bpf_core_type_id_kernel(struct task_struct);
	out[12] = bpf_core_type_id_local(struct file___x);
	out[13] = bpf_core_field_exists(t->mm->mmap_base);
	out[14] = BPF_CORE_READ(t, mm, mmap_base);
	out[15] = bpf_core_field_exists(file->f_inode->i_sb->s_type->name);
	out[16] = BPF_CORE_READ(t, thread_info.flags);
	out[17] = bpf_core_enum_value_exists(enum bpf_prog_type___new, BPF_PROG_TYPE_NETFILTER___new);
	out[26] = bpf_core_enum_value(enum bpf_prog_type___new, BPF_PROG_TYPE_NETFILTER___new);
	out[18] = BPF_CORE_READ(t, se.vruntime);
	out[19] = BPF_CORE_READ(t, nsproxy, pid_ns_for_children, level);
	out[20] = bpf_core_field_size(t->cpus_ptr);
	return 0;
}

SEC("kprobe/do_unlinkat")
int direct_loads(struct pt_regs *ctx)
{
	struct file *f = (void *)PT_REGS_PARM1(ctx);
	out[21] = ((struct file___small *)f)->f_flags;
	out[22] = ((struct file___signed *)f)->f_flags;
	out[23] = ((struct file___signed *)f)->f_pos;
	out[24] = (long)f->f_op;
	out[25] = f->f_flags;
	return 0;
}
