#!/usr/bin/env bash
# Builds the base image the deploy e2e tests pass as the Dockerfile's BASE build argument, for
# machines that cannot pull the public node:20-bookworm-slim image. It is a minimal root made
# from this machine's own files, laid out as that image is: node in /usr/local/bin, npm in
# /usr/local/lib/node_modules/npm, /bin/sh and the few coreutils a Dockerfile's RUN lines use,
# the shared libraries they load, and a `node` user (uid/gid 1000). No network is needed.
#
# When $NODE_EXTRA_CA_CERTS is set (this machine's Node trusts an extra CA, for instance an
# egress proxy's), the file is copied into the image at a path of its own and the variable set
# there, so `npm ci` inside `docker build --network host` reaches the registry as it does here.
# That belongs to this test image only, never to deploy/Dockerfile.
#
# The image is tagged clusterd-test-base:<sha256 of the root's tar, 16 hex digits> and is
# imported only when no image has that tag, so reruns cost the few seconds of assembling the
# root and hashing it. Prints the tag on stdout (progress goes to stderr).
# Needs root (the node user's home is chowned) and a running Docker daemon.
set -euo pipefail

say() { echo "docker-base-image: $*" >&2; }

node_bin=$(readlink -f "$(command -v node)")
npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
[ -f "$npm_dir/package.json" ] || { say "cannot find npm's directory (got $npm_dir)"; exit 1; }

work=$(mktemp -d /tmp/clusterd-base-image.XXXXXX)
trap '[ -n "${KEEP_ROOT:-}" ] || rm -rf "$work"' EXIT
root="$work/root"
mkdir -p "$root"/usr/{bin,sbin,lib,lib64} "$root"/usr/local/{bin,lib/node_modules} "$root"/etc "$root"/home/node "$root"/root "$root"/tmp "$root"/var/tmp
# Debian bookworm is merged-/usr.
for d in bin sbin lib lib64; do ln -s "usr/$d" "$root/$d"; done
chmod 1777 "$root/tmp" "$root/var/tmp"

# Copies a file to the same path under the root (through merged-/usr), with its libraries.
copy_with_libs() {
  local src=$1 dst=${2:-$1}
  dst=${dst#/}
  case $dst in bin/* | sbin/* | lib/* | lib64/*) dst="usr/$dst" ;; esac
  mkdir -p "$root/$(dirname "$dst")"
  cp -L "$src" "$root/$dst"
  ldd "$src" 2>/dev/null | grep -oE '/[^ ]+' | while read -r lib; do
    local l=${lib#/}
    case $l in lib/* | lib64/*) l="usr/$l" ;; esac
    [ -e "$root/$l" ] || { mkdir -p "$root/$(dirname "$l")" && cp -L "$lib" "$root/$l"; }
  done
}

copy_with_libs "$node_bin" /usr/local/bin/node
# The rest of glibc's runtime libraries, as the Debian image's libc6 package has them: native
# addons load some that node itself does not (the build's bundler needs librt.so.1).
libc_dir=$(dirname "$(ldd "$node_bin" | grep -oE '/[^ ]+/libc\.so\.6' | head -1)")
for name in librt.so.1 libresolv.so.2 libutil.so.1 libanl.so.1 libnss_files.so.2 libnss_dns.so.2; do
  if [ -e "$libc_dir/$name" ]; then copy_with_libs "$libc_dir/$name"; fi
done
copy_with_libs "$(readlink -f /bin/sh)" /usr/bin/sh
for tool in cat chmod chown cp dirname env id ln ls mkdir mv readlink rm sleep test true; do
  copy_with_libs "$(readlink -f "$(type -P "$tool")")" "/usr/bin/$tool"
done
cp -a "$npm_dir" "$root/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"

cat >"$root/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
node:x:1000:1000::/home/node:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin
EOF
cat >"$root/etc/group" <<'EOF'
root:x:0:
node:x:1000:
nogroup:x:65534:
EOF
printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"$root/etc/nsswitch.conf"
chown 1000:1000 "$root/home/node"

changes=(--change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' --change 'CMD ["node"]')
if [ -n "${NODE_EXTRA_CA_CERTS:-}" ] && [ -f "$NODE_EXTRA_CA_CERTS" ]; then
  mkdir -p "$root/usr/local/share/clusterd-test-ca"
  cp -L "$NODE_EXTRA_CA_CERTS" "$root/usr/local/share/clusterd-test-ca/extra-ca.crt"
  changes+=(--change 'ENV NODE_EXTRA_CA_CERTS=/usr/local/share/clusterd-test-ca/extra-ca.crt')
fi

# A reproducible tar (sorted names, fixed times) so that its hash names the content.
tar -C "$root" --sort=name --mtime=@0 --numeric-owner --format=gnu -cf "$work/root.tar" .
hash=$( (sha256sum <"$work/root.tar"; printf '%s\n' "${changes[@]}") | sha256sum | cut -c1-16)
tag="clusterd-test-base:$hash"
if docker image inspect "$tag" >/dev/null 2>&1; then
  say "$tag exists"
else
  say "importing $tag ($(du -h "$work/root.tar" | cut -f1))"
  docker import "${changes[@]}" "$work/root.tar" "$tag" >/dev/null
fi
echo "$tag"
