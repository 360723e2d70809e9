# Sourced by the tools/ensure-*.sh scripts: apt_install_missing WHO PACKAGE... installs the
# named Debian packages with apt-get (root only; otherwise says what is missing and fails).
# Nothing to do when no package is named.
apt_install_missing() {
  local who=$1
  shift
  [ $# -gt 0 ] || return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "$who: missing $*; run as root (or install them) so apt-get can add them" >&2
    exit 1
  fi
  echo "==> $who: installing $* with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}
