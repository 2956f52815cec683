// warp/warp_peers.cuh — which lanes of a warp hold the same small label:
// the ranking step of the sample sort's and the radix sort's scatters.
#pragma once

#include "../detail/config.cuh"

namespace tilesort::detail {

// The lanes of the warp whose `label` (below 2^bits) equals the caller's: one
// ballot per bit (cheaper than __match_any_sync on sm_90); every lane calls.
TILESORT_DEVICE unsigned warp_peers(int label, int bits) {
  unsigned peers = 0xffffffffu;
  for (int bit = 0; bit < bits; ++bit) {
    const bool set = (static_cast<unsigned>(label) & (1u << bit)) != 0;
    const unsigned ballot = __ballot_sync(0xffffffffu, set);
    peers &= set ? ballot : ~ballot;
  }
  return peers;
}

// warp_peers for a label width known at compile time, about five
// instructions per bit: the bit spread to a mask (all ones where set), its
// ballot, and one three-input logic op folding ~(ballot ^ mask) into peers.
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
