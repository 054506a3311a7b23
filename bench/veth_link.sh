# Two "machines" on one: network namespaces A and B joined by one veth pair
# whose ends both send at most RATE (tc's tbf). Sourced by bench/ddp.sh and
# bench/packed_wire.sh; needs root (CAP_NET_ADMIN). The caller deletes the
# namespaces (ip netns del), which takes the pair with them.
#
#   veth_up A B VA VB NET RATE BURST    # A holds NET.1 on VA, B holds NET.2 on VB
veth_up() {
  local a=$1 b=$2 va=$3 vb=$4 net=$5 rate=$6 burst=$7 side
  ip netns add "$a"; ip netns add "$b"
  ip link add "$va" type veth peer name "$vb"
  ip link set "$va" netns "$a"; ip link set "$vb" netns "$b"
  ip -n "$a" addr add "$net.1/24" dev "$va"; ip -n "$b" addr add "$net.2/24" dev "$vb"
  for side in "$a $va" "$b $vb"; do
    set -- $side
    ip -n "$1" link set lo up; ip -n "$1" link set "$2" up
    ip netns exec "$1" tc qdisc add dev "$2" root tbf rate "$rate" burst "$burst" latency 20ms
  done
}
