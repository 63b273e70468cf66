/* test_trusted_file.c — amp_check_trusted_file, the rule hipamp holds what it runs or loads to (lib/base/trusted_file.c): files, directories and links of ours or root's pass, anything another local user could have put or changed is refused naming it, and bad paths and AMP_TRUSTED_USERS words are refused naming them. */
#include "support.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A directory of ours (mode 0700, under TMPDIR or /tmp), removed at exit. */
static void our_dir(char *dir, size_t cap)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, cap, "%s/hipamp-trusted-XXXXXX", tmp && tmp[0] == '/' ? tmp : "/tmp");
    cr_assert_not_null(mkdtemp(dir), "mkdtemp %s: %s", dir, strerror(errno));
    test_remove_at_exit(dir);
}

/* A file of ours at dir/name, mode mode (umask aside). */
static void our_file(char *path, size_t cap, const char *dir, const char *name, mode_t mode)
{
    snprintf(path, cap, "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    cr_assert_geq(fd, 0, "create %s: %s", path, strerror(errno));
    cr_assert_eq(write(fd, "x", 1), 1);
    close(fd);
    cr_assert_eq(chmod(path, mode), 0, "chmod %s: %s", path, strerror(errno));
}

/* The check refuses path with AMP_ERROR_INVALID_ARGUMENT, and the message
 * holds each of the NULL-ended fragments. */
static void expect_refused(const char *path, const char *const *says)
{
    amp_status st = amp_check_trusted_file(path);
    cr_assert_eq(st, AMP_ERROR_INVALID_ARGUMENT, "%s: %s, not AMP_ERROR_INVALID_ARGUMENT (%s)", path ? path : "NULL",
                 amp_status_name(st), amp_last_error());
    for (int i = 0; says[i]; ++i)
        cr_assert(strstr(amp_last_error(), says[i]), "the refusal of %s does not say '%s': %s", path ? path : "NULL",
                  says[i], amp_last_error());
}

Test(trusted_file, a_file_of_ours_in_a_directory_of_ours_passes)
{
    char dir[256], file[512];
    our_dir(dir, sizeof dir);
    our_file(file, sizeof file, dir, "tool.so", 0755);
    ASSERT_OK(amp_check_trusted_file(file));
    /* Root's files on root's way: the C library the test itself runs on. */
    const char *system_files[] = {"/bin/sh", "/etc/passwd"};
    for (size_t i = 0; i < sizeof system_files / sizeof system_files[0]; ++i) ASSERT_OK(amp_check_trusted_file(system_files[i]));
}

/* A relative path is walked from the working directory, as dlopen and
 * exec take it: the same file passes both ways, and a directory of mode
 * 0777 below the working directory is found on the relative way too. */
Test(trusted_file, a_relative_path_is_walked_from_the_working_directory)
{
    char dir[256], file[512], open_dir[512], bad[600];
    our_dir(dir, sizeof dir);
    our_file(file, sizeof file, dir, "tool.so", 0644);
    snprintf(open_dir, sizeof open_dir, "%s/open", dir);
    cr_assert_eq(mkdir(open_dir, 0700), 0);
    cr_assert_eq(chmod(open_dir, 0777), 0);
    our_file(bad, sizeof bad, open_dir, "tool.so", 0644);
    cr_assert_eq(chdir(dir), 0, "chdir %s: %s", dir, strerror(errno));
    ASSERT_OK(amp_check_trusted_file("tool.so"));
    ASSERT_OK(amp_check_trusted_file("./tool.so"));
    expect_refused("open/tool.so", (const char *const[]){"open", "0777", NULL});
    expect_refused("no-such-tool.so", (const char *const[]){"no-such-tool.so", "no file at", NULL});
    expect_refused(".", (const char *const[]){"no file at", NULL});
    expect_refused("open", (const char *const[]){"open is a directory", NULL});
    /* The working directory is ours, but a directory above it anyone may
     * write: they could put another directory at its name. */
    char inner[600];
    snprintf(inner, sizeof inner, "%s/inner", open_dir);
    cr_assert_eq(mkdir(inner, 0700), 0);
    our_file(file, sizeof file, inner, "tool.so", 0644);
    cr_assert_eq(chdir(inner), 0, "chdir %s: %s", inner, strerror(errno));
    expect_refused("tool.so", (const char *const[]){open_dir, "0777", NULL});
}

Test(trusted_file, bad_paths_are_refused_naming_them)
{
    expect_refused(NULL, (const char *const[]){"path is NULL", NULL});
    expect_refused("", (const char *const[]){"path is empty", NULL});
    char *long_path = test_xmalloc(5001);
    memset(long_path, 'a', 5000);
    long_path[0] = '/';
    long_path[5000] = '\0';
    expect_refused(long_path, (const char *const[]){"5000 characters long", NULL});
    free(long_path);
    expect_refused("/nonexistent-hipamp-dir/libtool.so",
                   (const char *const[]){"/nonexistent-hipamp-dir/libtool.so", "no file at", NULL});
    char dir[256], file[512], through[600];
    our_dir(dir, sizeof dir);
    our_file(file, sizeof file, dir, "plain", 0644);
    snprintf(through, sizeof through, "%s/lib.so", file);
    expect_refused(through, (const char *const[]){through, "no file at", NULL});
}

/* A file anyone may write, or a group other than root's: anyone (that
 * group) could put their code in it. */
Test(trusted_file, a_file_others_may_write_is_refused)
{
    char dir[256], file[512];
    our_dir(dir, sizeof dir);
    our_file(file, sizeof file, dir, "tool.so", 0666);
    expect_refused(file, (const char *const[]){file, "0666", NULL});
    if (getegid() == 0) cr_assert_eq(chown(file, (uid_t)-1, 65534), 0, "%s", strerror(errno));
    cr_assert_eq(chmod(file, 0664), 0);
    expect_refused(file, (const char *const[]){file, "0664", NULL});
    cr_assert_eq(chmod(file, 0644), 0);
    ASSERT_OK(amp_check_trusted_file(file));
}

/* A directory on the way that others may write: they could rename the
 * file away and put theirs at its name, whoever owns the file. */
Test(trusted_file, a_file_in_a_directory_others_may_write_is_refused)
{
    char dir[256], open_dir[512], file[600];
    our_dir(dir, sizeof dir);
    snprintf(open_dir, sizeof open_dir, "%s/open", dir);
    cr_assert_eq(mkdir(open_dir, 0700), 0);
    our_file(file, sizeof file, open_dir, "tool.so", 0644);
    ASSERT_OK(amp_check_trusted_file(file));
    cr_assert_eq(chmod(open_dir, 0777), 0);
    expect_refused(file, (const char *const[]){open_dir, "0777", NULL});
    /* Sticky: only the entry's owner (we) may rename or remove it. */
    cr_assert_eq(chmod(open_dir, 01777), 0);
    ASSERT_OK(amp_check_trusted_file(file));
}

/* A link on the way is followed as the kernel follows it: a link of ours
 * to a trusted file passes; a link in a directory others may write does
 * not (the link could be made to point elsewhere), nor a link to a file
 * others may write. */
Test(trusted_file, links_are_followed_and_held_to_the_rule)
{
    char dir[256], good[512], bad[512], open_dir[512], link[700];
    our_dir(dir, sizeof dir);
    our_file(good, sizeof good, dir, "good.so", 0644);
    our_file(bad, sizeof bad, dir, "bad.so", 0646);
    snprintf(link, sizeof link, "%s/to-good.so", dir);
    cr_assert_eq(symlink(good, link), 0);
    ASSERT_OK(amp_check_trusted_file(link));
    snprintf(link, sizeof link, "%s/to-bad.so", dir);
    cr_assert_eq(symlink("bad.so", link), 0);
    expect_refused(link, (const char *const[]){"bad.so", "0646", NULL});
    snprintf(open_dir, sizeof open_dir, "%s/open", dir);
    cr_assert_eq(mkdir(open_dir, 0700), 0);
    cr_assert_eq(chmod(open_dir, 0777), 0);
    snprintf(link, sizeof link, "%s/to-good.so", open_dir);
    cr_assert_eq(symlink(good, link), 0);
    expect_refused(link, (const char *const[]){open_dir, NULL});
}

/* Another account's file (as root: ours given to uid 65534) is refused
 * naming the account, unless AMP_TRUSTED_USERS names it; a word of
 * AMP_TRUSTED_USERS that is no user refuses everything, naming the word. */
Test(trusted_file, another_accounts_file_passes_only_when_trusted)
{
    if (geteuid() != 0) cr_skip_test("giving a file to another account takes root");
    char dir[256], file[512];
    our_dir(dir, sizeof dir);
    our_file(file, sizeof file, dir, "tool.so", 0755);
    cr_assert_eq(chown(file, 65534, 65534), 0, "%s", strerror(errno));
    unsetenv("AMP_TRUSTED_USERS");
    expect_refused(file, (const char *const[]){file, "uid 65534", NULL});
    setenv("AMP_TRUSTED_USERS", "12345,65534", 1);
    ASSERT_OK(amp_check_trusted_file(file));
    struct passwd *nobody = getpwuid(65534);
    if (nobody) {
        char names[300];
        snprintf(names, sizeof names, "root,%s", nobody->pw_name);
        setenv("AMP_TRUSTED_USERS", names, 1);
        ASSERT_OK(amp_check_trusted_file(file));
    }
    setenv("AMP_TRUSTED_USERS", "65534,no-such-user-here-x1", 1);
    expect_refused(file, (const char *const[]){"AMP_TRUSTED_USERS", "'no-such-user-here-x1' is no user", NULL});
    expect_refused("/bin/sh", (const char *const[]){"'no-such-user-here-x1' is no user", NULL});
    unsetenv("AMP_TRUSTED_USERS");
}
