# SPDX-License-Identifier: MIT
"""What a newcomer ran into (issue 21): each test reproduces one report and fails without its
fix.  Item numbers are the issue's.
"""

import re

import zt


def sh(cmd, cpus=4, extra="", **kw):
    bootargs = f"quiet {extra} init=/bin/sh -- -c '{cmd}'"
    return zt.boot(cpus=cpus, bootargs=bootargs, **kw)


def test_new04_partition_cycles_restore_roles():
    """NEW-04 (item 2): `partition -n N offline LIST` brings each CPU back in the role it had:
    a dataplane CPU as dataplane (with ZT_PART_AS_DATAPLANE), a housekeeping one as
    housekeeping, in one list of both kinds too."""
    b = sh("partition -n 2 offline 3; partition; partition -n 2 offline 1-3; partition", cpus=4,
           extra="dataplane=2-3")
    assert b.status == 0, b
    shows = re.findall(r"^partition: dataplane (\S+)$", b.console.replace("\r", ""), re.M)
    assert shows == ["2-3", "2-3"], b
    assert re.search(r"cycles of 3: online-dataplane median", b.console), b
    assert re.search(r"cycles of 1-3: online/online-dataplane median", b.console), b
    assert b.console.count("partition: offline none") == 2, b
