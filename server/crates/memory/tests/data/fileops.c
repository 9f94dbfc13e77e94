/* A process with kernel-shaped structs, stopped by gdb at the entry of `target_read`
 * and dumped with gcore; tests/user_core.rs reads the values back from the core and
 * compares them with what this program printed. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct file_operations {
    long (*read)(void *, char *, unsigned long, long *);
    long (*write)(void *, const char *, unsigned long, long *);
};

struct inode {
    unsigned short i_mode;
    unsigned long i_ino;
    long long i_size;
};

struct file {
    unsigned int f_flags;
    const struct file_operations *f_op;
    struct inode *f_inode;
    char f_name[32];
    long f_pos;
};

static long my_read(void *f, char *b, unsigned long n, long *p) { (void)f; (void)b; (void)p; return (long)n; }
static long my_write(void *f, const char *b, unsigned long n, long *p) { (void)f; (void)b; (void)p; return -(long)n; }

static const struct file_operations my_fops = { .read = my_read, .write = my_write };

/* Not inlined, not static: gdb stops at its first instruction. */
__attribute__((noinline)) long target_read(struct file *file, char *buf, unsigned long count, long *pos)
{
    return file->f_op->read(file, buf, count, pos);
}

int main(void)
{
    struct inode *inode = malloc(sizeof *inode);
    struct file *file = malloc(sizeof *file);
    static char buf[64];
    long pos = 7;
    inode->i_mode = 0100644;
    inode->i_ino = 424242;
    inode->i_size = 1234567890123LL;
    memset(file, 0, sizeof *file);
    file->f_flags = 0x8002;
    file->f_op = &my_fops;
    file->f_inode = inode;
    strcpy(file->f_name, "hello.txt");
    file->f_pos = 99;
    printf("file=%p\n", (void *)file);
    printf("buf=%p\n", (void *)buf);
    printf("pos=%p\n", (void *)&pos);
    printf("count=%lu\n", 4096UL);
    printf("my_read=%p\n", (void *)my_read);
    printf("my_write=%p\n", (void *)my_write);
    printf("target_read=%p\n", (void *)target_read);
    printf("off_f_flags=%zu\n", offsetof(struct file, f_flags));
    printf("off_f_op=%zu\n", offsetof(struct file, f_op));
    printf("off_f_inode=%zu\n", offsetof(struct file, f_inode));
    printf("off_f_name=%zu\n", offsetof(struct file, f_name));
    printf("off_f_pos=%zu\n", offsetof(struct file, f_pos));
    printf("off_read=%zu\n", offsetof(struct file_operations, read));
    printf("off_write=%zu\n", offsetof(struct file_operations, write));
    printf("off_i_ino=%zu\n", offsetof(struct inode, i_ino));
    printf("off_i_size=%zu\n", offsetof(struct inode, i_size));
    printf("off_i_mode=%zu\n", offsetof(struct inode, i_mode));
    fflush(stdout);
    return (int)target_read(file, buf, 4096, &pos) == 4096 ? 0 : 1;
}
