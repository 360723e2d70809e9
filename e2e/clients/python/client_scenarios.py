#!/usr/bin/env python3
"""Scenarios run by the official Python client (Debian's python3-kubernetes) against a
clusterd server, for e2e/clients/python.test.ts. Each scenario prints JSON on stdout (one
document per line) describing what the client returned; the test asserts on it.

Usage: client_scenarios.py --kubeconfig FILE --namespace NS SCENARIO [options]
  list-chunked --selector S --limit N   list page by page with limit/_continue
  watch --selector S --events N         print {"ready": rv}, then stream N events from rv
  crud                                  create/read/patch (json, strategic)/delete, core and apps
"""
import argparse
import json
import sys

from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException


def list_chunked(v1, ns, selector, limit):
    pages = []
    token = None
    while True:
        kwargs = {"label_selector": selector, "limit": limit}
        if token:
            kwargs["_continue"] = token
        page = v1.list_namespaced_config_map(ns, **kwargs)
        pages.append(
            {
                "names": [item.metadata.name for item in page.items],
                "resourceVersion": page.metadata.resource_version,
                "remainingItemCount": page.metadata.remaining_item_count,
                "hasContinue": bool(page.metadata._continue),
            }
        )
        token = page.metadata._continue
        if not token:
            break
    return {"pages": pages}


def stream_events(v1, ns, selector, count):
    start = v1.list_namespaced_config_map(ns, label_selector=selector, limit=1)
    rv = start.metadata.resource_version
    # The test writes only after this line; the watch starts from rv, so nothing is missed.
    print(json.dumps({"ready": rv}), flush=True)
    events = []
    w = watch.Watch()
    # allow_watch_bookmarks: the client sends allowWatchBookmarks=True (Python's spelling).
    for event in w.stream(v1.list_namespaced_config_map, ns, label_selector=selector, resource_version=rv, allow_watch_bookmarks=True, timeout_seconds=30):
        if event["type"] == "BOOKMARK":
            continue
        obj = event["object"]
        events.append({"type": event["type"], "name": obj.metadata.name, "data": obj.data, "resourceVersion": obj.metadata.resource_version})
        if len(events) >= count:
            w.stop()
    return {"events": events}


def status_of(call):
    try:
        call()
    except ApiException as e:
        return {"status": e.status, "reason": json.loads(e.body).get("reason")}
    return {"status": "succeeded"}


def crud(v1, apps, ns):
    out = {}
    body = client.V1ConfigMap(api_version="v1", kind="ConfigMap", metadata=client.V1ObjectMeta(name="py-cm", labels={"by": "python"}), data={"a": "1"})
    created = v1.create_namespaced_config_map(ns, body)
    out["created"] = {"name": created.metadata.name, "uid": created.metadata.uid, "data": created.data}
    out["read"] = v1.read_namespaced_config_map("py-cm", ns).data
    # A dict is sent as a strategic merge patch, a list as a JSON patch.
    out["strategic"] = v1.patch_namespaced_config_map("py-cm", ns, {"data": {"b": "2"}}).data
    out["jsonPatch"] = v1.patch_namespaced_config_map("py-cm", ns, [{"op": "replace", "path": "/data/a", "value": "changed"}, {"op": "remove", "path": "/data/b"}]).data
    out["duplicate"] = status_of(lambda: v1.create_namespaced_config_map(ns, body))
    deleted = v1.delete_namespaced_config_map("py-cm", ns)
    out["deleted"] = {"kind": deleted.kind, "status": deleted.status}
    out["afterDelete"] = status_of(lambda: v1.read_namespaced_config_map("py-cm", ns))
    # Models built without api_version/kind are sent without them; the endpoint supplies both.
    bare = v1.create_namespaced_config_map(ns, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="py-bare"), data={"k": "v"}))
    out["bare"] = {"apiVersion": bare.api_version, "kind": bare.kind, "data": bare.data}

    deployment = client.V1Deployment(
        api_version="apps/v1",
        kind="Deployment",
        metadata=client.V1ObjectMeta(name="py-deploy"),
        spec=client.V1DeploymentSpec(
            replicas=1,
            selector=client.V1LabelSelector(match_labels={"app": "py"}),
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels={"app": "py"}),
                spec=client.V1PodSpec(containers=[client.V1Container(name="app", image="registry.example/py:1")]),
            ),
        ),
    )
    made = apps.create_namespaced_deployment(ns, deployment)
    out["deployment"] = {"replicas": made.spec.replicas, "strategy": made.spec.strategy.type, "revisionHistoryLimit": made.spec.revision_history_limit}
    patched = apps.patch_namespaced_deployment("py-deploy", ns, {"spec": {"replicas": 3, "template": {"spec": {"containers": [{"name": "app", "image": "registry.example/py:2"}]}}}})
    out["deploymentPatched"] = {"replicas": patched.spec.replicas, "images": [c.image for c in patched.spec.template.spec.containers]}
    apps.delete_namespaced_deployment("py-deploy", ns)
    out["deploymentAfterDelete"] = status_of(lambda: apps.read_namespaced_deployment("py-deploy", ns))
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--namespace", required=True)
    scenarios = parser.add_subparsers(dest="scenario", required=True)
    chunked = scenarios.add_parser("list-chunked")
    chunked.add_argument("--selector", required=True)
    chunked.add_argument("--limit", type=int, required=True)
    streamed = scenarios.add_parser("watch")
    streamed.add_argument("--selector", required=True)
    streamed.add_argument("--events", type=int, required=True)
    scenarios.add_parser("crud")
    args = parser.parse_args()

    # The client reads the server, CA and client certificate from the kubeconfig.
    config.load_kube_config(config_file=args.kubeconfig)
    v1 = client.CoreV1Api()
    if args.scenario == "list-chunked":
        result = list_chunked(v1, args.namespace, args.selector, args.limit)
    elif args.scenario == "watch":
        result = stream_events(v1, args.namespace, args.selector, args.events)
    else:
        result = crud(v1, client.AppsV1Api(), args.namespace)
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    sys.exit(main())
