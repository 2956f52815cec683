// warp/warp_peers.cuh — which lanes of a warp hold the same small label:
// the mask a warp needs to rank its keys within their buckets (the sample
// sort's scatter) or digits (a radix sort) in lane order without shared
// memory atomics per key.
//
// One ballot per bit of the label: `bits` ballots, each lane keeping the
// lanes that agree with it on that bit. Cheaper than __match_any_sync on
// sm_90 for labels of up to 9 bits. Every lane of the warp calls it (full
// mask); a lane with nothing to rank passes a label no live lane uses.
//
//   const unsigned peers = detail::warp_peers(bucket, levels + 1);
//   const int leader = __ffs(peers) - 1;                          // the group's lowest lane
//   const int rank_in_group = __popc(peers & ((1u << lane) - 1)); // lanes before this one
#pragma once

#include "../detail/config.cuh"

namespace tilesort::detail {

// The lanes of the warp whose `label` (below 2^bits) equals the caller's.
TILESORT_DEVICE unsigned warp_peers(int label, int bits) {
  unsigned peers = 0xffffffffu;
  for (int bit = 0; bit < bits; ++bit) {
    const bool set = (label >> bit) & 1;
    const unsigned ballot = __ballot_sync(0xffffffffu, set);
    peers &= set ? ballot : ~ballot;
  }
  return peers;
}

// warp_peers for a label width known at compile time (the radix sort's
// digits), about five instructions per bit: the bit spread to a mask (all
// ones where set), its ballot, and one three-input logic op folding
// ~(ballot ^ mask) into peers.
template <int Bits>
TILESORT_DEVICE unsigned warp_peers(unsigned label) {
  unsigned peers = 0xffffffffu;
  TILESORT_UNROLL
  for (int bit = 0; bit < Bits; ++bit) {
    const unsigned mask = static_cast<unsigned>(static_cast<int>(label << (31 - bit)) >> 31);
    const unsigned ballot = __ballot_sync(0xffffffffu, mask != 0);
    peers &= ~(ballot ^ mask);
  }
  return peers;
}

}  // namespace tilesort::detail
