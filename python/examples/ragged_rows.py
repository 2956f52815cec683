"""Sort the ragged rows of a torch tensor with tilesort and check them against a per-row torch.sort.

Ragged rows (rows of different lengths, stored back to back with CSR
offsets) have no torch operator: the usual workaround pads every row to the
longest one. tilesort sorts them where they are.

    python python/examples/ragged_rows.py
"""

import torch

import tilesort


def main():
    torch.manual_seed(0)
    lengths = torch.randint(0, 2000, (5000,), device="cuda")  # 5000 rows of 0..1999 keys
    offsets = torch.zeros(lengths.numel() + 1, dtype=torch.int64, device="cuda")
    torch.cumsum(lengths, 0, out=offsets[1:])
    scores = torch.randn(int(offsets[-1]), device="cuda")

    keys, order = tilesort.segmented_sort(scores, offsets=offsets, values=torch.arange(scores.numel(), device="cuda"),
                                          descending=True)

    for begin, end in zip(offsets[:-1].tolist(), offsets[1:].tolist()):
        expected = torch.sort(scores[begin:end], descending=True, stable=True)
        assert torch.equal(keys[begin:end], expected.values)
        assert torch.equal(order[begin:end], expected.indices + begin)
    print(f"sorted {lengths.numel()} ragged rows ({scores.numel()} keys); every row matches torch.sort")


if __name__ == "__main__":
    main()
