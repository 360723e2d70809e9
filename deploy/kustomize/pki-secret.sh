#!/bin/sh
# Makes (or completes) the cluster PKI for the kustomize StatefulSet with `clusterd pki` and
# prints the clusterd-pki Secret that holds it, for `kubectl apply -f -`. Each replica's
# certificates name its peer address (clusterd-N.clusterd-peer, the form start.sh uses) and,
# for clients, the Service names (clusterd, clusterd.NAMESPACE, clusterd.NAMESPACE.svc,
# clusterd.NAMESPACE.svc.DOMAIN) and the pod's own names under the headless Service.
# The Secret is flat: replicas/NAME/FILE becomes the key replicas.NAME.FILE (start.sh lays the
# files out again in the pod). Running it again keeps every existing file and adds replicas.
set -eu

usage() {
  cat <<'USAGE'
Usage: deploy/kustomize/pki-secret.sh [--replicas N] [--namespace NS] [--cluster-domain D] PKI_DIR

Makes or completes PKI_DIR with `clusterd pki` for replicas clusterd-0..N-1 of the kustomize
StatefulSet and prints the clusterd-pki Secret holding it (YAML) on stdout.

  --replicas N          replica count, as in the overlay you apply (default 3)
  --namespace NS        namespace the manifests are applied in (default default); names the
                        client Service's qualified names in the serving certificates
  --cluster-domain D    the cluster's DNS domain (default cluster.local)

Environment: CLUSTERD (default: clusterd on the PATH) runs `clusterd pki`; KUBECTL (default
kubectl) writes the Secret (kubectl create secret generic --dry-run=client -o yaml).

Example:
  deploy/kustomize/pki-secret.sh --namespace clusterd ./pki | kubectl apply -n clusterd -f -
USAGE
}

replicas=3
namespace=default
domain=cluster.local
dir=
while [ $# -gt 0 ]; do
  case $1 in
    --replicas) replicas=${2:?--replicas needs a value}; shift 2 ;;
    --replicas=*) replicas=${1#*=}; shift ;;
    --namespace | -n) namespace=${2:?--namespace needs a value}; shift 2 ;;
    --namespace=*) namespace=${1#*=}; shift ;;
    --cluster-domain) domain=${2:?--cluster-domain needs a value}; shift 2 ;;
    --cluster-domain=*) domain=${1#*=}; shift ;;
    -h | --help) usage; exit 0 ;;
    -*) echo "pki-secret.sh: unknown flag $1" >&2; usage >&2; exit 2 ;;
    *)
      [ -z "$dir" ] || { echo "pki-secret.sh: one PKI_DIR only" >&2; exit 2; }
      dir=$1; shift ;;
  esac
done
[ -n "$dir" ] || { usage >&2; exit 2; }
case $replicas in
  '' | *[!0-9]* | 0) echo "pki-secret.sh: --replicas must be a positive count" >&2; exit 2 ;;
esac

clusterd=${CLUSTERD:-clusterd}
kubectl=${KUBECTL:-kubectl}
set_name=clusterd
peer_service=clusterd-peer
client_service=clusterd

set --
i=0
while [ "$i" -lt "$replicas" ]; do
  pod=$set_name-$i
  hosts=$pod.$peer_service,$pod.$peer_service.$namespace,$pod.$peer_service.$namespace.svc,$pod.$peer_service.$namespace.svc.$domain
  hosts=$hosts,$client_service,$client_service.$namespace,$client_service.$namespace.svc,$client_service.$namespace.svc.$domain
  set -- "$@" --replica "$pod=$hosts"
  i=$((i + 1))
done
# clusterd pki reports what it wrote (to stderr here: stdout is the Secret); its "Next:" steps
# are for replicas started by hand, which the StatefulSet replaces.
report=$("$clusterd" pki --out "$dir" "$@")
printf '%s\n' "$report" | sed '/^Next:/,$d' >&2

set --
for f in "$dir"/*; do
  [ -f "$f" ] && set -- "$@" "--from-file=${f##*/}=$f"
done
for r in "$dir"/replicas/*; do
  for f in "$r"/*; do
    [ -f "$f" ] && set -- "$@" "--from-file=replicas.${r##*/}.${f##*/}=$f"
  done
done
# The null creationTimestamp that --dry-run=client writes would make every later apply report
# "configured" for nothing.
secret=$("$kubectl" create secret generic clusterd-pki --dry-run=client -o yaml "$@")
printf '%s\n' "$secret" | sed '/^  creationTimestamp: null$/d'
