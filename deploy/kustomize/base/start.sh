#!/bin/sh
# The clusterd StatefulSet's entry point (kept in the clusterd-start ConfigMap). Before it
# execs clusterd it works out the two things a pod template cannot spell out per pod:
#  - this replica's view of the cluster PKI: the clusterd-pki Secret is flat (a Secret's keys
#    cannot hold '/'), replicas/NAME/FILE stored under the key replicas.NAME.FILE; the shared
#    files and this pod's own certificates are linked into $CLUSTERD_PKI_DIR in the layout
#    --pki-dir expects (links, so a Secret update is seen as the kubelet swaps the volume);
#  - --initial-cluster: every founding replica's peer address on the headless Service,
#    derived from $CLUSTERD_REPLICAS, which kustomize copies from the StatefulSet's replica
#    count, so the member list and the replica count cannot disagree.
# It also advertises the pod's API on its peer name (--advertise-address): the server binds
# 0.0.0.0, and the member list must not say 127.0.0.1 to the other replicas.
# Peer addresses are NAME.SERVICE (resolved through the pod's DNS search path), so neither the
# namespace nor the cluster domain is baked into the member list or the certificates' required
# names. The container's args are passed on to clusterd after the flags made here.
set -eu

fail() {
  echo "clusterd start: $*" >&2
  exit 1
}

: "${POD_NAME:?POD_NAME must be set (downward API metadata.name)}"
: "${CLUSTERD_REPLICAS:?CLUSTERD_REPLICAS must be set (the StatefulSet replica count)}"
: "${CLUSTERD_PEER_SERVICE:?CLUSTERD_PEER_SERVICE must be set (the headless Service name)}"
secret_dir=${CLUSTERD_PKI_SECRET_DIR:-/etc/clusterd/pki-secret}
pki_dir=${CLUSTERD_PKI_DIR:-/run/clusterd/pki}
peer_port=${CLUSTERD_PEER_PORT:-2380}
bin=${CLUSTERD_BIN:-/app/bin/clusterd}

# A StatefulSet pod is named SET-ORDINAL.
set_name=${POD_NAME%-*}
ordinal=${POD_NAME##*-}
case $ordinal in
  '' | *[!0-9]*) fail "pod name $POD_NAME does not end in -ORDINAL: run this from a StatefulSet" ;;
esac
case $CLUSTERD_REPLICAS in
  '' | *[!0-9]* | 0) fail "CLUSTERD_REPLICAS=$CLUSTERD_REPLICAS is not a positive count" ;;
esac
if [ "$ordinal" -ge "$CLUSTERD_REPLICAS" ]; then
  fail "$POD_NAME is not one of the $CLUSTERD_REPLICAS founding replicas: the replica count founds the cluster, and scaling the StatefulSet of a running one does not add members (README: On an existing cluster)"
fi

mkdir -p "$pki_dir/replicas/$POD_NAME"
for f in "$secret_dir"/*; do
  [ -e "$f" ] || fail "the PKI Secret mounted at $secret_dir is empty"
  key=${f##*/}
  case $key in
    replicas.*) ;;
    *) ln -sfn "$f" "$pki_dir/$key" ;;
  esac
done
for f in apiserver.crt apiserver.key peer.crt peer.key; do
  [ -e "$secret_dir/replicas.$POD_NAME.$f" ] ||
    fail "the PKI Secret has no replicas.$POD_NAME.$f: recreate it for $CLUSTERD_REPLICAS replicas (deploy/kustomize/pki-secret.sh --replicas $CLUSTERD_REPLICAS)"
  ln -sfn "$secret_dir/replicas.$POD_NAME.$f" "$pki_dir/replicas/$POD_NAME/$f"
done

members=
i=0
while [ "$i" -lt "$CLUSTERD_REPLICAS" ]; do
  members="${members:+$members,}$set_name-$i=$set_name-$i.$CLUSTERD_PEER_SERVICE:$peer_port"
  i=$((i + 1))
done

exec "$bin" \
  --name="$POD_NAME" \
  --pki-dir="$pki_dir" \
  --initial-cluster="$members" \
  --peer-address="$POD_NAME.$CLUSTERD_PEER_SERVICE:$peer_port" \
  --advertise-address="$POD_NAME.$CLUSTERD_PEER_SERVICE" \
  "$@"
