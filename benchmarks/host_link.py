#!/usr/bin/env python
"""What the host-to-device link gives, the ceiling for every upload a call makes.

For each size: host-to-device seconds and GB/s of one copy from pageable
memory, from pinned memory (cudaMallocHost), from pageable memory after
page-locking it (cudaHostRegister, whose own cost is shown apart), and the
device-to-host copy into pinned memory.  CuPy needed.  Medians of --repeat.

    python benchmarks/host_link.py [--mb 17 69 800] [--repeat 5]
"""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def _median(call, repeat):
    call()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def probe(mb: float, repeat: int) -> str:
    import cupy as cp

    rt = cp.cuda.runtime
    nbytes = int(mb * 2**20)
    host = np.ones(nbytes, dtype=np.uint8)
    dev = cp.empty(nbytes, dtype=cp.uint8)
    pinned_mem = cp.cuda.alloc_pinned_memory(nbytes)
    pinned = np.frombuffer(pinned_mem, dtype=np.uint8, count=nbytes)
    pinned[:] = 1

    def h2d(src):
        def call():
            rt.memcpy(dev.data.ptr, src.ctypes.data, nbytes, rt.memcpyHostToDevice)
        return call

    def register_unregister():
        rt.hostRegister(host.ctypes.data, nbytes, 0)
        rt.hostUnregister(host.ctypes.data)

    def d2h():
        rt.memcpy(pinned.ctypes.data, dev.data.ptr, nbytes, rt.memcpyDeviceToHost)

    t_pageable = _median(h2d(host), repeat)
    t_pinned = _median(h2d(pinned), repeat)
    t_register = _median(register_unregister, repeat)
    rt.hostRegister(host.ctypes.data, nbytes, 0)
    t_registered = _median(h2d(host), repeat)
    rt.hostUnregister(host.ctypes.data)
    t_d2h = _median(d2h, repeat)
    gbs = lambda t: nbytes / t / 1e9  # noqa: E731
    return (f"{mb:8.1f} MB  h2d pageable {t_pageable * 1e3:7.2f} ms ({gbs(t_pageable):5.1f} GB/s)  "
            f"pinned {t_pinned * 1e3:7.2f} ms ({gbs(t_pinned):5.1f})  "
            f"registered {t_registered * 1e3:7.2f} ms ({gbs(t_registered):5.1f}) "
            f"+ register/unregister {t_register * 1e3:6.2f} ms  "
            f"d2h pinned {t_d2h * 1e3:7.2f} ms ({gbs(t_d2h):5.1f})")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mb", type=float, nargs="+", default=[1, 17, 69, 400, 800])
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args()
    for mb in args.mb:
        print(probe(mb, args.repeat), flush=True)


if __name__ == "__main__":
    main()
