#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""hostile_mem_sparse.py IN OUT: a sparse copy of the ELF64 little-endian executable IN whose
section headers claim gigabytes that are holes on disk (issue 12, class 3). The kernel loads
executables by their program headers only, so OUT still runs. OUT is extended to 1.9 GiB with
a hole (under the readers' 2 GiB file cap, so they parse it instead of refusing its size):

  .eh_frame, .debug_frame    claim everything from their offset to the end (libelf/libdw)
  .symtab, .dynsym           1 GiB of symbols in the hole
  .strtab, .dynstr           200 MiB of names in the hole
  .gopclntab                 200 MiB in the hole (a Go binary; under the old 256 MiB cap)
  .shstrtab                  untouched (the names above must stay readable)
"""
import shutil
import struct
import sys

TOTAL = 1900 << 20
HOLE = 256 << 20  # claimed tables start here, past the real data


def main(src, dst):
    shutil.copyfile(src, dst)
    shutil.copymode(src, dst)
    with open(dst, "r+b") as f:
        eh = f.read(64)
        if eh[:4] != b"\x7fELF" or eh[4] != 2 or eh[5] != 1:
            sys.exit("not an ELF64 little-endian file: " + src)
        shoff, = struct.unpack_from("<Q", eh, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", eh, 0x3a)
        f.seek(shoff)
        shdrs = [bytearray(f.read(shentsize)) for _ in range(shnum)]
        stroff, = struct.unpack_from("<Q", shdrs[shstrndx], 0x18)
        strsz, = struct.unpack_from("<Q", shdrs[shstrndx], 0x20)
        f.seek(stroff)
        names = f.read(strsz)
        claims = {
            ".eh_frame": None, ".debug_frame": None,
            ".symtab": (HOLE, 1 << 30), ".dynsym": (HOLE, 1 << 30),
            ".strtab": (HOLE + (1 << 30) + 4096, 200 << 20),
            ".dynstr": (HOLE + (1 << 30) + 4096, 200 << 20),
            ".gopclntab": (HOLE, 200 << 20),
        }
        patched = []
        for i, sh in enumerate(shdrs):
            name_off, = struct.unpack_from("<I", sh, 0)
            name = names[name_off:names.index(b"\0", name_off)].decode()
            if name not in claims or i == shstrndx:
                continue
            claim = claims[name]
            if claim is None:
                off, = struct.unpack_from("<Q", sh, 0x18)
                claim = (off, TOTAL - off)
            struct.pack_into("<QQ", sh, 0x18, claim[0], claim[1])
            patched.append("%s %d MiB" % (name, claim[1] >> 20))
        f.seek(shoff)
        for sh in shdrs:
            f.write(sh)
        f.truncate(TOTAL)
    print("; ".join(patched))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
