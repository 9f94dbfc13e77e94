/* A program with kernel-shaped structs (a struct file whose f_op points to a table of
 * function pointers, an inode, a name array, flags), stopped by gdb at the entry of
 * target_read() and dumped with gcore by server/tests/dry_run.rs. */
#include <stdio.h>
#include <string.h>
struct inode { unsigned long i_ino; unsigned int i_mode; int i_count; };
struct file;
struct file_operations { long (*read)(struct file *, char *, unsigned long); long (*write)(struct file *, const char *, unsigned long); };
struct file { unsigned int f_flags; const struct file_operations *f_op; struct inode *f_inode; char name[16]; const char *path; };
__attribute__((noinline)) long my_read(struct file *f, char *b, unsigned long n) { return (long)n + f->f_flags; }
__attribute__((noinline)) long my_write(struct file *f, const char *b, unsigned long n) { return (long)n; }
const struct file_operations my_fops = { .read = my_read, .write = my_write };
__attribute__((noinline)) long target_read(struct file *f, char *buf, unsigned long count, int whence) { return f->f_op->read(f, buf, count) + whence; }
int main(void) {
  static struct inode ino = { .i_ino = 4242, .i_mode = 0100644, .i_count = -3 };
  static struct file f = { .f_flags = 0x8002, .f_op = &my_fops, .f_inode = &ino, .path = "/etc/hostname" };
  static char buf[64];
  strcpy(f.name, "hostname");
  /* What the program itself says: the test compares the dry run with these. */
  printf("file=%lx\nbuf=%lx\nflags=%x\nino=%lu\nmode=%u\nicount=%d\nname=%s\npath=%s\nwhence=%d\nname4=%x:%x:%x:%x\n",
         (unsigned long)&f, (unsigned long)buf, f.f_flags, ino.i_ino, ino.i_mode, ino.i_count, f.name, f.path, -7,
         f.name[0], f.name[1], f.name[2], f.name[3]);
  fflush(stdout);
  return (int)target_read(&f, buf, 777, -7);
}
