#!/usr/bin/env python3
"""The busiest torus link of one direct isomorphic alltoall on bench/platforms/bgq.xml.

Every rank sends a block of B bytes to each of its s Moore neighbours (periodic Cartesian
grid, row-major ranks, as isobench); bench/platforms/hostfile puts ranks 16 per node in rank
order; messages between nodes follow SimGrid 3.32's TorusZone route (dimension order, first
dimension first, each dimension the short way round, coordinates with the first dimension
fastest: src/kernel/routing/TorusZone.cpp); bgq.xml's links are SPLITDUPLEX, so each
direction of a link is its own resource. The busiest directed link carries L bytes; at 1.8 GB/s
no schedule of these messages ends before L / 1.8 GB/s, which is a lower bound on the call's
time, independent of the simulator.
Usage: python3 THIS [BLOCK_BYTES ...]   (default 65536 1024)"""
import itertools
import sys

TORUS = [4, 4, 4, 4, 2]  # bgq.xml topo_parameters
PPN, BW = 16, 1.8e9


def coords(node):
    c = []
    for d in TORUS:
        c.append(node % d)
        node //= d
    return c


def route(src, dst):
    """Directed links (lower node, dimension, direction) of SimGrid's torus route."""
    my, tg, cur, links = coords(src), coords(dst), src, []
    while cur != dst:
        prod = 1
        for j, d in enumerate(TORUS):
            if (cur // prod) % d != (dst // prod) % d:
                if (my[j] < tg[j] <= my[j] + d // 2) or (my[j] > d // 2 and (my[j] + d // 2) % d >= tg[j]):
                    nxt = cur + prod - prod * d if (cur // prod) % d == d - 1 else cur + prod
                    links.append((cur, j, "up"))
                else:
                    nxt = cur - prod + prod * d if (cur // prod) % d == 0 else cur - prod
                    links.append((nxt, j, "down"))
                cur = nxt
                break
            prod *= d
    return links


def busiest(dims, radius):
    """Messages between nodes, their mean hop count, and the most messages on one directed link."""
    k = 1
    for d in dims:
        k *= d
    offsets = [o for o in itertools.product(range(-radius, radius + 1), repeat=len(dims)) if any(o)]
    load, hops, off = {}, 0, 0
    for rank in range(k):
        c, x = [], rank
        for d in reversed(dims):
            c.append(x % d)
            x //= d
        c.reverse()
        for o in offsets:
            t = 0
            for cc, oo, d in zip(c, o, dims):
                t = t * d + (cc + oo) % d
            if rank // PPN == t // PPN:
                continue
            off += 1
            for link in route(rank // PPN, t // PPN):
                load[link] = load.get(link, 0) + 1
                hops += 1
    return k, off, hops / off, max(load.values())


blocks = [int(b) for b in sys.argv[1:]] or [65536, 1024]
print("| neighbourhood | grid | K | messages between nodes | mean hops | messages on the busiest link | "
      + " | ".join("bound at %d B (us)" % b for b in blocks) + " |")
print("|---|---|--:|--:|--:|--:|" + "--:|" * len(blocks))
for name, radius, grids in (("3D Moore r1", 1, ([4, 4, 4], [8, 8, 4], [16, 8, 8], [16, 16, 16])),
                            ("2D Moore r3", 3, ([8, 8], [16, 16], [32, 32], [64, 64]))):
    for dims in grids:
        k, off, mean, most = busiest(dims, radius)
        print("| %s | %s | %d | %d | %.2f | %d | %s |" % (
            name, "x".join(map(str, dims)), k, off, mean, most,
            " | ".join("%.1f" % (most * b / BW * 1e6) for b in blocks)))
