/* SPDX-License-Identifier: MIT */
/*
 * true — exit with status 0 and do nothing else (the smallest process to spawn: load uses
 * it to exercise process creation, exit and teardown without console output).
 */
int main(void)
{
    return 0;
}
