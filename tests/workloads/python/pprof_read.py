# SPDX-License-Identifier: Apache-2.0
# pprof_read: a reader of our profile.pb.gz for the Python integration tests (not a workload:
# test_python_server.sh and test_python_shapes.sh import it from here). Decodes the protobuf
# by hand (no protobuf package on the test machines) into what the tests compare:
#
#   p = read("profile.pb.gz")
#   p.strings                    the string table
#   p.funcs[id]                  (name, file)
#   p.locs[id]                   {"lines": [(function id, line), ...] leaf first, "lang": N or None}
#   p.samples                    [(location ids leaf first, values, {label key: str value})]
#
# "lang" is our location field 1000 (profile/pprof.h PPROF_LOCATION_LANG): an enum prof_lang,
# named by LANGS.
import gzip

LANGS = ["native", "kernel", "go", "java", "python", "node", "ruby", "owner"]
LOCATION_LANG = 1000


def _varint(buf, i):
    v = sh = 0
    while True:
        b = buf[i]
        i += 1
        v |= (b & 0x7F) << sh
        sh += 7
        if not b & 0x80:
            return v, i


def fields(buf):
    """(field number, wire type, value) of each field of a message."""
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        f, t = key >> 3, key & 7
        if t == 0:
            v, i = _varint(buf, i)
        elif t == 2:
            n, i = _varint(buf, i)
            v, i = buf[i:i + n], i + n
        elif t == 1:
            v, i = buf[i:i + 8], i + 8
        elif t == 5:
            v, i = buf[i:i + 4], i + 4
        else:
            raise ValueError("wire type %d" % t)
        yield f, t, v


def _packed(t, v):
    if t == 0:
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = _varint(v, i)
        out.append(x)
    return out


class Profile:
    def __init__(self, data):
        self.strings, self.funcs, self.locs, self.samples = [], {}, {}, []
        raw_samples, raw_funcs = [], []
        for f, t, v in fields(data):
            if f == 6:
                self.strings.append(v.decode("utf-8"))
            elif f == 2:
                raw_samples.append(v)
            elif f == 4:
                self._location(v)
            elif f == 5:
                raw_funcs.append(dict((g, w) for g, _, w in fields(v)))
        for fn in raw_funcs:
            self.funcs[fn[1]] = (self.strings[fn.get(2, 0)], self.strings[fn.get(4, 0)])
        for v in raw_samples:
            self.samples.append(self._sample(v))

    def _location(self, v):
        loc = {"lines": [], "lang": None}
        for g, _, w in fields(v):
            if g == 1:
                loc["id"] = w
            elif g == 4:
                ln = dict((h, x) for h, _, x in fields(w))
                loc["lines"].append((ln.get(1, 0), ln.get(2, 0)))
            elif g == LOCATION_LANG:
                loc["lang"] = w
        self.locs[loc["id"]] = loc

    def _sample(self, v):
        ids, vals, labels = [], [], {}
        for g, t, w in fields(v):
            if g == 1:
                ids += _packed(t, w)
            elif g == 2:
                vals += _packed(t, w)
            elif g == 3:
                lab = dict((h, x) for h, _, x in fields(w))
                labels[lab.get(1, 0)] = lab.get(2, 0)
        # label keys and string values are string indices until the table is complete
        return ids, vals, labels

    def label(self, sample, key):
        """The string value of label KEY of SAMPLE, or None."""
        for k, v in sample[2].items():
            if self.strings[k] == key:
                return self.strings[v]
        return None

    def lang(self, loc):
        n = loc["lang"]
        return LANGS[n] if n is not None and n < len(LANGS) else n

    def frames(self, sample):
        """(name, file, line, lang) of every frame of SAMPLE, leaf first."""
        return [self.funcs[fid] + (line, self.lang(self.locs[lid]))
                for lid in sample[0] for fid, line in self.locs[lid]["lines"]]


def read(path):
    return Profile(gzip.open(path).read())
