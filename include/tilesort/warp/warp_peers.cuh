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
    const bool set = (label >> bit) & 1;
    const unsigned ballot = __ballot_sync(0xffffffffu, set);
    peers &= set ? ballot : ~ballot;
  }
  return peers;
}

}  // namespace tilesort::detail
