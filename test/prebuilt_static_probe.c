/* prebuilt_static_probe.c — test_prebuilt's helper: a program linked with the static library prints where it looks for prebuilt packs and why it does not use them (amp_prebuilt_get_info), so the test can run it by a bare name from a directory of its choosing. */
#include <hipamp.h>

#include <stdio.h>

int main(void)
{
    amp_prebuilt_info pi;
    if (amp_prebuilt_get_info(&pi) != AMP_OK) return 1;
    printf("dir=%s\nenabled=%d\nreason=%s\n", pi.dir, pi.enabled ? 1 : 0, pi.reason);
    return 0;
}
