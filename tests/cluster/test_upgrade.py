"""Upgraded in the cluster: every workload (the services and Kafka) rolls to a new image tag
while bots play. Nothing acknowledged is lost or duplicated and no action is refused; the
longest wait of a match between two acknowledgements is reported."""

from __future__ import annotations

import time
from typing import Any

from tests.cluster.kube import (
    WORKLOADS,
    Cluster,
    current_tag,
    get,
    kubectl,
    retag,
    rollout,
    write_overlay,
)
from tests.cluster.load import assert_nothing_lost, bots_playing, findings


def test_a_rolling_upgrade_of_every_workload_loses_and_refuses_nothing(
    k8s: Cluster, report: Any
) -> None:
    tag = current_tag()
    kafka_image = get("statefulset", "kafka")["spec"]["template"]["spec"]["containers"][0]["image"]
    suffix = f"upgrade-{int(time.time())}"
    retag(f"localhost/tabletop:{tag}", f"localhost/tabletop:{suffix}")
    kafka_tag = f"{kafka_image.rsplit(':', 1)[1]}-{suffix}"
    retag(kafka_image, f"localhost/tabletop-kafka:{kafka_tag}")
    overlay = write_overlay(suffix, name="upgrade", kafka_tag=kafka_tag)
    with bots_playing(k8s) as (record, bots):
        time.sleep(8)
        start = time.monotonic()
        kubectl("apply", "-k", str(overlay))
        took = {}
        for workload in WORKLOADS:
            rollout(workload)
            took[workload] = round(time.monotonic() - start, 1)
        upgraded = time.monotonic() - start
        time.sleep(8)
        stalls = record.stalls(since=start)
    found = findings(k8s, record, bots)
    images = {
        w: get(kind, w)["spec"]["template"]["spec"]["containers"][0]["image"]
        for w, kind in WORKLOADS.items()
    }
    report.add(
        "rolling_upgrade",
        {
            "upgrade_s": round(upgraded, 1),
            "rolled_by_s": took,
            "max_stall_s": max(stalls.values(), default=0.0),
            "matches_in_play": len(stalls),
            **{k: v for k, v in found.items() if k != "differences"},
        },
    )
    assert all(i.endswith(suffix) for i in images.values()), images
    assert_nothing_lost(found)
    assert found["refused"] == {}, "an action was refused during the upgrade"
