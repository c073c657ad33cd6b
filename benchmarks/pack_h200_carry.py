"""Cut the FA4 (and FA2) packs into pieces that fit the device calls in a row.

A device call carries at most 64 MiB with the checkout. FA4's pack
(../shared/device/pack-fa4.sh: two parts, ~67 MB) does not fit beside vLLM's
FA3 build and FlashInfer (~36 MB with the wheels) in two calls as its parts
come, nor vLLM's FA2 build (pack-vllm-kernels.sh --fa2: two parts, ~85 MB) in
one more, nor core Ray (benchmarks/pack_h200_ray.sh, ~33 MB). Joined into one byte stream (FA4's tarball, then, with
``--members fa4,fa2``, FA2's xz) and cut where each call has room, they do:
``--first`` bytes go with the first call, beside what it carries anyway,
``--size`` bytes with each later one.

    python3 benchmarks/pack_h200_carry.py pack --first 28000000 --size 64000000
    # -> .gpu-carry-1/piece, .gpu-carry-2/piece, ... each with manifest.json

On the device, benchmarks/run_h200_setup.sh keeps every piece it is sent in
/root/keep and unpacks FA4 / FA2 as soon as their bytes are all there
(``unpack``; sizes and sha256 are in the manifest). Run from the project root.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

SOURCES = {  # key: (name on the device, parts in order)
    "fa4": ("fa4.tar.xz", (".gpu-fa4-a/part.00", ".gpu-fa4-b/part.01")),
    "fa2": ("fa2.so.xz", (".gpu-vllm-fa2-a/part.00", ".gpu-vllm-fa2-b/part.01")),
    "ray": ("ray-site.tar.xz", (".gpu-ray/ray-site.tar.xz",)),  # benchmarks/pack_h200_ray.sh
}


def pack(first: int, size: int, keys: list[str], prefix: str = ".gpu-carry") -> list[Path]:
    members, stream = [], bytearray()
    for name, parts in (SOURCES[k] for k in keys):
        data = b"".join(Path(p).read_bytes() for p in parts)
        members.append(dict(name=name, offset=len(stream), size=len(data), sha256=hashlib.sha256(data).hexdigest()))
        stream += data
    cuts, at = [], 0
    while at < len(stream):
        n = first if not cuts else size
        cuts.append((at, min(len(stream), at + n)))
        at += n
    exclude = Path(".git/info/exclude")
    known = set(exclude.read_text().splitlines()) if exclude.exists() else set()
    out = []
    for i, (a, b) in enumerate(cuts, 1):
        d = Path(f"{prefix}-{i}")
        d.mkdir(exist_ok=True)
        (d / "piece").write_bytes(stream[a:b])
        (d / "manifest.json").write_text(json.dumps(dict(index=i, count=len(cuts), offset=a, size=b - a,
                                                         total=len(stream), members=members), indent=1))
        if f"/{d}/" not in known:
            with exclude.open("a") as f:
                f.write(f"/{d}/\n")
        out.append(d)
    return out


def unpack(keep: Path, carried: list[Path]) -> list[str]:
    """Store the carried pieces in ``keep``/pieces (named by their offset in the
    stream); write each member whose bytes are all there to ``keep``/<name>,
    once, checked against its sha256. Returns the members now complete."""
    store = keep / "pieces"
    store.mkdir(parents=True, exist_ok=True)
    for d in carried:
        m = json.loads((d / "manifest.json").read_text())
        (store / f"piece.{m['offset']:012d}").write_bytes((d / "piece").read_bytes())
        (store / "manifest.json").write_text(json.dumps(m))
    if not (store / "manifest.json").exists():
        return []
    members = json.loads((store / "manifest.json").read_text())["members"]
    pieces = sorted((int(p.name.split(".")[1]), p) for p in store.glob("piece.*"))
    done = []
    for mem in members:
        target = keep / mem["name"]
        if not target.exists():
            data = _read(pieces, mem["offset"], mem["offset"] + mem["size"])
            if data is None:
                continue
            if hashlib.sha256(data).hexdigest() != mem["sha256"]:
                raise SystemExit(f"{mem['name']}: checksum mismatch")
            target.write_bytes(data)
        done.append(mem["name"])
    return done


def _read(pieces: list[tuple[int, Path]], a: int, b: int) -> bytes | None:
    """Bytes [a, b) of the stream, or None while a piece of them is missing."""
    out, at = bytearray(), a
    for offset, path in pieces:
        end = offset + path.stat().st_size
        if end <= at or offset >= b:
            continue
        if offset > at:
            return None  # a gap
        with path.open("rb") as f:
            f.seek(at - offset)
            out += f.read(min(b, end) - at)
        at = min(b, end)
        if at >= b:
            return bytes(out)
    return None


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("pack")
    p.add_argument("--first", type=int, required=True, help="bytes for the first call")
    p.add_argument("--size", type=int, required=True, help="bytes for each later call")
    p.add_argument("--members", default="fa4", help="comma-separated, in stream order: fa4, fa2, ray")
    u = sub.add_parser("unpack")
    u.add_argument("--keep", default="/root/keep")
    u.add_argument("dirs", nargs="*", help="carried .gpu-carry-N folders")
    args = ap.parse_args()
    if args.cmd == "pack":
        for d in pack(args.first, args.size, args.members.split(",")):
            m = json.loads((d / "manifest.json").read_text())
            print(d, m["offset"], m["size"])
    else:
        done = unpack(Path(args.keep), [Path(d) for d in args.dirs if (Path(d) / "manifest.json").exists()])
        print("complete:", " ".join(done) or "-", file=sys.stderr)


if __name__ == "__main__":
    main()
