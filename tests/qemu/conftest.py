# SPDX-License-Identifier: MIT
"""pytest configuration for the QEMU tests.

Marker `parallel_vcpus`: the test's scenario needs housekeeping vCPUs to make progress
while another vCPU spins (a shell starting programs beside an isolated spinner, samplers on
several CPUs at once).  Under REPRO=1 QEMU runs with -icount, single-threaded: vCPUs take
turns, so such a scenario does not unfold as written, and these tests are skipped there —
with that reason in the report.  Without REPRO=1 (what `make test` and CI run) they run.
"""

import pytest

import zt


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "parallel_vcpus: needs vCPUs running in parallel (skipped under REPRO=1)")


def pytest_collection_modifyitems(config, items):
    if zt.repro_shift() is None:
        return
    skip = pytest.mark.skip(reason="REPRO=1 (-icount) runs vCPUs round-robin on one thread; "
                                   "this scenario needs them in parallel")
    for item in items:
        if "parallel_vcpus" in item.keywords:
            item.add_marker(skip)
